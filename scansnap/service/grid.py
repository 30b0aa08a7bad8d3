"""Grids of runs: any config keys × seeds, each cell a stored run, and a summary of their final metrics.

``--grid KEY=V1,V2,...`` follows hydra multirun's syntax (the authors ran Fig. 6 as one): a dotted
config key, ``=``, its values separated by commas (each value as ``--set`` takes it: JSON text, or a
bare word); several axes (at most 8) make their Cartesian product, in the order given.  ``--seeds 1-3`` (or
``1,5,9``) repeats every cell at each seed.  A grid of the synthetic model over the learning rates
only (``optim.eta_y``, ``optim.eta_z``) trains as one run whose replicas are the cells (the Sweep
page's batching); any other grid trains one run per cell.  Where the cells run is the executor's
choice (:mod:`scansnap.service.executors`).  No torch here.
"""

from __future__ import annotations

import html
import itertools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from scansnap.core.config import ConfigError, get_dotted
from scansnap.service.run_kinds import kind_named, kind_of

MAX_CELLS = 1000
MAX_AXES = 8  # axes of one grid (its link, ``?axes=``, names at most this many: scansnap/ui/grid_form.py)
LR_KEYS = ("optim.eta_y", "optim.eta_z")  # the synthetic model's rates: batched as replicas of one run


@dataclass(frozen=True)
class Axis:
    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class Cell:
    """One point of the grid: a value per axis and a seed."""

    values: dict[str, str] = field(hash=False)
    seed: int

    def label(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values.items()) + f", seed {self.seed}"


def parse_axis(text: str) -> Axis:
    """``"optim.eta_y=0.1,1,10"`` → Axis; a bad one raises ConfigError saying what is allowed."""
    key, sep, values = text.partition("=")
    key, items = key.strip(), tuple(v.strip() for v in values.split(","))
    if not sep or not re.fullmatch(r"[a-z_]+(\.[a-z_0-9]+)+", key) or not all(items):
        raise ConfigError(
            f"--grid {text[:80]!r}: expected KEY=V1,V2,... with a dotted config key and no empty value "
            "(e.g. optim.eta_y=0.1,1,10 or model.n_layers=1,2)"
        )
    if len(set(items)) != len(items):
        raise ConfigError(f"--grid {key}: a value is repeated ({', '.join(items)})")
    return Axis(key, items)


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"1-3"`` → (1, 2, 3); ``"1,5,9"`` → (1, 5, 9); ConfigError otherwise."""
    seeds: list[int] = []
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            lo, _, hi = part.partition("-")
            seeds += range(int(lo), int(hi or lo) + 1)
    except ValueError:
        seeds = []
    if not seeds or any(s < 0 for s in seeds) or len(set(seeds)) != len(seeds):
        raise ConfigError(f"--seeds {text[:40]!r}: expected seeds ≥ 0 as a range or a list, e.g. 1-3 or 1,5,9")
    return tuple(seeds)


def cells(axes: Sequence[Axis], seeds: Sequence[int]) -> list[Cell]:
    """Every combination of the axes' values (the first axis slowest), at every seed."""
    keys = [a.key for a in axes]
    if len(keys) > MAX_AXES:  # the cap first: what is wrong is how many, not which
        raise ConfigError(
            f"the grid has {len(keys)} axes: at most {MAX_AXES} are allowed; leave out {len(keys) - MAX_AXES} "
            "(a key left out keeps the base config's value)"
        )
    if len(set(keys)) != len(keys):
        raise ConfigError(f"--grid names a key twice: {', '.join(keys)}")
    count = math.prod(len(a.values) for a in axes) * len(seeds)  # counted before a cell is built
    if count > MAX_CELLS:
        raise ConfigError(f"the grid has {count:,} cells: at most {MAX_CELLS:,}")
    return [
        Cell(dict(zip(keys, combo, strict=True)), seed)
        for combo in itertools.product(*(a.values for a in axes))
        for seed in seeds
    ]


def cell_config(base: Any, cell: Cell) -> Any:
    """The base config with the cell's values and seed (the seed where the run's kind keeps it)."""
    return kind_of(base).with_seed(base.with_overrides(dict(cell.values)), cell.seed)


