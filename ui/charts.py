"""Plotly figure builders of the Lab's live charts and the P(l|n) preview (no streamlit here, so they
are unit-testable).

Builders take plain arrays (shaped by :mod:`engine.paper.history`).  The six live charts return a
plain figure dict (``Spec``: {"data": [...], "layout": {...}}, JSON-ready): they are rebuilt on
every 0.5 s tick and plotly's object model (validation, deep copies) cost ~10× more than the data.
The P(l|n) preview returns a ``go.Figure``.  Looks: :mod:`ui.chart_style`.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots  # P(l|n) preview

from engine.paper.history import TokenInfo, decimate, rnd
from ui.chart_style import (
    COMMON_GREY,
    FONT,
    MAX_POINTS,
    THEORY,
    Spec,
    cursor_line,
    jl,
    layout_style,
    spec,
    style,
    vline,
)
from ui.token_lines import token_traces


def cn_lines(
    steps: np.ndarray,
    C: np.ndarray,
    n: int,
    info: TokenInfo,
    supp: np.ndarray,
    step: int,
    font: int = FONT,
    mf: tuple[np.ndarray, np.ndarray] | None = None,
    cursor: float | None = None,
) -> Spec:
    """c_n over time for next token n: one line per token of supp(n)."""
    fig = spec(
        token_traces(steps, C, supp, info, "c", mf),
        f"c_n over time, next token n={n} · step {step}",
        font,
        "cn",
        "step",
        "c(l|n)",
    )
    cursor_line(fig, cursor)
    return fig


def cn_heatmap(c: np.ndarray, psi: np.ndarray, step: int, font: int = FONT) -> Spec:
    """c_n for all next tokens (rows grouped by query) at one step."""
    order = np.argsort(psi, kind="stable")
    # A plain spec, no go.Figure: it is rebuilt on every live tick, and plotly's validation of the
    # colour scale and the layout cost more than building it.
    lay = layout_style(
        f"c_n for all next tokens at step {step}", font, "cnh", "token l", "", height=max(300, 60 + 28 * len(order))
    )
    lay["yaxis"].update(autorange="reversed", type="category")
    return {
        "data": [
            dict(
                type="heatmap",
                z=rnd(c[order], 3).tolist(),
                y=[f"n={n} (q={psi[n]})" for n in order],
                colorscale="Viridis",
                zmin=0,
                colorbar=dict(title=dict(text="c"), nticks=4),
                hovertemplate="n=%{y}, l=%{x}: c=%{z}<extra></extra>",
            )
        ],
        "layout": lay,
    }


def z_lines(
    steps: np.ndarray,
    Z: np.ndarray,
    q: int,
    info: TokenInfo,
    tokens: np.ndarray,
    font: int = FONT,
    mf: tuple[np.ndarray, np.ndarray] | None = None,
    cursor: float | None = None,
) -> Spec:
    """z_{q,l} trajectories of query q, with the mean-field theory dashed."""
    fig = spec(
        token_traces(steps, Z, tokens, info, "z", mf),
        f"z_m trajectories, query q={q} (dashed: mean-field T→∞)",
        font,
        "z",
        "step",
        "z(m,l)",
    )
    cursor_line(fig, cursor)
    return fig


def _phases(fig: Spec, overlay: dict[str, Any] | None, xmax: float) -> None:
    if not overlay:
        return
    t1, t0 = overlay["t0_prime"], overlay["t0"]
    rect = dict(type="rect", y0=0, y1=1, xref="x", yref="paper", opacity=0.08, line=dict(width=0), layer="below")
    fig["layout"].setdefault("shapes", []).extend(
        [
            {**rect, "x0": 1e-3, "x1": t1, "fillcolor": "#1f77b4"},
            {**rect, "x0": t0, "x1": max(xmax, t0) * 10, "fillcolor": "#ff7f0e"},
            vline(t1),
            vline(t0),
        ]
    )
    fig["layout"]["annotations"] = [
        dict(
            x=math.log10(x),
            y=1.0,
            yref="paper",
            text=name,
            showarrow=False,
            yanchor="bottom",
            xanchor=anchor,
            font=dict(size=15),
        )
        for x, name, anchor in ((t1, "t′₀", "right"), (t0, "t₀", "left"))
    ]


def entropy_chart(
    steps: np.ndarray, H: np.ndarray, overlay: dict[str, Any] | None, font: int = FONT, cursor: float | None = None
) -> Spec:
    """entropy_distinct vs step on a log axis; shaded scanning (t < t′₀) and snapping (t > t₀)."""
    pos = steps > 0
    keep = decimate(int(pos.sum()), MAX_POINTS)
    fig = spec(
        [
            dict(
                type="scatter",
                x=steps[pos][keep].tolist(),
                y=jl(H[pos][keep]),
                mode="lines+markers",
                name="entropy_distinct",
                line=dict(color="#2c3e50", width=3),
                marker=dict(size=5),
            )
        ],
        "entropy_distinct (nats) · blue: scan, orange: snap",
        font,
        "H",
        "step (log)",
        "entropy_distinct",
    )
    xmax = float(steps.max()) if len(steps) else 10.0
    _phases(fig, overlay, xmax)
    cursor_line(fig, cursor)
    lo = -0.3 if not overlay else math.log10(max(min(overlay["t0_prime"], 1) / 2, 1e-2))
    fig["layout"]["xaxis"].update(type="log", dtick=1, range=[lo, math.log10(max(xmax, 10)) + 0.05])
    return fig


def b_chart(
    steps: np.ndarray,
    B_hat: np.ndarray,
    dz: np.ndarray,
    lo: np.ndarray,
    overlay: dict[str, Any] | None,
    n: int | str,
    font: int = FONT,
    cursor: float | None = None,
) -> Spec:
    """B_hat vs Thm 4's B_n(t), and dz_dominant inside its Thm 3 bracket [bracket_lo, B_hat]."""
    keep = decimate(len(steps), MAX_POINTS)
    x = steps[keep].tolist()
    traces = [
        dict(type="scatter", x=x, y=jl(lo[keep]), mode="lines", name="bracket_lo", line=dict(color="#2ca02c", width=1)),
        dict(
            type="scatter",
            x=x,
            y=jl(B_hat[keep]),
            mode="lines",
            name="B_hat",
            fill="tonexty",
            fillcolor="rgba(44,160,44,0.15)",
            line=dict(color="#1f77b4", width=3),
        ),
        dict(
            type="scatter",
            x=x,
            y=jl(dz[keep]),
            mode="lines+markers",
            name="dz_dominant",
            line=dict(color="#d62728", width=3),
            marker=dict(size=5),
        ),
    ]
    if overlay:
        traces.append(
            dict(
                type="scatter",
                x=jl(overlay["step"]),
                y=jl(overlay["B_n"]),
                mode="lines",
                name="B_n (Thm 4, C₀=1)",
                line=dict(color="#1f77b4", **THEORY),
            )
        )
    fig = spec(traces, f"B_hat vs theory B_n; dz_dominant in bracket (n={n})", font, "B", "step", "nats")
    cursor_line(fig, cursor)
    return fig


