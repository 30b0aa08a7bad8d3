"""Submit → first stored snapshot of a small real-text run, with the fork server's preload as shipped and
without ``torch._dynamo`` in it (torch.optim's first optimizer imports it in the worker then), side by
side: each variant in a fresh subprocess, one warm-up run then ``--repeats`` timed runs.  Prints JSON.

    PYTHONPATH=. .venv/bin/python -m bench.worker_start [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SMALL_TEXT = {  # the browser tests' small Fig. 7 run: 2,000 words, batch 10, 5 steps
    "data.vocab_size": 2000,
    "optim.batch": 10,
    "probe.val_windows": 4,
    "snapshots.log_count": 0,
    "optim.steps": 5,
    "model.device": "cpu",
}


def first_snapshots(without_dynamo: bool, repeats: int) -> list[float]:
    """Seconds from submit to the first stored snapshot, ``repeats`` runs after one warm-up (this process)."""
    from scansnap.service import worker

    if without_dynamo:
        worker.PRELOAD = [m for m in worker.PRELOAD if m != "torch._dynamo"]
    from scansnap.paper.presets import get_preset
    from scansnap.service.jobs import JobManager
    from scansnap.service.store import RunStore

    cfg = get_preset("text-fig7-1layer", "text").config.with_overrides(SMALL_TEXT)
    with tempfile.TemporaryDirectory() as d:
        store = RunStore(d)
        manager = JobManager(store, max_concurrent=1)
        times = []
        try:
            for i in range(repeats + 1):
                t0 = time.perf_counter()
                rid = manager.submit(cfg)
                while not store.steps(rid):
                    time.sleep(0.005)
                if i:
                    times.append(time.perf_counter() - t0)
                manager.wait(rid, 120)
        finally:
            manager.shutdown()
            store.close()
    return times


def variant(without_dynamo: bool, repeats: int) -> list[float]:
    args = [sys.executable, "-m", "bench.worker_start", "--child", "--repeats", str(repeats)]
    out = subprocess.run(
        args + (["--without-dynamo"] if without_dynamo else []), cwd=ROOT, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--without-dynamo", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(first_snapshots(args.without_dynamo, args.repeats)))
        return
    shipped, without = variant(False, args.repeats), variant(True, args.repeats)
    med = statistics.median
    print(
        json.dumps(
            {
                "first_snapshot_s": {"preload_as_shipped": shipped, "without_torch_dynamo": without},
                "median_s": {"preload_as_shipped": med(shipped), "without_torch_dynamo": med(without)},
                "ratio_shipped_over_without": med(shipped) / med(without),
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
