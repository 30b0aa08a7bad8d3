#!/usr/bin/env bash
# Start this machine as a node of the lab's Ray cluster, from this checkout (same commit on every node).
# Usage: scripts/ray_start.sh --head            # the first machine (prints the address to join; its Ray Client
#                                               # server, ray://HEAD_IP:10001, serves machines outside the network)
#        scripts/ray_start.sh HEAD_IP:6379      # every other machine (a GPU machine too: Ray finds its GPUs)
# Extra arguments go to `ray start` (e.g. --num-cpus=8).  Stop with: .venv/bin/ray stop
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup_venv.sh cluster
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" RAY_USAGE_STATS_ENABLED=0
unset PYTHONDONTWRITEBYTECODE  # the node's workers write the bytecode of what they import, once, not each start
if [ "${1:-}" = "--head" ]; then
  shift
  exec .venv/bin/ray start --head --port=6379 --ray-client-server-port=10001 --include-dashboard=false "$@"
fi
[ $# -ge 1 ] || { echo "usage: $0 --head | $0 HEAD_IP:6379 [ray start options]" >&2; exit 2; }
address=$1
shift
exec .venv/bin/ray start --address="$address" "$@"
