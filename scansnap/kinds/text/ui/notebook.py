"""A stored real-text run's charts outside the dashboard (``scansnap.api``'s ``run.figure``): the figures the
Real text page draws (:mod:`scansnap.kinds.text.ui.figures`), read from the store once."""

from __future__ import annotations

from typing import Any

import numpy as np

from scansnap.kinds.text.ui import figures
from scansnap.kinds.text.ui.history import TextHistory
from scansnap.ui.chart_style import FONT, Spec

NAMES = ("attn_entropy", "groups", "loss", "attn_map")


def text_figure(stored: Any, run_id: str, name: str, layer: int = 0, step: int | None = None) -> Spec:
    """Chart ``name`` (:data:`NAMES`): the entropy per layer, layer 0's share on each word group, the losses, or
    layer ``layer``'s attention map at ``step`` (default: the last stored); ValueError names what is allowed."""
    if name not in NAMES:
        raise ValueError(f"no chart {name!r} for a real-text run; allowed: {', '.join(NAMES)}")
    steps = stored.steps(run_id)
    if not steps:
        raise ValueError(f"run {run_id} has no snapshot stored yet")
    if step is not None and step not in steps:
        raise ValueError(f"step {step} is not stored; stored: {steps[0]}..{steps[-1]} ({len(steps)} steps)")
    statics = stored.statics(run_id)
    if name == "attn_map":
        at = steps[-1] if step is None else step
        maps = stored.snapshot(run_id, at)["attn_map_mean"]
        if not 0 <= layer < len(maps):
            raise ValueError(f"layer = {layer} is out of range: this run has layers 0..{len(maps) - 1}")
        words = list(statics.get("probe_window_tokens", np.array([], dtype=str)))
        return figures.map_figure(maps, layer, words, f"layer {layer} at step {at}", FONT)
    hist = TextHistory(run_id)
    hist.update(stored, upto=step)
    if name == "attn_entropy":
        return figures.entropy_figure(hist, statics, FONT, step)
    if name == "groups":
        return figures.groups_figure(hist, statics, FONT, step)
    return figures.loss_figure(hist, FONT, step)
