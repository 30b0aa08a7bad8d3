"""``python -m scansnap sweep``: a grid of runs over any config keys × seeds, each cell a stored run,
then a summary of every cell's final metrics (DIR/summary.csv, DIR/summary.parquet) and a page
comparing them (DIR/summary.html).  Syntax and batching: :mod:`scansnap.service.grid`; where the cells
train: :mod:`scansnap.service.executors` (``--jobs N`` worker processes on this machine, or
``--cluster ADDRESS``: a Ray cluster).

    python -m scansnap sweep --preset text-seq-32-live --grid model.positional=none,sinusoidal,learned \\
        --seeds 1-3 --out sweep-pe
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from scansnap.core.config import ConfigError


def base_config(preset: str) -> Any:
    """A preset of any kind by name (the synthetic shelf first, then the text shelf)."""
    from scansnap.paper.presets import SHELVES, get_preset, load_presets

    for kind in SHELVES:
        if preset in load_presets(kind):
            return get_preset(preset, kind).config
    names = ", ".join(n for kind in SHELVES for n in load_presets(kind))
    raise ConfigError(f"unknown preset {preset!r}; available: {names}")


def plan(base: Any, axes: list[Any], seeds: tuple[int, ...]) -> list[tuple[Any, list[Any]]]:
    """(config, the cells it trains) per run: one run of replicas for a synthetic rate grid, else one per cell."""
    from scansnap.service import grid

    cells = grid.cells(axes, seeds)
    batched = grid.as_replicas(base, cells)
    if batched is not None:
        return [(batched, cells)]
    return [(grid.cell_config(base, c), [c]) for c in cells]


def run_sweep(args: argparse.Namespace, sets: dict[str, str]) -> int:
    """The ``sweep`` command (``sets``: its ``--set`` overrides, parsed by :mod:`scansnap.cli`)."""
    import pandas as pd

    from scansnap.service import grid
    from scansnap.service.executors import executor
    from scansnap.service.run_kinds import check_run, create_run
    from scansnap.service.store import RunStore

    base = base_config(args.preset).with_overrides(sets)
    axes = [grid.parse_axis(g) for g in args.grid]
    seeds = grid.parse_seeds(args.seeds)
    runs = plan(base, axes, seeds)
    store = RunStore(args.data_dir)
    data_dir = str(store.data_dir.resolve())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    names = [f"{args.preset} · " + (c[0].label() if len(c) == 1 else f"{len(c)} cells") for _, c in runs]
    for cfg, _ in runs:  # all within the limits before any is stored: a refused grid leaves no run behind
        check_run(data_dir, cfg)
    try:
        pool = executor(args.cluster, args.jobs)  # a cluster it cannot reach: nothing stored either
    except ValueError as e:
        raise ConfigError(str(e)) from None
    run_ids = [create_run(store, cfg, names[i]) for i, (cfg, _) in enumerate(runs)]
    t0 = time.perf_counter()
    done: dict[int, tuple[str, str]] = {}
    try:
        for i, rid, status, message in pool.train_runs(data_dir, run_ids):
            done[i] = (rid, status)
            if not args.quiet:
                why = f": {message}" if message and status != "finished" else ""
                print(f"[{len(done)}/{len(runs)}] {names[i]}: {status}{why} ({rid})", file=sys.stderr)
    finally:
        pool.close()
    rows = summary_rows(store, runs, done)
    frame = pd.DataFrame(rows)  # one row per cell: its values, seed, run, status, final metrics
    frame.to_csv(out / "summary.csv", index=False)
    frame.to_parquet(out / "summary.parquet", index=False)
    title = (
        f"Sweep of {args.preset}: " + " × ".join(f"{a.key} ({len(a.values)})" for a in axes) + f" × seeds {args.seeds}"
    )
    (out / "summary.html").write_text(grid.summary_html(frame, title, axes), encoding="utf-8")
    store.close()
    if not args.quiet:
        wall = time.perf_counter() - t0
        print(f"{len(frame)} cells in {wall:.1f} s; wrote {out / 'summary.csv'}, summary.parquet, summary.html")
    failed = [r for r in rows if r["status"] != "finished"]
    return 0 if not failed else 3


def summary_rows(
    store: Any, runs: list[tuple[Any, list[Any]]], done: dict[int, tuple[str, str]]
) -> list[dict[str, Any]]:
    """One row per cell: its values, seed, run, status and final metrics (a batched run: the replica
    whose (η_Y, η_Z, seed) in the run's statics are the cell's)."""
    from scansnap.service import grid

    rows = []
    for i, (cfg, cells) in enumerate(runs):
        rid, status = done[i]
        finals = grid.final_metrics(store.scalars(rid))
        replica_of = grid.replica_index(store.statics(rid), cfg, cells) if len(cells) > 1 else [0]
        for cell, replica in zip(cells, replica_of, strict=True):
            mine = finals[finals["replica"] == replica].drop(columns="replica") if len(finals) else finals
            values = mine.iloc[0].to_dict() if len(mine) else {}
            rows.append({**cell.values, "seed": cell.seed, "run": rid, "replica": replica, "status": status, **values})
    return rows


def add_parser(sub: Any) -> argparse.ArgumentParser:
    s: argparse.ArgumentParser = sub.add_parser("sweep", help="a grid of runs over config keys × seeds, with a summary")
    s.add_argument("--preset", required=True, help="the base preset (python -m scansnap presets)")
    s.add_argument(
        "--grid",
        action="append",
        required=True,
        metavar="KEY=V1,V2,...",
        help="an axis: a dotted config key, its values (hydra multirun syntax); repeatable",
    )
    s.add_argument("--set", action="append", metavar="KEY=VALUE", help="a fixed override of the base preset")
    s.add_argument("--seeds", default="1", help="seeds, e.g. 1-3 or 1,5,9 (default 1)")
    s.add_argument("--jobs", type=int, default=None, help="worker processes (default: one per CPU core)")
    s.add_argument(
        "--cluster",
        metavar="ADDRESS",
        default=None,
        help="a Ray cluster to train on: its head's HOST:6379, ray://HOST:10001 (Ray Client) or auto "
        "(default: this machine)",
    )
    s.add_argument("--out", required=True, help="folder for summary.csv, summary.parquet, summary.html")
    s.add_argument("--quiet", action="store_true")
    return s
