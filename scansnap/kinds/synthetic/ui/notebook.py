"""A stored synthetic run's Lab charts outside the dashboard (``scansnap.api``'s ``run.figure``): the same
figure the Lab's live area draws (:func:`scansnap.kinds.synthetic.ui.charts.figure`), read from the store once."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.synthetic.paper.observe import query_row
from scansnap.kinds.synthetic.ui.chart_list import CHART_KEYS
from scansnap.kinds.synthetic.ui.charts import View, figure
from scansnap.paper.history import RunHistory
from scansnap.ui.chart_style import FONT, Spec

NAMES = {  # a notebook's names for the Lab's charts (the URL's keys are accepted too)
    "c_n": "cn",
    "snap": "B",
    "entropy": "H",
    "c_n_heatmap": "cnh",
    "z": "z",
    "bracket": "bracket",
    "loss": "loss",
}


def lab_figure(
    stored: Any, run_id: str, name: str, replica: int = 0, n: int = 0, q: int | None = None, step: int | None = None
) -> Spec:
    """Chart ``name`` (:data:`NAMES`) of replica ``replica``, next token ``n`` and query ``q`` (default: n's
    query), at ``step`` (default: the last stored); ValueError names what is allowed."""
    key = NAMES.get(name, name)
    if key not in CHART_KEYS:
        raise ValueError(f"no chart {name!r} for a synthetic run; allowed: {', '.join(NAMES)}")
    statics = stored.statics(run_id)
    K, Q, R = statics["P"].shape[0], len(statics["query_tokens"]), len(statics["seed"])
    _check("replica", replica, R)
    _check("n", n, K)
    q = query_row(statics, n) if q is None else q
    _check("q", q, Q)
    hist = RunHistory(run_id)
    hist.update(stored)
    if step is not None and step not in hist.steps:
        raise ValueError(
            f"step {step} is not stored; stored: {hist.steps[0]}..{hist.steps[-1]} ({len(hist.steps)} steps)"
        )
    return figure(key, hist, statics, View(replica, n, q, step, FONT))


def _check(name: str, value: int, count: int) -> None:
    if not 0 <= value < count:
        raise ValueError(f"{name} = {value} is out of range: this run has {name} in 0..{count - 1}")
