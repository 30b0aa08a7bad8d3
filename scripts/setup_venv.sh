#!/usr/bin/env bash
# Create .venv with Python 3.11 and install the pinned requirements when they changed.
# Usage: setup_venv.sh runtime|cluster|dev
set -euo pipefail
cd "$(dirname "$0")/.."
kind=${1:-runtime}
req=requirements.txt
[ "$kind" = dev ] && req=requirements-dev.txt
[ "$kind" = cluster ] && req=requirements-cluster.txt
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -c 'import sys; assert sys.version_info[:2] == (3, 11), "Python 3.11 is required, found " + sys.version' 
  "$PYTHON" -m venv .venv
fi
stamp=".venv/.installed-$kind-$(cat requirements*.txt | sha1sum | cut -c1-12)"
if [ ! -f "$stamp" ]; then
  echo "Installing pinned $req into .venv ..."
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
  # no bytecode now: Python writes that of each module at its first import (make unexports PYTHONDONTWRITEBYTECODE)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile -r "$req"
  touch "$stamp"
fi
