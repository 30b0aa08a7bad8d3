"""Does a synthetic run's memory estimate bound what training takes?  Each config trains three steps and
takes a snapshot in a fresh interpreter, whose peak RSS of the training itself is measured (Linux's
VmHWM, reset to the current RSS with clear_refs "5" once torch is imported, so the import's own peak
does not hide the run's allocations), and set beside ``engine.service.kinds.synthetic.budget.estimate``:
the estimate (with its ×SAFETY margin) must not be below the peak, and should not refuse runs that fit
(more than 4 × SAFETY the peak).

    .venv/bin/python -m bench.memory_estimate          # prints JSON (bench.run_all keeps it)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine.core.config import RunConfig
from engine.service.budget import SAFETY
from engine.service.kinds.synthetic.budget import estimate

ROOT = Path(__file__).resolve().parents[1]
CHILD = """
import json, re, sys
from engine.core.config import RunConfig
from engine.core.train import Trainer

def kb(field):
    return int(re.search(field + r":\\s+(\\d+)", open("/proc/self/status").read()).group(1))

cfg = RunConfig.from_json(sys.argv[1])
open("/proc/self/clear_refs", "w").write("5")
before = kb("VmRSS")
tr = Trainer(cfg); tr.advance(3); tr.snapshot()
print(json.dumps((kb("VmHWM") - before) / 1024))
"""
CASES: dict[str, dict[str, Any]] = {
    "40 replicas, 20 classes": {
        "data": {"num_last": 10, "num_next_per_last": 2},
        "replicas": {"seeds": list(range(40))},
    },
    "400 distinct tokens per class, batch 256": {
        "data": {"num_last": 4, "num_next_per_last": 2, "num_distinct_per_next": 400},
        "optim": {"batch": 256},
        "replicas": {"seeds": [1, 2, 3, 4]},
    },
    "the decoder dominates (M ≈ 2,000, momentum)": {
        "data": {"num_last": 10, "num_next_per_last": 2, "num_distinct_per_next": 99},
        "replicas": {"seeds": [1, 2, 3]},
    },
    "Adam (two state buffers)": {
        "data": {"num_last": 10, "num_next_per_last": 2, "num_distinct_per_next": 99},
        "optim": {"method": "adam"},
        "replicas": {"seeds": [1, 2]},
    },
}


def peak_mb(cfg: RunConfig) -> float:
    """The peak RSS, MiB, of training ``cfg`` three steps and a snapshot, in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD, cfg.to_json(indent=None)], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(json.loads(out.stdout.strip().splitlines()[-1]))


def main() -> dict[str, Any]:
    rows = []
    for label, over in CASES.items():
        cfg = RunConfig.from_dict(over)
        measured, est = peak_mb(cfg), estimate(cfg).total_mb
        rows.append(
            {
                "case": label,
                "measured_peak_mb": round(measured, 1),
                "estimate_mb": round(est, 1),
                "estimate_over_measured": round(est / measured, 2),
                "bounds": measured <= est,
                "not_too_cautious": est <= 4 * SAFETY * measured,
            }
        )
    res = {"safety": SAFETY, "cases": rows, "within_bounds": all(r["bounds"] and r["not_too_cautious"] for r in rows)}
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
