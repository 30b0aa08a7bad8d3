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
echo "== pytest"; .venv/bin/python -m pytest --durations=25 "$@"
