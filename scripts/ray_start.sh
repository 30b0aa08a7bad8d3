#!/usr/bin/env bash
# Start this machine as a node of the lab's Ray cluster. A node needs the lab's dependencies (this checkout's
# .venv with requirements-cluster.txt, which this script installs), not its code: the server ships the scansnap
# package to every node when it joins (scansnap/service/cluster.py, runtime_env).
# Usage: scripts/ray_start.sh --head            # the first machine (prints the address to join; its Ray Client
#                                               # server, ray://HEAD_IP:10001, serves machines outside the network)
#        scripts/ray_start.sh HEAD_IP:6379      # every other machine (a GPU machine too: Ray finds its GPUs)
# Extra arguments go to `ray start` (e.g. --num-cpus=8).  Stop with: .venv/bin/ray stop
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh cluster
export RAY_USAGE_STATS_ENABLED=0  # and nothing of this checkout on the path: the workers import what the server ships
unset PYTHONDONTWRITEBYTECODE  # the node's workers write the bytecode of what they import, once, not each start
if [ "${1:-}" = "--head" ]; then
  shift
  exec .venv/bin/ray start --head --port=6379 --ray-client-server-port=10001 --include-dashboard=false "$@"
fi
[ $# -ge 1 ] || { echo "usage: $0 --head | $0 HEAD_IP:6379 [ray start options]" >&2; exit 2; }
address=$1
shift
exec .venv/bin/ray start --address="$address" "$@"
