"""Do the queue's estimates hold?  Each config, at or near a limit a visitor can reach, is trained through a
job manager with every slot busy (as many copies at once as slots, as a hall trains them), and three things
are set beside the estimates the server admits it with:

* time: each copy's slot time (its start to its end) against ``run_kinds.run_seconds``;
* memory: the peak RSS (Linux's VmHWM) of each worker process that trains a copy, against the budget's
  ``total_mb`` (its parts × SAFETY, plus the worker process itself);
* disk: the store's files (database and WAL) at their largest while the copies train, their growth per
  copy, against ``run_kinds.run_disk_bytes``; the WAL's largest size is reported beside it.

A grid is trained as one (``submit_grid``): its cells' slot times summed against the sum of their estimates.
Every ratio measured / estimate must stay at or under 1.

    .venv/bin/python -m bench.estimates [--cases NAME ...]      # prints JSON (bench.run_all keeps it)
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

from scansnap.paper.presets import get_preset
from scansnap.service.jobs import JobManager
from scansnap.service.run_kinds import check_run, run_disk_bytes, run_seconds
from scansnap.service.store import DB_NAME, RunStore

COMPACT = {"data.num_distinct_per_next": 99_990, "data.layout": "compact"}  # the export finding's run
TINY_TEXT = {"model.d_model": 4, "model.d_ff": 4, "optim.batch": 1, "optim.bptt": 4, "data.vocab_size": 50}
CASES: dict[str, tuple[str, str, dict[str, Any]]] = {  # name: (kind, preset, overrides)
    "syn-small, 100 steps (the Lab's default)": ("synthetic", "syn-small", {}),
    "syn-small, 20,000 steps": ("synthetic", "syn-small", {"optim.steps": 20_000}),
    "a large paper-layout decoder (M ≈ 4,000), 200 steps": (
        "synthetic",
        "syn-small",
        {"data.num_last": 2, "data.num_distinct_per_next": 2000, "optim.steps": 200},
    ),
    "compact, 99,990 distinct tokens a class, 40 snapshots": (
        "synthetic",
        "syn-small",
        COMPACT | {"optim.steps": 40, "snapshots.linear_every": 1},
    ),
    "syn-medium-1 (160 replicas)": ("synthetic", "syn-medium-1", {}),
    "theorem4, 5,000 steps": ("synthetic", "theorem4", {"optim.steps": 5000}),
    "text-fig7-1layer-live, 60 steps": ("text", "text-fig7-1layer-live", {"optim.steps": 60}),
    "a tiny text model, 20,000 steps, a snapshot every 50": (
        "text",
        "text-fig7-1layer-live",
        TINY_TEXT | {"optim.steps": 20_000, "snapshots.linear_every": 50, "snapshots.max_count": 2000},
    ),
}
GRIDS: dict[str, tuple[str, str, list[dict[str, Any]]]] = {  # name: (kind, preset, each cell's overrides)
    "a grid of 4 syn-small cells, 2,000 steps each": (
        "synthetic",
        "syn-small",
        [{"optim.eta_y": lr, "optim.steps": 2000} for lr in (0.5, 1.0, 2.0, 4.0)],
    ),
    "a grid of 3 tiny text models, 5,000 steps and a snapshot every 50 each": (  # the text grid finding's shape
        "text",
        "text-fig7-1layer-live",
        [TINY_TEXT | {"optim.lr_attention": a, "optim.steps": 5000, "snapshots.linear_every": 50} for a in (1, 2, 5)],
    ),
}


class Sampler:
    """Every 50 ms: the peak RSS of each descendant process, the store's files' size and the WAL's."""

    def __init__(self, store: RunStore):
        self.store, self.peaks, self.files, self.wal = store, {}, 0, 0
        self.base = _db_bytes(store)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        me, wal = psutil.Process(), self.store.data_dir / f"{DB_NAME}-wal"
        while not self._stop.wait(0.05):
            for child in me.children(recursive=True):
                try:
                    hwm = _hwm_kb(child.pid)
                except (OSError, StopIteration):  # gone, or a zombie
                    continue
                self.peaks[child.pid] = max(self.peaks.get(child.pid, 0), hwm)
            wal_bytes = wal.stat().st_size if wal.exists() else 0
            self.wal = max(self.wal, wal_bytes)
            self.files = max(self.files, (self.store.data_dir / DB_NAME).stat().st_size + wal_bytes)

    def __enter__(self) -> Sampler:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _db_bytes(store: RunStore) -> int:
    """The database file's size once the WAL is written into it."""
    store._conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return (store.data_dir / DB_NAME).stat().st_size


