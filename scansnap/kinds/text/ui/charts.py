"""Figure builders of the Real text page (plain plotly dicts, no streamlit; looks: :mod:`scansnap.ui.chart_style`).

Names and labels come from the one metric registry (:data:`scansnap.core.metrics.METRICS`): a trace
of ``attn_entropy`` is the attention entropy H = mean_i −Σ_{j≤i} a_ij ln a_ij of a layer on the
probe set; maps show a_ij of the probe window, query i down, key j across, words on both axes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from scansnap.core.metrics import label
from scansnap.kinds.text.paper.text_view import DropRebound
from scansnap.paper.history import decimate
from scansnap.ui.chart_style import MAX_POINTS, Spec, cursor_line, fit_top, jl, spec, title_style

LAYER_COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd")
MAX_TOKEN_LABELS = 40  # a longer window labels every k-th word
FEW_LABELS = 12  # a map with at most this many word labels writes them at the line charts' size


def _line(x: Sequence[int], y: np.ndarray, name: str, color: str, **kw: Any) -> dict[str, Any]:
    return dict(type="scatter", x=list(x), y=jl(y), mode="lines", name=name, line=dict(color=color, width=3), **kw)


def _level(x: Sequence[int], y: float, name: str) -> dict[str, Any]:
    """A dashed horizontal reference level across the steps shown."""
    xs = [min(x), max(x)] if len(x) else [0, 1]
    return dict(type="scatter", x=xs, y=[y, y], mode="lines", name=name, line=dict(color="#777", dash="dash", width=2))


def _thin(steps: np.ndarray) -> np.ndarray:
    return decimate(len(steps), MAX_POINTS)


def entropy_chart(
    steps: np.ndarray,
    H: np.ndarray,
    uniform: float,
    marks: Sequence[DropRebound],
    font: int,
    cursor: int | None = None,
) -> Spec:
    """attn_entropy of each layer (mean over heads; H: (steps, layers)) vs step, uniform attention
    dashed; JoMA's minimum (▼: the curve fell, then turned) and rebound (▲) marked where measured."""
    keep = _thin(steps)
    x = steps[keep].tolist()
    traces = [_line(x, H[keep, k], f"layer {k}", LAYER_COLORS[k % 4]) for k in range(H.shape[1])]
    traces.append(_level(x, uniform, f"uniform attention ({uniform:.2f})"))
    for name, symbol, pick in (
        ("measured minimum (JoMA: sparser)", "triangle-down", lambda m: (m.min_step, m.min_value, m.turned)),
        ("measured rebound (JoMA: denser)", "triangle-up", lambda m: (m.end_step, m.end, m.rebounded)),
    ):
        pts = [(k, *pick(m)) for k, m in enumerate(marks) if pick(m)[2]]
        if pts:
            traces.append(
                dict(
                    type="scatter",
                    x=[p[1] for p in pts],
                    y=jl([p[2] for p in pts]),
                    mode="markers",
                    name=name,
                    marker=dict(
                        symbol=symbol,
                        size=16,
                        color=[LAYER_COLORS[p[0] % 4] for p in pts],
                        line=dict(color="black", width=1.5),
                    ),
                    hovertemplate="layer %{text}: H = %{y:.3f} at step %{x}<extra></extra>",
                    text=[str(p[0]) for p in pts],
                )
            )
    fig = spec(traces, "Attention entropy per layer", font, "text-H", "step", label("attn_entropy"))
    cursor_line(fig, cursor)
    return fig


def loss_chart(
    steps: np.ndarray, train: np.ndarray, val: np.ndarray, ppl: np.ndarray, font: int, cursor: int | None = None
) -> Spec:
    """train_loss and val_loss (nats) on the left axis, val_ppl on a log right axis."""
    keep = _thin(steps)
    x = steps[keep].tolist()
    traces = [
        _line(x, train[keep], "training loss", "#8c564b"),
        _line(x, val[keep], "validation loss", "#1f77b4"),
        _line(x, ppl[keep], "validation perplexity (right)", "#17becf", yaxis="y2"),
    ]
    traces[2]["line"]["dash"] = "dot"
    fig = spec(traces, "Loss and perplexity", font, "text-loss", "step", "loss (nats)")
    lay = fig["layout"]
    lay["yaxis2"] = dict(
        title=dict(text=label("val_ppl"), font=dict(size=font)),
        type="log",
        overlaying="y",
        side="right",
        showgrid=False,
        tickfont=dict(size=font - 1),
        automargin=True,
    )
    lay["yaxis2"].update(ppl_ticks(ppl))
    cursor_line(fig, cursor)
    return fig


