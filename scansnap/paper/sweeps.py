"""Runs side by side: config differences (Compare) and learning-rate sweeps (Sweep, Fig. 6 layout)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from scansnap.core.config import flatten_dotted
from scansnap.kinds.synthetic.science.config import RunConfig


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


SWEEP_KEYS = ("name", "optim.steps", "replicas.lr_pairs", "replicas.seeds")  # what sweep_config sets


@dataclass(frozen=True)
class SweepSettings:
    """What :func:`sweep_config` was given to build a sweep: η_Z values, ratios, seeds, steps and the
    base preset (None when the base config is none of the presets)."""

    eta_zs: list[float]
    ratios: list[float]
    seeds: list[int]
    steps: int
    base: str | None


def sweep_settings(cfg: RunConfig, presets: dict[str, RunConfig]) -> SweepSettings | None:
    """The settings that rebuild sweep ``cfg`` (None when its (η_Y, η_Z) pairs are not the η_Z × ratio
    grid :func:`sweep_config` writes): the base is the preset equal to it but for :data:`SWEEP_KEYS`."""
    pairs = cfg.replicas.lr_pairs
    if not pairs:
        return None
    eta_zs = list(dict.fromkeys(ez for _, ez in pairs))
    ratios = list(dict.fromkeys(round(ey / ez, 6) for ey, ez in pairs))
    grid = [(r * ez, ez) for ez in eta_zs for r in ratios]
    if len(grid) != len(pairs) or not all(np.allclose(a, b, rtol=1e-9) for a, b in zip(grid, pairs, strict=True)):
        return None
    own = _without_sweep_keys(cfg)
    base = next((name for name, p in presets.items() if _without_sweep_keys(p) == own), None)
    return SweepSettings(eta_zs, ratios, list(cfg.replicas.seeds), cfg.optim.steps, base)


def _without_sweep_keys(cfg: RunConfig) -> dict[str, str]:
    return {k: json.dumps(v) for k, v in flatten_dotted(cfg.to_dict()).items() if k not in SWEEP_KEYS}


def per_replica(final: pd.DataFrame, statics: dict[str, np.ndarray]) -> pd.DataFrame:
    """A final per-replica value with each replica's η_Y, η_Z and ratio η_Y/η_Z (rounded to 6 digits).

    ``final`` has columns replica, value; statics holds per-replica eta_y, eta_z."""
    df = final.assign(eta_y=statics["eta_y"][final["replica"]], eta_z=statics["eta_z"][final["replica"]])
    return df.assign(ratio=(df["eta_y"] / df["eta_z"]).round(6))


def sweep_summary(final: pd.DataFrame, statics: dict[str, np.ndarray]) -> pd.DataFrame:
    """Mean ± SEM of a final per-replica value over seeds, per (η_Z, ratio).

    ``final`` has columns replica, value; statics holds per-replica eta_y, eta_z, seed."""
    df = per_replica(final, statics)
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
