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
  # pip compiles every installed module to bytecode one file after another (51 of 84 s here, 2 cores);
  # compileall does the same on every core (33 s). Compiled at install, not at first import: a shell with
  # PYTHONDONTWRITEBYTECODE set (this machine's) would otherwise compile torch anew in every process.
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --no-compile -r "$req"
  # quiet about the few files in packages that are not Python 3.11 (templates, py2 examples): pip skips them too
  .venv/bin/python -m compileall -q -j 0 .venv/lib/python3.11/site-packages >/dev/null || true
  touch "$stamp"
fi