def loss_chart(
    steps: np.ndarray, loss: np.ndarray, acc: np.ndarray, font: int = FONT, cursor: float | None = None
) -> Spec:
    keep = decimate(len(steps), MAX_POINTS)
    x = steps[keep].tolist()
    fig = spec(
        [
            dict(
                type="scatter",
                x=x,
                y=jl(np.maximum(loss[keep], 1e-8)),
                name="loss",
                line=dict(color="#8c564b", width=3),
            ),
            dict(
                type="scatter", x=x, y=jl(acc[keep]), name="accuracy", yaxis="y2", line=dict(color="#17becf", width=3)
            ),
        ],
        "loss and accuracy (all classes, T→∞ contexts)",
        font,
        "loss",
        "step",
        "loss",
    )
    cursor_line(fig, cursor)
    lay = fig["layout"]
    lay["yaxis"].update(type="log", dtick=1, exponentformat="power")
    lay["yaxis2"] = dict(
        title=dict(text="accuracy", font=dict(size=font)),
        range=[0, 1.05],
        overlaying="y",
        side="right",
        tickvals=[0, 0.25, 0.5, 0.75, 1],
        showgrid=False,
        tickfont=dict(size=font - 1),
        automargin=True,
    )
    lay["legend"].update(orientation="h", x=0.5, xanchor="center", y=1.0, yanchor="bottom")
    lay["margin"]["r"] = 40 + 3 * font
    return fig