def as_replicas(base: Any, grid: Sequence[Cell]) -> Any | None:
    """A synthetic grid over the learning rates only, as one config whose replicas are the cells
    (every (η_Y, η_Z) pair × every seed, in the cells' order); None for any other grid."""
    if kind_of(base).name != "synthetic" or not grid or not set(grid[0].values) <= set(LR_KEYS):
        return None
    pairs = list(
        dict.fromkeys(
            (float(c.values.get("optim.eta_y", base.optim.eta_y)), float(c.values.get("optim.eta_z", base.optim.eta_z)))
            for c in grid
        )
    )
    seeds = list(dict.fromkeys(c.seed for c in grid))
    return base.with_overrides({"replicas.lr_pairs": [list(p) for p in pairs], "replicas.seeds": seeds})


def replica_index(statics: dict[str, np.ndarray], cfg: Any, grid: Sequence[Cell]) -> list[int]:
    """For each cell of a batched run (:func:`as_replicas`), the replica that trained it: the one whose
    stored η_Y, η_Z and seed are the cell's."""
    ey, ez, seed = (np.asarray(statics[k]) for k in ("eta_y", "eta_z", "seed"))
    out = []
    for c in grid:
        want_y = float(c.values.get("optim.eta_y", cfg.optim.eta_y))
        want_z = float(c.values.get("optim.eta_z", cfg.optim.eta_z))
        hit = np.flatnonzero(np.isclose(ey, want_y) & np.isclose(ez, want_z) & (seed == c.seed))
        if len(hit) != 1:
            raise ValueError(f"cell {c.label()}: {len(hit)} replicas of the batched run match it")
        out.append(int(hit[0]))
    return out


# ----------------------------------------------------------------------------------------- summary
def final_metrics(scalars: pd.DataFrame) -> pd.DataFrame:
    """Each metric at the run's last stored step, one row per replica (0 for a run without replicas),
    averaged over what else it is kept per (class n, layer, head), as ``metric`` → value columns."""
    if scalars.empty:
        return pd.DataFrame()
    last = scalars[scalars["step"] == scalars["step"].max()]
    by = ["replica"] if "replica" in last.columns and "layer" not in last.columns else []
    if "layer" in last.columns:  # a real-text run: one column per metric and layer (the run-level ones plain)
        layer = last["layer"].astype("Int64")
        last = last.assign(metric=np.where(layer.isna(), last["metric"], last["metric"] + "@L" + layer.astype(str)))
        last = last[last["head"].isna()]
    if not by:
        means = last.groupby("metric")["value"].mean()
        return pd.DataFrame([means.to_dict()]).assign(replica=0)
    return last.groupby([*by, "metric"])["value"].mean().unstack("metric").reset_index()


def stored_row(info: dict[str, Any], keys: Sequence[str], scalars: pd.DataFrame) -> dict[str, Any]:
    """One run of a grid, as a row of its summary: the values of the grid's ``keys`` in its stored
    config, its seed, id and status, and its final metrics (its first replica's)."""
    config = json.loads(info["config_json"])
    kind = kind_named(info["kind"])
    finals = final_metrics(scalars)
    values = finals.iloc[0].drop("replica").to_dict() if len(finals) else {}
    return {k: get_dotted(config, k) for k in keys} | {
        "seed": kind.seed_of(config),
        "run": info["id"],
        "status": info["status"],
        **values,
    }


def summary_html(frame: pd.DataFrame, title: str, axes: Sequence[Axis]) -> str:
    """A self-contained page: the summary table and, for each final metric, its value per cell (a
    dot per seed) against the first axis, one line per value of the second."""
    import plotly.graph_objects as go
    import plotly.io as pio

    metrics = [c for c in frame.columns if c not in {"seed", "run", "status", "replica", *(a.key for a in axes)}]
    parts = [f"<h1>{html.escape(title)}</h1>", frame.to_html(index=False, float_format=lambda x: f"{x:.4g}", na_rep="")]
    x = axes[0].key if axes else "seed"
    group = axes[1].key if len(axes) > 1 else None
    for i, metric in enumerate(metrics):
        fig = go.Figure()
        for name, part in frame.groupby(group) if group else [("", frame)]:
            fig.add_trace(
                go.Scatter(
                    x=part[x].astype(str),
                    y=part[metric],
                    mode="markers",
                    name=f"{group}={name}" if group else metric,
                    marker=dict(size=10),
                )
            )
        fig.update_layout(title=metric, xaxis_title=x, yaxis_title=metric, height=360)
        parts.append(pio.to_html(fig, full_html=False, include_plotlyjs="inline" if i == 0 else False))
    return "<!doctype html><meta charset=utf-8><title>" + html.escape(title) + "</title>" + "\n".join(parts)
