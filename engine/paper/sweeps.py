"""Runs side by side: config differences (Compare) and learning-rate sweeps (Sweep, Fig. 6 layout)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

from engine.core.config import RunConfig, flatten_dotted


def config_diffs(configs: list[dict[str, Any]], name: Callable[[str], str] | None = None) -> list[str]:
    """For each config, "key=value, ..." over every key whose value differs among them (a long list
    says how many values it has); ``name`` turns a dotted key into what is shown (default: its last
    part, e.g. ``eta_y``)."""
    flat = [flatten_dotted(c) for c in configs]
    keys = sorted({k for f in flat for k in f if k != "name"})
    differ = [k for k in keys if len({json.dumps(f.get(k)) for f in flat}) > 1]
    shown = name or (lambda k: k.split(".")[-1])
    return [", ".join(f"{shown(k)}={_shown(f.get(k))}" for k in differ) or "same config" for f in flat]


def sweep_config(
    base: RunConfig, eta_zs: list[float], ratios: list[float], seeds: list[int], steps: int | None = None
) -> RunConfig:
    """One batched job: every (η_Y = ratio·η_Z, η_Z) pair × every seed on the replica axis."""
    pairs = [[round(r * ez, 10), ez] for ez in eta_zs for r in ratios]
    over: dict[str, Any] = {
        "replicas.lr_pairs": pairs,
        "replicas.seeds": list(seeds),
        "name": f"sweep {len(pairs)}×{len(seeds)}",
    }
    if steps is not None:
        over["optim.steps"] = steps
    return base.with_overrides(over)


def sweep_summary(final: pd.DataFrame, statics: dict[str, np.ndarray]) -> pd.DataFrame:
    """Mean ± SEM of a final per-replica value over seeds, per (η_Z, ratio).

    ``final`` has columns replica, value; statics holds per-replica eta_y, eta_z, seed."""
    df = final.assign(eta_y=statics["eta_y"][final["replica"]], eta_z=statics["eta_z"][final["replica"]])
    df["ratio"] = (df["eta_y"] / df["eta_z"]).round(6)
    g = df.groupby(["eta_z", "ratio"], as_index=False)["value"]
    out = g.agg(mean="mean", std="std", count="count")
    out["sem"] = (out["std"] / np.sqrt(out["count"])).fillna(0.0)
    out["eta_y"] = (out["eta_z"] * out["ratio"]).round(10)
    return out.drop(columns="std")


def final_values(scalars: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per-replica class-mean value of ``metric`` at its last stored step (columns replica, value)."""
    rows = scalars[(scalars["metric"] == metric) & scalars["n"].isna()]
    if rows.empty:
        return pd.DataFrame({"replica": pd.Series([], dtype=np.int64), "value": pd.Series([], dtype=float)})
    last = rows[rows["step"] == rows["step"].max()]
    return last[["replica", "value"]].reset_index(drop=True)


LIST_CHARS = 24  # a list value longer than this is shown as its length


def _shown(v: Any) -> str:
    if not isinstance(v, list | tuple):
        return str(v)
    text = json.dumps(v)
    return text if len(text) <= LIST_CHARS else f"{len(v)} values"
