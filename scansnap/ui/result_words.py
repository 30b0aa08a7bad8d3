"""The Sweep page's results in words: a grid summary's columns by their registered labels and units
(``attn_entropy@L0`` → "attention entropy, layer 0 (nats)"), compact tick labels that never crowd a log
axis, and how long a grid still trains.  No Streamlit calls, no tensors."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from scansnap.core.metrics import METRICS, bare_label, label, unit
from scansnap.paper.items.costs import about
from scansnap.ui.settings_words import setting_label

LAYER = "@L"  # a real-text grid's per-layer column: metric@L<layer> (scansnap.service.grid.final_metrics)
SUMMARY_WORDS = {"seed": "seed", "run": "run", "status": "status"}


def split_column(col: str) -> tuple[str, int | None]:
    """A summary column as (metric name, layer or None): ``attn_entropy@L2`` → ``("attn_entropy", 2)``."""
    name, sep, layer = col.partition(LAYER)
    return (name, int(layer)) if sep and layer.isdigit() else (col, None)


def column_unit(col: str) -> str:
    """The unit of a summary column's metric ("nats"), or ""."""
    return unit(split_column(col)[0])


def column_what(col: str) -> str:
    """A metric column without its unit: "attention entropy, layer 0", "validation perplexity"."""
    name, layer = split_column(col)
    return bare_label(name) + (f", layer {layer}" if layer is not None else "")


def column_label(col: str) -> str:
    """A metric column in words with its unit: "attention entropy, layer 0 (nats)" (the column itself
    when it is no registered metric)."""
    name, layer = split_column(col)
    if name not in METRICS or layer is None:
        return label(name) if name in METRICS else col
    u = column_unit(col)
    return column_what(col) + (f" ({u})" if u else "")


def summary_labels(columns: Sequence[str], keys: Sequence[str], kind: str) -> dict[str, str]:
    """Every column of a grid summary in words: the axes by their settings' labels, the metrics by theirs."""
    out = {}
    for c in columns:
        out[c] = setting_label(c, kind) if c in keys else SUMMARY_WORDS.get(c) or column_label(c)
    return out


# ------------------------------------------------------------------------------------------- ticks
def tick_text(v: float) -> str:
    """A tick on a log axis of learning rates, as short as it reads: 0.5, 1, 2, 12.5, 1e3, 2.5e-3."""
    if v == 0 or not math.isfinite(v):
        return f"{v:g}"
    if 0.01 <= abs(v) < 1000:
        return f"{v:.3g}"
    mant, exp = f"{v:.1e}".split("e")
    return f"{mant.rstrip('0').rstrip('.')}e{int(exp)}"


def log_ticks(values: Sequence[float], max_ticks: int) -> list[float]:
    """At most ``max_ticks`` of ``values`` (positive) for a log axis, each at least 1/(max_ticks − 1) of
    the axis's log span from the last one kept (labels never crowd where values cluster), the first
    and the last always among them."""
    v = sorted({float(x) for x in values if x > 0})
    if len(v) <= 2 or max_ticks < 2:
        return v[:1] if max_ticks < 2 else v
    logs = [math.log10(x) for x in v]
    gap = (logs[-1] - logs[0]) / (max_ticks - 1)
    kept = [0]
    for i in range(1, len(v) - 1):
        if logs[i] - logs[kept[-1]] >= gap - 1e-12 and logs[-1] - logs[i] >= gap - 1e-12:
            kept.append(i)
    kept.append(len(v) - 1)
    return [v[i] for i in kept]


# --------------------------------------------------------------------------------------- time left
@dataclass(frozen=True)
class RunProgress:
    """One run of a grid as the time left needs it: whether it ended, the seconds its job says it still
    needs (while it runs), its whole-run estimate (None: unknown) and the fraction of its steps done."""

    ended: bool
    left_s: float | None
    estimate_s: float | None
    done: float


def run_left_s(r: RunProgress) -> float | None:
    """Seconds a run still trains: 0 once ended; its job's own figure while it runs; else its estimate
    × the fraction of its steps still to do; None when nothing is known."""
    if r.ended:
        return 0.0
    if r.left_s is not None:
        return max(0.0, r.left_s)
    if r.estimate_s is None:
        return None
    return max(0.0, r.estimate_s * (1.0 - min(max(r.done, 0.0), 1.0)))


def grid_left_s(runs: Sequence[RunProgress], slots: int) -> float | None:
    """Seconds until every run of a grid has ended, ``slots`` of them training at a time: the runs in
    order, each on the slot that frees first (what the queue does); None when a run's time is unknown."""
    lefts = [run_left_s(r) for r in sorted(runs, key=lambda r: r.left_s is None)]  # who trains now, first
    known = [x for x in lefts if x is not None]
    if len(known) < len(lefts):
        return None
    free = [0.0] * max(1, slots)
    for x in known:
        if x > 0:
            i = free.index(min(free))
            free[i] += x
    return max(free)


def progress_text(runs: Sequence[RunProgress], slots: int) -> str:
    """The grid's progress bar text: "4 of 9 runs ended · about 3 min left"."""
    ended = sum(r.ended for r in runs)
    text = f"{ended} of {len(runs)} runs ended"
    if ended == len(runs):
        return text
    left = grid_left_s(runs, slots)
    if left is None:
        return text + " · time left unknown"
    return text + f" · {about(left)} left"
