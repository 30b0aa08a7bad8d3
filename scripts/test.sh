#!/usr/bin/env bash
# Everything CI gates on: lint, type check of engine/, then the whole pytest suite (nothing skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
echo "== ruff"  # one command per line: under set -e a failure inside an && list would not stop the script
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy engine/"; .venv/bin/mypy engine
echo "== lint-imports"; .venv/bin/lint-imports --no-cache
echo "== hadolint Dockerfile"; .venv/bin/hadolint Dockerfile
# The suite in two streams at once (tests/conftest.py: stream_of).  The live stream (browsers, servers,
# workers, Ray: waits with bounds on time) at normal priority; the compute stream (numerics, the paper's
# claims, AppTest pages, the command line: no bound on time) beside it at the lowest priority and with one
# torch thread (two spin-wait on a shared core), on the CPU the live stream leaves idle.  Its report follows
# the live stream's.  `.venv/bin/python -m pytest` alone runs every test in one process.
compute_log=$(mktemp)
trap 'kill "$compute" 2>/dev/null || true; cat "$compute_log"; rm -f "$compute_log"' EXIT
SCANSNAP_TEST_STREAM=compute OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 nice -n 19 \
  .venv/bin/python -m pytest -p no:cacheprovider --durations=15 "$@" >"$compute_log" 2>&1 &
compute=$!
echo "== pytest, live stream (the compute stream's report follows it)"
live_rc=0; SCANSNAP_TEST_STREAM=live .venv/bin/python -m pytest --durations=25 "$@" || live_rc=$?
compute_rc=0; wait "$compute" || compute_rc=$?
echo "== pytest, compute stream (ran beside the live stream)"
ok() { [ "$1" = 0 ] || [ "$1" = 5 ]; }  # 5: the paths given hold no test of this stream
ok "$live_rc" && ok "$compute_rc" && [ "$live_rc$compute_rc" != 55 ]