PREVIEW_COLUMNS = 600  # tokens drawn side by side; more are max-pooled into this many columns
PREVIEW_ROWS = 100  # classes drawn; more are cut (the note says so)


def pooled(a: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """Columns of ``a`` max-pooled into at most ``width`` columns: (pooled array, tokens per column)."""
    per = max(1, -(-a.shape[-1] // width))
    pad = (-a.shape[-1]) % per
    padded = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, pad)])
    return padded.reshape(*a.shape[:-1], -1, per).max(-1), per


def p_preview(P: np.ndarray, psi: np.ndarray, token_kind: np.ndarray, font: int = FONT) -> go.Figure:
    """P(l|n): rows = next tokens grouped by query, columns = tokens; a strip marks each token's kind.
    Large problems are shown downsampled (columns max-pooled, rows cut), and the title says how."""
    order = np.argsort(psi, kind="stable")[:PREVIEW_ROWS]
    glob = np.where((token_kind == 2).any(0), 2, np.where((token_kind == 1).any(0), 1, 0))
    Pp, per = pooled(P[order], PREVIEW_COLUMNS)
    kinds, _ = pooled(glob[None, :], PREVIEW_COLUMNS)
    x = (np.arange(Pp.shape[1]) * per).tolist()
    fig = make_subplots(rows=2, cols=1, row_heights=[0.1, 0.9], shared_xaxes=True, vertical_spacing=0.03)
    fig.add_trace(_kind_strip(kinds[0], x), row=1, col=1)
    fig.add_trace(
        go.Heatmap(
            z=rnd(Pp, 3).tolist(),
            x=x,
            y=[f"n={n} (q={psi[n]})" for n in order],
            colorscale="Blues",
            zmin=0,
            colorbar=dict(title="P(l|n)", len=0.85, y=0.42),
            hovertemplate="%{y}, l=%{x}: P=%{z}<extra></extra>",
        ),
        row=2,
        col=1,
    )
    fig.update_yaxes(autorange="reversed", type="category", row=2, col=1)
    note = _preview_note(len(psi), len(order), per)
    title = f"P(l|n) preview · strip: purple = distinct, grey = common{note}"
    style(fig, title, font, "P", "", "", height=max(320, 90 + 28 * len(order)))
    fig.update_xaxes(title_text="token l", row=2, col=1)
    return fig


def _kind_strip(kinds: np.ndarray, x: list[int]) -> go.Heatmap:
    return go.Heatmap(
        z=[kinds.tolist()],
        x=x,
        colorscale=[[0, "#ffffff"], [0.5, "#440154"], [1, COMMON_GREY]],
        zmin=0,
        zmax=2,
        showscale=False,
        y=["kind"],
        hovertemplate="l=%{x}: %{customdata}<extra></extra>",
        customdata=[[("—", "distinct", "common")[k] for k in kinds]],
    )


def _preview_note(classes: int, shown_rows: int, per: int) -> str:
    parts = []
    if per > 1:
        parts.append(f"each column is the largest P of {per} tokens")
    if shown_rows < classes:
        parts.append(f"first {shown_rows} of {classes} next tokens")
    return f"<br><sup>downsampled: {'; '.join(parts)}</sup>" if parts else ""


def to_json(fig: Spec | go.Figure) -> str:
    return json.dumps(fig, separators=(",", ":")) if isinstance(fig, dict) else fig.to_json()


def payload_bytes(figs: list[Spec | go.Figure]) -> int:
    """Bytes of JSON these figures send to the browser (what one live tick costs)."""
    return sum(len(to_json(f)) for f in figs)
