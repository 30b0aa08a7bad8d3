"""Wall time of ``python -m scansnap reproduce`` (issue 4 §3), quick and full, each in a fresh
subprocess exactly as a reviewer runs it (interpreter start and imports included).

Targets: the full Fig. 6 sweep (640 runs) ≤ 2 minutes, ``--quick`` (everything it runs) ≤ 30 s.
Per-item times and verdict counts come from each run's ``verdicts.json``.  Prints JSON.

The full run leaves out the real-text items (``fig7``, ``joma-real``): at the paper's settings
they take about 1.5 hours of one CPU core (BENCHMARKS.md, "Real text"); ``--quick`` runs them all.

    PYTHONPATH=. .venv/bin/python -m bench.reproduce_speed [--device cpu|auto]

``reproduce`` trains on the default device (CUDA when present); ``--device cpu`` hides the GPUs from it
(``CUDA_VISIBLE_DEVICES=``).  The device is recorded.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from scansnap.core.device import describe_device, resolve_device
from scansnap.paper.items.catalog import ITEMS

ROOT = Path(__file__).resolve().parents[1]


def reproduce(quick: bool, device: str) -> dict[str, Any]:
    env = {**os.environ, **({"CUDA_VISIBLE_DEVICES": ""} if device == "cpu" else {})}
    with tempfile.TemporaryDirectory(prefix="repro-speed-") as out:
        only = [] if quick else ["--only", *(n for n, spec in ITEMS.items() if not spec.corpus)]
        cmd = [sys.executable, "-m", "scansnap", "reproduce", "--out", out] + (["--quick"] if quick else only)
        t0 = time.monotonic()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
        wall = time.monotonic() - t0
        doc = json.loads((Path(out) / "verdicts.json").read_text())
    return {
        "mode": "quick" if quick else "full",
        "exit_code": proc.returncode,
        "wall_s": round(wall, 1),
        "compute_s": doc["wall_s"],
        "items_s": {i["name"]: i["wall_s"] for i in doc["items"]},
        "verdicts": doc["n_verdicts"],
        "failed": doc["n_failed"],
        "not_applicable": sum(v["status"] == "n/a" for v in doc["verdicts"]),
        "failed_claims": [v["claim"] for v in doc["verdicts"] if v["status"] == "fail"],
    }


def main() -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto", choices=("auto", "cpu"))
    args = ap.parse_args()
    load_before = os.getloadavg()
    runs = [reproduce(quick=True, device=args.device), reproduce(quick=False, device=args.device)]
    quick, full = runs
    res = {
        "device": "cpu" if args.device == "cpu" else describe_device(resolve_device("auto")),
        "load_before": load_before,
        "load_after": os.getloadavg(),
        "runs": runs,
        "quick_total_s": quick["wall_s"],
        "full_total_s": full["wall_s"],
        "fig6_full_s": full["items_s"]["fig6"],
        "fig6_quick_s": quick["items_s"]["fig6"],
        "targets": {
            "fig6 full (640 runs) <= 120 s": full["items_s"]["fig6"] <= 120,
            "quick, whole command <= 30 s": quick["wall_s"] <= 30,
            "every verdict passes": not quick["failed"] and not full["failed"],
        },
    }
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
