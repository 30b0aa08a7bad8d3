"""Peak memory of a run's export (the zip the Runs page's "Parquet (zip)" and "CSV (zip)" build) against the
run's stored size, side by side with another commit's export (the whole run in one frame, the zip in memory):

    .venv/bin/python -m bench.export_memory --against 2ffa847 [--fmt parquet]

Each export runs in a fresh interpreter that opens the store, reads the run's row (the baseline) and exports
it; its peak RSS (``ru_maxrss``) over the baseline is the export's memory.  The runs are synthetic runs of the
compact layout in the trainer's arrays and metrics (every snapshot ``z``, ``c`` and 16 metrics per replica and
class), filled with random numbers: the worst case for compression, so the zips are the largest such runs make
(:func:`make_run`; the verdicts judge random data, which costs the same).  ``--against REV`` runs that
commit's export from a temporary ``git worktree`` with this checkout's packages.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import numpy as np

from bench.page_load import worktree
from scansnap.core.scalar_columns import ScalarBlocks, per_class
from scansnap.core.schedule import TOPK, full_snapshots
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import build_problem, run_statics
from scansnap.paper.presets import get_preset
from scansnap.service.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
METRICS = 16  # per snapshot, each a class mean and every class's value per replica (as the trainer writes them)
SIZES = {  # name: (distinct tokens per class, snapshots): 2 classes, one replica
    "small": (2_000, 51),
    "medium": (20_000, 101),
    "finding": (99_990, 201),  # the security review's run: data.num_distinct_per_next=99990, 201 snapshots
}
CHILD = """
import json, resource, sys, time
from pathlib import Path
from scansnap.service import export
from scansnap.service.store import RunStore
data, rid, fmt, out = sys.argv[1:5]
store = RunStore(data)
store.get_run(rid)
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
if hasattr(export, "zip_export"):
    size = export.zip_export(store, rid, fmt, out).stat().st_size
else:
    size = Path(out).write_bytes(export.zipped_export(store, rid, fmt))
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"baseline_mb": base / 1024, "peak_mb": peak / 1024, "zip_bytes": size, "wall_s": wall}))
"""


def run_config(distinct: int, replicas: int = 1) -> RunConfig:
    """syn-small with ``distinct`` distinct tokens per class, the compact layout and ``replicas`` seeds."""
    base = get_preset("syn-small").config
    over = {"data.num_distinct_per_next": str(distinct), "data.layout": "compact"}
    return base.with_overrides(over).with_overrides({"replicas.seeds": list(range(1, replicas + 1))})


def make_run(data_dir: str | Path, cfg: RunConfig, snapshots: int, seed: int = 0) -> str:
    """A finished run of ``cfg``'s statics with ``snapshots`` snapshots of random arrays in the layout its
    trainer would store (full z and c, or the top-k entries) and :data:`METRICS` random metrics."""
    rng = np.random.default_rng(seed)
    problem = build_problem(cfg.data)
    R, Q, K, M = cfg.n_replicas, problem.Q, problem.K, problem.M_ctx
    statics = run_statics(cfg.lr_pairs, list(cfg.replicas.seeds), problem)
    with RunStore(data_dir) as store:
        rid = store.create_run("export bench", cfg.to_json(), "cpu", {}, statics=statics, status="finished")
        for step in range(snapshots):  # the steps only label the snapshots
            store.append_snapshot(rid, int(step), _arrays(rng, R, Q, K, M), _metrics(rng, R, K))
    return rid


def _arrays(rng: np.random.Generator, R: int, Q: int, K: int, M: int) -> dict[str, np.ndarray]:
    if full_snapshots(R, Q, K, M):
        return {"z": rng.standard_normal((R, Q, M), np.float32), "c": rng.random((R, K, M), np.float32)}
    k = min(TOPK, M)
    idx = np.stack([rng.choice(M, k, replace=False) for _ in range(R * K)]).reshape(R, K, k).astype(np.int32)
    return {"topk_idx": idx, "topk_c": rng.random((R, K, k), np.float32), "topk_z": rng.random((R, K, k), np.float32)}


def _metrics(rng: np.random.Generator, R: int, K: int) -> ScalarBlocks:
    names = ["entropy_distinct", "share_common_down", "share_distinct_up", "dz_common", "dz_common_theory"]
    names += [f"metric_{i}" for i in range(METRICS - len(names))]
    return {name: per_class(rng.random((R, K)), keep_classes=True) for name in names}


def export_once(root: Path, data_dir: Path, rid: str, fmt: str, out: Path) -> dict[str, float]:
    """One export in a fresh interpreter running the code under ``root``: its memory, zip size and time."""
    env = {**os.environ, "PYTHONPATH": str(root), "OMP_NUM_THREADS": "1"}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(data_dir), rid, fmt, str(out)],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    got["export_mb"] = got["peak_mb"] - got["baseline_mb"]
    return got


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", help="the commit whose export to measure beside this checkout's")
    ap.add_argument("--fmt", choices=["parquet", "csv"], default="parquet")
    ap.add_argument("--sizes", nargs="+", choices=list(SIZES), default=list(SIZES))
    args = ap.parse_args()
    from scansnap.service.export import export_size

    results = []
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        roots = {"this checkout": ROOT} | ({args.against: worktree(stack, args.against, tmp)} if args.against else {})
        for name in args.sizes:
            distinct, snapshots = SIZES[name]
            data = tmp / f"data-{name}"
            t0 = time.perf_counter()
            rid = make_run(data, run_config(distinct), snapshots)
            with RunStore(data) as store:
                stored, estimate = store.size_bytes(rid), export_size(store, rid, args.fmt)
            row = {
                "run": name,
                "distinct_per_class": distinct,
                "snapshots": snapshots,
                "stored_mb": stored / 2**20,
                "estimate_mb": estimate / 2**20,
                "made_s": time.perf_counter() - t0,
            }
            for label, root in roots.items():
                got = export_once(root, data, rid, args.fmt, tmp / f"{name}.zip")
                row[label] = {k: round(v, 3) for k, v in got.items()}
            results.append({k: round(v, 3) if isinstance(v, float) else v for k, v in row.items()})
            print(json.dumps(results[-1]), file=sys.stderr)
    print(json.dumps({"fmt": args.fmt, "against": args.against, "runs": results}, indent=1))


if __name__ == "__main__":
    main()
