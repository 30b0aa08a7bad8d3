#!/usr/bin/env bash
# The GPU check (../shared/gpu-notes.md), one script for a lent GPU machine: the card and versions, the CUDA
# tests, the step, sweep and text speed benches on the device beside their CPU figures from the same run,
# and one short real-text run on the device.  Two files go to $OUT: gpu_check.json (a summary, and every
# bench's own JSON under "benches") and gpu_check.log.  Sized to end within 8 minutes on one GPU and 16 cores.
#
#   scripts/gpu_check.sh                  # on the GPU machine: --device cuda, $OUT set by the device tool
#   scripts/gpu_check.sh --device cpu --tiny    # here (tests/test_gpu_check.py): the same steps, tiny sizes
#
# The GPU machine has Python 3.12 and torch but not pydantic, plotly, cachetools or pythonbible: where .whl/
# holds them (scripts/gpu_wheels.sh downloads them here; the device tool carries .whl), they are installed
# into /tmp/site first, where the interpreter lacks them.  PYTHON picks the interpreter (default: .venv/bin/python where there is one, else python3).
set -euo pipefail
cd "$(dirname "$0")/.."
device=cuda tiny=0
while [ $# -gt 0 ]; do
  case $1 in
    --device) device=$2; shift 2 ;;
    --tiny) tiny=1; shift ;;
    *) echo "usage: $0 [--device cuda|cpu] [--tiny]" >&2; exit 2 ;;
  esac
done
case $device in cuda|cpu) ;; *) echo "--device $device: allowed cuda or cpu" >&2; exit 2 ;; esac
OUT=${OUT:-test-artifacts/gpu-check}
mkdir -p "$OUT"
work=$(mktemp -d)  # the benches' own files; $OUT keeps two (the device tool brings back at most 8)
trap 'rm -rf "$work"' EXIT
exec > >(tee "$OUT/gpu_check.log") 2>&1
PY=${PYTHON:-python3}
[ -z "${PYTHON:-}" ] && [ -x .venv/bin/python ] && PY=.venv/bin/python
if ! "$PY" -c "import pydantic, plotly, cachetools, pythonbible" 2>/dev/null && compgen -G ".whl/*.whl" >/dev/null; then
  "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
devices=("$device"); [ "$device" = cuda ] && devices=(cuda cpu)  # the CPU figures beside, from the same machine
if [ "$tiny" = 1 ]; then
  step=(--panels syn-medium-1 --repeats 1)  # tiny: the same steps, each at its least
  sweep=(--panels syn-medium-1 --sample 1 --cli-repeats 0 --no-reference-panel)
  text=(--steps 2 --repeats 1 --live-steps 10 --vocab-size 2000 --no-memory)
  text_run=(--set optim.steps=10 --set data.vocab_size=2000)
else
  step=(--repeats 5)
  sweep=(--sample 2 --cli-repeats 1 --no-reference-panel)
  text=(--steps 10 --repeats 3 --live-steps 300)
  text_run=(--set optim.steps=300)
fi
started=$(date +%s)
section() { echo "== $1 ($(( $(date +%s) - started )) s)"; }

section "the card and the versions"
if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; fi
"$PY" - "$work/versions.json" <<'EOF'
import json, platform, sys
import numpy, torch
card = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
info = {"python": platform.python_version(), "torch": torch.__version__, "cuda": torch.version.cuda,
        "numpy": numpy.__version__, "card": card, "cpus": __import__("os").cpu_count()}
print(json.dumps(info))
open(sys.argv[1], "w").write(json.dumps(info, indent=1) + "\n")
EOF

section "the CUDA tests (tests/core/test_device.py)"
# on the GPU the CUDA test must run, not skip: -rs names any skip, and a skip there fails the check
"$PY" -m pytest -q -p no:cacheprovider -rs tests/core/test_device.py | tee "$work/cuda_tests.txt"
if [ "$device" = cuda ] && grep -q "SKIPPED" "$work/cuda_tests.txt"; then echo "a CUDA test skipped on the GPU" >&2; exit 1; fi

for dev in "${devices[@]}"; do
  section "step speed, --device $dev"
  "$PY" -m bench.step_speed --device "$dev" "${step[@]}" --json "$work/step_$dev.json" >/dev/null
  section "sweep speed, --device $dev"
  "$PY" -m bench.sweep_speed --device "$dev" "${sweep[@]}" --json "$work/sweep_$dev.json" >/dev/null
  section "text speed, --device $dev"
  "$PY" -m bench.text_speed --device "$dev" "${text[@]}" --json "$work/text_$dev.json" >/dev/null
done

section "a short real-text run of the paper preset, --device $device"
data=$work/data
t0=$(date +%s.%N)
"$PY" -m scansnap --data-dir "$data" run --preset text-fig7-1layer "${text_run[@]}" --set "model.device=$device" --quiet
t1=$(date +%s.%N)

section "summary"
"$PY" - "$work" "$OUT" "$t0" "$t1" "${devices[@]}" <<'EOF'
import json, sys
from pathlib import Path
from scansnap.service.store import RunStore

work, out, t0, t1, devices = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), sys.argv[5:]
def load(name):
    return json.loads((work / name).read_text())
with RunStore(work / "data") as store:
    run = store.list_runs(1)[0]
    steps = store.steps(run["id"])
text_run = {"status": run["status"], "device": run["device"], "last_step": run["last_step"],
            "snapshots": len(steps), "wall_s": round(t1 - t0, 1)}
summary = {"versions": load("versions.json"), "text_run": text_run, "by_device": {}, "benches": {}}
for dev in devices:
    step, sweep, text = load(f"step_{dev}.json"), load(f"sweep_{dev}.json"), load(f"text_{dev}.json")
    panel = step["panels"][-1]
    summary["by_device"][dev] = {
        "step_device": step["device"],
        f"{panel['panel']} R=160 new ms per replica-step": panel["R160"]["new_ms_per_replica_step"],
        "sweep new_train_total_s": sweep["new_train_total_s"],
        "sweep panels": [p["panel"] for p in sweep["panels"]],
        "text ms per step (paper 1-layer)": text["ours_ms_per_step"],
        "text live steps/s": text["live"]["live_steps_per_s"],
    }
    summary["benches"] |= {f"step_{dev}": step, f"sweep_{dev}": sweep, f"text_{dev}": text}
print(json.dumps(summary, indent=1))
(out / "gpu_check.json").write_text(json.dumps(summary, indent=1) + "\n")
assert run["status"] == "finished" and len(steps) > 1, text_run
EOF
section "done"
