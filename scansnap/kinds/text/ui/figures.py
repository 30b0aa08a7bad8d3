"""A real-text run's figures from its history and statics, as the Real text page draws them (and
``scansnap.api``'s ``run.figure``): the entropy per layer with JoMA's drop and rebound marked, layer 0's
share on each word group, the losses, one attention map.  No Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scansnap.kinds.text.paper.text_view import drop_rebound
from scansnap.kinds.text.ui import charts as text_charts
from scansnap.kinds.text.ui.history import TextHistory
from scansnap.ui.chart_style import Spec

GROUP_NAMES = {"distinct": "distinct words", "common": "common words", "frequent": "{n} most frequent"}


def entropy_figure(hist: TextHistory, st_: dict, fs: int, cursor: int | None) -> Spec:
    """Each layer's attention entropy Ĥ over the steps, its drop and rebound marked (JoMA)."""
    steps, H = hist.layer_metric("attn_entropy")
    marks = [drop_rebound(steps, H[:, k]) for k in range(H.shape[1])]
    uniform = float(st_.get("uniform_entropy", np.nan))
    return text_charts.entropy_chart(steps, H, uniform, marks, fs, cursor)


def groups_figure(hist: TextHistory, st_: dict, fs: int, cursor: int | None) -> Spec:
    """Layer 0's share on each word group the run measured (runs stored before the groups: frequent only)."""
    shares, uniform, names = {}, {}, {}
    for group in ("distinct", "common", "frequent"):
        steps, share = hist.layer_metric(f"attn_share_{group}")
        if share.size and f"uniform_share_{group}" in st_:
            shares[group] = share[:, 0]
            uniform[group] = float(st_[f"uniform_share_{group}"])
            names[group] = GROUP_NAMES[group].format(n=len(st_.get("frequent_tokens", ())))
    steps = hist.layer_metric("attn_entropy")[0]
    return text_charts.groups_chart(steps, shares, uniform, names, fs, cursor)


def loss_figure(hist: TextHistory, fs: int, cursor: int | None) -> Spec:
    """Training and validation loss, the validation perplexity on the right."""
    steps, val = hist.run_metric("val_loss")
    train = hist.run_metric("train_loss")[1]
    ppl = hist.run_metric("val_ppl")[1]
    return text_charts.loss_chart(steps, train, val, ppl, fs, cursor)


def map_figure(
    maps: np.ndarray, layer: int, words: Sequence[str], title: str, fs: int, scale: bool = True, labels: int = 0
) -> Spec:
    """Layer ``layer``'s attention map a_ij (head mean) of a snapshot's ``attn_map_mean`` (L, T, T), its rows
    and columns the probe window's ``words``."""
    a = maps[layer]
    labels = labels or text_charts.MAX_TOKEN_LABELS
    return text_charts.attention_map(a, list(words[: a.shape[0]]), title, fs, f"text-map-{layer}", scale, labels)