def _hwm_kb(pid: int) -> int:
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))


def config(kind: str, preset: str, over: dict[str, Any]) -> Any:
    base = get_preset(preset, kind).config
    return base.with_overrides(over) if over else base


def measure(m: JobManager, data: Path, cfgs: list[Any], grid: bool) -> dict[str, float]:
    """Train ``cfgs`` (one grid, or one run each), all at once; their longest (or, for a grid, summed) slot
    time, the largest new worker's peak RSS and the store's growth per run."""
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    with Sampler(m.store) as sampler:
        rids = m.submit_grid(cfgs, [None] * len(cfgs)) if grid else [m.submit(c) for c in cfgs]
        for rid in rids:
            status = m.wait(rid, timeout=3600)
            if status != "finished":
                raise RuntimeError(f"{rid}: {status} {m.status(rid).message}")
    times = [m.status(rid).elapsed_s for rid in rids]
    workers = [kb for pid, kb in sampler.peaks.items() if pid not in before]
    return {
        "seconds": sum(times) if grid else max(times),
        "peak_mb": max(workers, default=0) / 1024,
        "disk_mb": max(sampler.files - sampler.base, 0) / len(rids) / 2**20,
        "wal_mb": sampler.wal / 2**20,
    }


def estimates(data: Path, cfgs: list[Any], grid: bool) -> dict[str, float]:
    """What the server admits ``cfgs`` with (asked before they train: a text run's corpus is measured
    in a process of its own, which must not count as a training worker)."""
    seconds = [run_seconds(data, c) for c in cfgs]
    return {
        "seconds": sum(seconds) if grid else max(seconds),
        "peak_mb": max(check_run(data, c).total_mb for c in cfgs),
        "disk_mb": max(run_disk_bytes(data, c) for c in cfgs) / 2**20,
    }


def row(name: str, cfgs: list[Any], est: dict[str, float], got: dict[str, float], grid: bool) -> dict[str, Any]:
    out: dict[str, Any] = {"case": name, "copies": 1 if grid else len(cfgs)}
    for key in est:
        out[f"{key}_estimate"], out[f"{key}_measured"] = round(est[key], 2), round(got[key], 2)
        out[f"{key}_ratio"] = round(got[key] / est[key], 3) if est[key] else None
    out["wal_mb"] = round(got["wal_mb"], 1)
    return out


def main() -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", nargs="*", help="substrings of the case (or grid) names to run (default: all)")
    args = ap.parse_args()
    chosen = {k: v for k, v in CASES.items() if not args.cases or any(c in k for c in args.cases)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp)
        m = JobManager(RunStore(data))  # slots = cores, one torch thread each
        warm = get_preset("syn-small").config.with_overrides({"optim.steps": 2})
        measure(m, data, [warm] * m.max_concurrent, grid=False)  # the fork server's start, not a run's
        for name, (kind, preset, over) in chosen.items():
            cfgs = [config(kind, preset, over)] * m.max_concurrent
            est = estimates(data, cfgs, grid=False)
            rows.append(row(name, cfgs, est, measure(m, data, cfgs, grid=False), grid=False))
            print(json.dumps(rows[-1]), flush=True)
        for name, (kind, preset, cells) in GRIDS.items():
            if args.cases and not any(c in name for c in args.cases):
                continue
            cfgs = [config(kind, preset, c) for c in cells]
            est = estimates(data, cfgs, grid=True)
            rows.append(row(name, cfgs, est, measure(m, data, cfgs, grid=True), grid=True))
            print(json.dumps(rows[-1]), flush=True)
        m.shutdown()
    ratios = [r[k] for r in rows for k in r if k.endswith("_ratio") and r[k] is not None]
    return {"cores": os.cpu_count(), "cases": rows, "max_ratio": max(ratios, default=None)}


if __name__ == "__main__":
    t0 = time.monotonic()
    out = main()
    out["wall_s"] = round(time.monotonic() - t0, 1)
    print("{")
    print(json.dumps(out, indent=2)[2:])
