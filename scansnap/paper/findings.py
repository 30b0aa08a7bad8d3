"""What a grid of runs shows, in one sentence computed from its numbers: along each axis, whether the
final value rises, falls, stays flat (within a tolerance) or changes unsteadily, holding the other axes
fixed; e.g. "Final attention entropy falls as η_Z grows (from 2.1 to 0.4 nats) and barely depends on
η_Y/η_Z."  The Sweep page says it under a sweep's and a grid's results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

Trend = Literal["rises", "falls", "flat", "mixed"]
REL_TOL = 0.05  # a change under 5 % of the largest value is "barely"
NOISE_SEMS = 2.0  # ... and so is one within two standard errors over seeds


@dataclass(frozen=True)
class GridAxis:
    """A column of the table that is an axis of the grid, and its name in words."""

    column: str
    label: str


def trend(values: Sequence[float], tol: float) -> Trend:
    """How ``values`` (in the axis's order) move: every step up or flat (within ``tol``) and one up:
    rises; the mirror: falls; every step within ``tol`` and the ends too: flat; else mixed."""
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return "flat"
    steps = np.diff(v)
    if np.ptp(v) <= tol:
        return "flat"
    if np.all(steps >= -tol) and v[-1] - v[0] > tol:
        return "rises"
    if np.all(steps <= tol) and v[0] - v[-1] > tol:
        return "falls"
    return "mixed"


def tolerance(means: np.ndarray, sems: np.ndarray | None = None, rel: float = REL_TOL) -> float:
    """What counts as no change: ``rel`` of the largest |mean|, or ``NOISE_SEMS`` typical standard
    errors over seeds when the seeds scatter more."""
    scale = float(np.nanmax(np.abs(means))) if len(means) else 0.0
    noise = float(np.nanmedian(sems)) if sems is not None and np.isfinite(sems).any() else 0.0
    return max(rel * scale, NOISE_SEMS * noise, 1e-12)


def _hashable(v: object) -> object:
    """An axis value that can key a group: a list (a config's tuple) as its text."""
    return str(v) if isinstance(v, list | tuple | dict) else v


def _ordered(values: pd.Series) -> list:
    """An axis's values in order: as numbers where they all read as numbers, else as first seen."""
    uniq = list(dict.fromkeys(values.tolist()))
    try:
        return sorted(uniq, key=float)
    except (TypeError, ValueError):
        return uniq


def _numeric(values: list) -> bool:
    try:
        [float(v) for v in values]
    except (TypeError, ValueError):
        return False
    return True


def fmt(v: float) -> str:
    """A value for the sentence: three significant digits."""
    return f"{v:.3g}"


def setting(v: object) -> str:
    """An axis's value for the sentence: a number as short as it reads (``1.0`` → ``1``), else as it is."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def _axis_trends(cells: pd.DataFrame, axis: GridAxis, others: list[str], order: list, tol: float) -> list[Trend]:
    """The trend along ``axis`` in each slice of the other axes that has two values or more."""
    rank = {v: i for i, v in enumerate(order)}
    slices = cells.groupby(others) if others else [((), cells)]
    out: list[Trend] = []
    for _, part in slices:
        part = part.sort_values(axis.column, key=lambda s: s.map(rank))
        if len(part) >= 2:
            out.append(trend(part["mean"].to_numpy(), tol))
    return out


def _phrase(axis: GridAxis, trends: list[Trend], marginal: pd.Series, numeric: bool, unit: str, tol: float) -> str:
    """What the value does along one axis, with the numbers (the mean over the other axes)."""
    u = f" {unit}" if unit else ""
    hi, lo = marginal.idxmax(), marginal.idxmin()
    ends = f"(from {fmt(marginal.iloc[0])} to {fmt(marginal.iloc[-1])}{u})"
    spread = (
        f"(highest at {axis.label} = {setting(hi)}: {fmt(marginal[hi])}{u}; lowest at {setting(lo)}: "
        f"{fmt(marginal[lo])}{u})"
    )
    if all(t == "flat" for t in trends) and np.ptp(marginal.to_numpy()) <= tol:
        return f"barely depends on {axis.label}"
    if not numeric:
        return f"depends on {axis.label} {spread}"
    kinds = set(trends) - {"flat"}
    if kinds == {"rises"}:
        return f"rises as {axis.label} grows {ends}"
    if kinds == {"falls"}:
        return f"falls as {axis.label} grows {ends}"
    if kinds >= {"rises", "falls"}:
        return f"rises with {axis.label} in some cells of the grid and falls in others {spread}"
    return f"changes with {axis.label}, not steadily {spread}"


def grid_finding(table: pd.DataFrame, axes: Sequence[GridAxis], value: str, what: str, unit: str = "") -> str | None:
    """One sentence on how ``value`` (the final metric, one row per run or per cell) depends on each of
    ``axes``, computed from the numbers (mean over rows of the same cell: the seeds); the axis with the
    widest spread first.  None when fewer than two cells have a value."""
    cols = [a.column for a in axes]
    if not cols or value not in table.columns or not set(cols) <= set(table.columns):
        return None
    t = table[[*cols, value]].dropna(subset=[value])
    t = t.assign(**{c: t[c].map(_hashable) for c in cols})
    if t.empty:
        return None
    g = t.groupby(cols, as_index=False)[value]
    cells = g.mean().rename(columns={value: "mean"})
    counts, std = g.count()[value].to_numpy(), g.std()[value].to_numpy()
    if len(cells) < 2:
        return None
    sems = np.where(counts > 1, std / np.sqrt(np.maximum(counts, 1)), np.nan)
    tol = tolerance(cells["mean"].to_numpy(), sems)
    m = cells["mean"].to_numpy()
    subject = f"Final {what}"
    u = f" {unit}" if unit else ""
    if np.ptp(m) <= tol:
        names = " or ".join(a.label for a in axes)
        where = f"at {fmt(m.min())}" if fmt(m.min()) == fmt(m.max()) else f"between {fmt(m.min())} and {fmt(m.max())}"
        return f"{subject} barely depends on {names}: it stays {where}{u}."
    parts = []
    for axis in axes:
        order = _ordered(cells[axis.column])
        others = [c for c in cols if c != axis.column]
        marginal = cells.groupby(axis.column)["mean"].mean().reindex(order)
        trends = _axis_trends(cells, axis, others, order, tol)
        phrase = _phrase(axis, trends, marginal, _numeric(order), unit, tol)
        parts.append((float(np.ptp(marginal.to_numpy())), phrase))
    parts.sort(key=lambda p: -p[0])
    said = [p for _, p in parts]
    body = said[0] if len(said) == 1 else ", ".join(said[:-1]) + " and " + said[-1]
    return f"{subject} {body}."


SWEEP_AXES = (GridAxis("eta_z", "η_Z"), GridAxis("ratio", "η_Y/η_Z"))  # a Fig. 6 sweep's grid


def sweep_finding(replicas: pd.DataFrame, what: str, unit: str = "") -> str | None:
    """:func:`grid_finding` of a learning-rate sweep: ``replicas`` has one row per replica with its
    eta_z, ratio and final value (:func:`scansnap.paper.sweeps.per_replica`), the seeds its cells' rows."""
    return grid_finding(replicas, SWEEP_AXES, "value", what, unit)