GROUP_COLORS = {"distinct": "#2ca02c", "common": "#ff7f0e", "frequent": "#7f7f7f"}


def groups_chart(
    steps: np.ndarray,
    shares: dict[str, np.ndarray],
    uniform: dict[str, float],
    names: dict[str, str],
    font: int,
    cursor: int | None = None,
) -> Spec:
    """Layer 0's attention share on each word group (``shares``: group → (S,), of attn_share_<group>)
    vs step, each with its level under uniform attention dotted in the same colour (named on hover,
    not in the legend); ``names``: the legend's words for each group."""
    keep = _thin(steps)
    x = steps[keep].tolist()
    traces = []
    for group, share in shares.items():
        color = GROUP_COLORS.get(group, "#1f77b4")
        traces.append(_line(x, share[keep], names[group], color))
        level = _level(x, uniform[group], f"{group}: if uniform ({uniform[group]:.2f})")
        level["line"].update(color=color, dash="dot")
        traces.append(level | {"showlegend": False})
    title = "Layer 0: common vs distinct words"
    fig = spec(traces, title, font, "text-groups", "step", "share of the attention (dotted: if uniform)")
    cursor_line(fig, cursor)
    return fig


def ppl_ticks(ppl: np.ndarray) -> dict[str, Any]:
    """Ticks of a log perplexity axis at 1, 2, 5 × 10^k inside the data's range, written in full."""
    finite = ppl[np.isfinite(ppl) & (ppl > 0)]
    if not len(finite):
        return {}
    lo, hi = np.floor(np.log10(finite.min())), np.ceil(np.log10(finite.max()))
    vals = [m * 10**k for k in range(int(lo), int(hi) + 1) for m in (1, 2, 5)]
    vals = [v for v in vals if finite.min() / 1.5 <= v <= finite.max() * 1.5]
    return {"tickvals": vals, "ticktext": [f"{v:,.0f}" if v >= 1 else f"{v:g}" for v in vals]}


def _tick_labels(tokens: Sequence[str], most: int = MAX_TOKEN_LABELS) -> tuple[list[int], list[str]]:
    every = max(1, -(-len(tokens) // most))
    pos = list(range(0, len(tokens), every))
    return pos, [str(tokens[i]) for i in pos]


def attention_map(
    a: np.ndarray,
    tokens: Sequence[str],
    title: str,
    font: int,
    key: str,
    scale: bool = True,
    labels: int = MAX_TOKEN_LABELS,
) -> Spec:
    """a_ij of one window (T×T): query i down, key j across, labelled with their words (every k-th
    word beyond ``labels`` of them); the masked entries above the diagonal are left blank; colours
    0 … 1 on every map (comparable).  With few labels (a lecture screen's map) its words and title
    are as large as the line charts' (the projector rule: ticks ≥ 16 px, titles ≥ 20 px at the
    lecture font); with many, smaller, to fit a word per row."""
    T = a.shape[0]
    z = np.where(np.tri(T, dtype=bool), np.round(a.astype(np.float64), 3), np.nan)
    pos, words = _tick_labels(tokens, labels)
    few = len(pos) <= FEW_LABELS
    tick = font - 1 if few else max(9, font - 4)
    hover = [[f"{tokens[i]} → {tokens[j]}" for j in range(T)] for i in range(T)]
    fig = spec(
        [
            dict(
                type="heatmap",
                z=[jl(row, 3) for row in z],  # NaN (masked) → null: drawn blank
                colorscale="Viridis",
                zmin=0,
                zmax=1,
                showscale=scale,
                colorbar=dict(title=dict(text="a"), thickness=12),
                customdata=hover,
                hovertemplate="query %{customdata}<br>a = %{z}<extra></extra>",
                hoverongaps=False,  # a masked (future) key: no hover, rather than "a = NaN"
            )
        ],
        title,
        font,
        key,
        "key word j",
        "query word i",
        height=460 + 4 * max(0, T - 35),
    )
    lay = fig["layout"]
    lay["xaxis"].update(tickvals=pos, ticktext=words, tickangle=-90, tickfont=dict(size=tick), showgrid=False)
    if few:  # a lecture screen's map: the words once, down the rows (the columns hold the same words)
        lay["xaxis"].update(showticklabels=False, title=dict(text="key word j (the same words)", font=dict(size=font)))
    lay["yaxis"].update(tickvals=pos, ticktext=words, autorange="reversed", tickfont=dict(size=tick), showgrid=False)
    lay["margin"].update(l=40, r=10)
    lay["title"].update(title_style(title, font + (3 if few else 1)))
    return fit_top(fig)
