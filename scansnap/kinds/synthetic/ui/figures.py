"""Plotly figure builders of the Lab's live charts (no streamlit here, so they are unit-testable).

Builders take plain arrays (shaped by :mod:`scansnap.paper.history`).  The six live charts return a
plain figure dict (``Spec``: {"data": [...], "layout": {...}}, JSON-ready): they are rebuilt on
every 0.5 s tick and plotly's object model (validation, deep copies) cost ~10× more than the data.
The P(l|n) preview is :mod:`scansnap.ui.preview_chart`.  Looks: :mod:`scansnap.ui.chart_style`.
"""

from __future__ import annotations

import json
import math
import textwrap
from typing import Any

import numpy as np
import plotly.graph_objects as go

from scansnap.core.metrics import html_subscripts, label
from scansnap.kinds.synthetic.paper.theory_view import Snap
from scansnap.kinds.synthetic.ui.token_lines import token_traces
from scansnap.paper.history import TokenInfo, decimate, rnd
from scansnap.ui.chart_style import (
    FONT,
    MAX_POINTS,
    THEORY,
    Spec,
    cursor_line,
    jl,
    layout_style,
    spec,
    vline,
)


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
        f"Attention c(l | n) · n={n} · step {step}",
        font,
        "cn",
        "step",
        "attention c(l | n)",
    )
    cursor_line(fig, cursor)
    return _long_runs_on_log_x(fig, steps)


LOG_X_FROM = 2000  # steps: a longer run's token lines are drawn on a log step axis (the fast start shows)


def _long_runs_on_log_x(fig: Spec, steps: np.ndarray) -> Spec:
    if len(steps) and steps.max() >= LOG_X_FROM:
        fig["layout"]["xaxis"]["title"]["text"] = "step (log)"
        _log_x(fig, float(steps.max()))
    return fig


def placeholder(title: str, font: int = FONT, height: int | None = None) -> Spec:
    """An empty chart (of ``height``, the chart's last one, so the page does not jump): the frame shown
    before a run's first snapshot."""
    fig = spec([], title, font, "placeholder")
    if height:
        fig["layout"]["height"] = height
    note = dict(text="waiting for the first snapshot…", x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False)
    fig["layout"]["annotations"] = [{**note, "font": dict(size=font, color="#888")}]
    fig["layout"]["xaxis"]["visible"] = fig["layout"]["yaxis"]["visible"] = False
    return fig


def cn_heatmap(c: np.ndarray, psi: np.ndarray, step: int, font: int = FONT) -> Spec:
    """c_n for all next tokens (rows grouped by query) at one step."""
    order = np.argsort(psi, kind="stable")
    # A plain spec, no go.Figure: it is rebuilt on every live tick, and plotly's validation of the
    # colour scale and the layout cost more than building it.
    lay = layout_style(
        html_subscripts(f"Attention c_n of every next token · step {step}"),
        font,
        "cnh",
        "token l",
        "",
        height=max(300, 60 + 28 * len(order)),
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
                colorbar=dict(title=dict(text="attention"), nticks=4),
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
    """z_{q,l} trajectories of query q, with the mean-field theory dashed when ``mf`` is given."""
    fig = spec(
        token_traces(steps, Z, tokens, info, "z", mf),
        f"Attention logits z(m, l) of query q={q}" + (" (dashed: T→∞ mean field)" if mf is not None else ""),
        font,
        "z",
        "step",
        "logit z(m, l)",
    )
    cursor_line(fig, cursor)
    return _long_runs_on_log_x(fig, steps)


PREDICTED = dict(color="#555555", width=2, dash="dot")
MEASURED = dict(color="#c0392b", width=3)
INDICATIVE_COLORS = {"dz_common_theory": "#7a7a7a", "B_theory": "#a8a8a8"}  # greys: not the measurement's
# Theorem 4's two lines, each its own dash and a label on the line
THEORY_LINES = (  # (statics key, legend name, name on the line, measured colour, dash)
    ("dz_common_theory", "Theorem 4: the common token's drop", "theory: drop", "#d35400", "dash"),
    ("B_theory", "Theorem 4: total growth B", "theory: growth", "#1f77b4", "dashdot"),
)


LABEL_AT = 0.8  # a theory line's label: under it, pointing at it 80 % along the log step axis


def theory_traces(overlay: dict[str, Any], font: int) -> tuple[list[Spec], list[Spec]]:
    """Theorem 4's curves as traces, and their labels (annotations on each line, in its colour): in the
    measurement's colours when the theorem applies, in greys named indicative when its conditions fail
    (drawn only when the viewer asks for them: :func:`snap_chart`)."""
    th = overlay["step"] > 0
    x, traces, labels = overlay["step"][th], [], []
    solid = bool(overlay.get("solid"))
    for key, name, short, color, dash in THEORY_LINES:
        y = overlay[key][th]
        shade = color if solid else INDICATIVE_COLORS[key]
        named = name if solid else f"{name} (indicative)"
        traces.append(
            dict(
                type="scatter",
                x=jl(x),
                y=jl(y),
                mode="lines",
                name=named,
                line=dict(color=shade, width=THEORY["width"], dash=dash),
            )
        )
        at = min(int(np.searchsorted(x, float(x[-1]) ** LABEL_AT)), len(x) - 1) if len(x) else -1
        if at >= 0 and np.isfinite(y[at]):
            text = short if solid else f"{short} (indicative)"
            labels.append(
                dict(
                    x=math.log10(float(x[at])),
                    y=float(y[at]),
                    text=text,
                    showarrow=True,
                    ax=0,
                    ay=30,
                    arrowhead=0,
                    arrowwidth=1.5,
                    arrowcolor=shade,
                    yanchor="top",
                    font=dict(size=font - 2, color=shade),
                    bgcolor="rgba(255,255,255,0.8)",
                )
            )
    return traces, labels


def _markers(fig: Spec, overlay: dict[str, Any] | None, snapped: Snap | None, xmax: float) -> None:
    """Predicted t′₀ and t₀ (dotted, labelled as predictions) and the measured snap (solid; dashed and
    labelled provisional while the run's first half places it elsewhere), with the phases shaded by what was
    measured: scanning before the snap, snapped after it."""
    snap = snapped.step if snapped else None
    shapes = fig["layout"].setdefault("shapes", [])
    notes = fig["layout"].setdefault("annotations", [])
    rect = dict(type="rect", y0=0, y1=1, xref="x", yref="paper", opacity=0.08, line=dict(width=0), layer="below")
    if snap:
        shapes += [
            {**rect, "x0": 1e-3, "x1": snap, "fillcolor": "#1f77b4"},
            {**rect, "x0": snap, "x1": max(xmax, snap) * 10, "fillcolor": "#ff7f0e"},
            vline(snap, MEASURED["color"], "dash" if snapped.provisional else "solid"),
        ]
        notes.append(_label(snap, snapped.label, xmax, 0.99))
    for key, name, y in (("t0_prime", "scan slows, predicted", 0.87), ("t0", "snap, predicted", 0.75)):
        x = (overlay or {}).get(key)
        if x is not None and np.isfinite(x) and 0 < x <= xmax:
            shapes.append(vline(float(x), PREDICTED["color"], "dot"))
            notes.append(_label(float(x), name, xmax, y))


def _label(x: float, text: str, xmax: float, y: float) -> dict[str, Any]:
    """A marker's label beside its line on the log axis: right of it in the left 60 % of the plot,
    left of it further right (so it stays inside the plot area)."""
    where = math.log10(max(x, 1)) / max(math.log10(max(xmax, 10)), 1e-9)
    return dict(
        x=math.log10(x),
        y=y,
        yref="paper",
        text=text,
        showarrow=False,
        yanchor="top",
        xanchor="left" if where < 0.6 else "right",
        bgcolor="rgba(255,255,255,0.8)",
    )


CAPTION_PX = 360  # a caption line: the narrowest chart (~400 px) less its edges
CAPTION_EM = 0.48  # a caption character's mean width, in font sizes (measured 0.46 in Chromium)


def caption(fig: Spec, text: str) -> Spec:
    """One sentence under the chart saying what to see (inside the figure: no extra page element), from
    the figure's left edge, wrapped to fit the narrowest chart, below the x-axis title, with the margin
    grown to hold it."""
    lay = fig["layout"]
    size = lay["xaxis"]["tickfont"]["size"]
    lines = textwrap.wrap(text, int(CAPTION_PX / (CAPTION_EM * size))) or [""]
    axis = 3 * size + 26  # tick labels and the axis title under the plot area
    lay.setdefault("annotations", []).append(
        dict(
            text="<br>".join(lines),
            x=0,
            xref="paper",
            xanchor="left",
            xshift=10 - lay["margin"]["l"],
            y=0,
            yref="paper",
            yshift=-axis,
            yanchor="top",
            showarrow=False,
            align="left",
            font=dict(size=size, color="#444"),
        )
    )
    need = int(axis + 1.35 * size * len(lines) + 10)
    grow = max(0, need - lay["margin"]["b"])
    lay["margin"]["b"] += grow
    lay["height"] = int(lay["height"] + grow)
    return fig


def _log_x(fig: Spec, xmax: float) -> None:
    fig["layout"]["xaxis"].update(type="log", dtick=1, range=[-0.05, math.log10(max(xmax, 10)) + 0.05])


def _phase_axis(
    fig: Spec, steps: np.ndarray, overlay: dict[str, Any] | None, snap: Snap | None, cursor: float | None
) -> Spec:
    """A log step axis with the predicted t′₀, t₀, the measured snap and its phases, and the cursor."""
    xmax = float(steps.max()) if len(steps) else 10.0
    _markers(fig, overlay, snap, xmax)
    cursor_line(fig, cursor)
    _log_x(fig, xmax)
    return fig


def entropy_chart(
    steps: np.ndarray,
    H: np.ndarray,
    overlay: dict[str, Any] | None,
    snap: Snap | None,
    font: int = FONT,
    cursor: float | None = None,
) -> Spec:
    """H(c_n) on distinct tokens vs step (log); phases shaded by the measured snap, predictions marked."""
    pos = steps > 0
    keep = decimate(int(pos.sum()), MAX_POINTS)
    trace = dict(
        type="scatter",
        x=steps[pos][keep].tolist(),
        y=jl(H[pos][keep], 6),
        mode="lines+markers",
        name=label("entropy_distinct"),
        line=dict(color="#2c3e50", width=3),
        marker=dict(size=5),
    )
    fig = spec([trace], "Attention entropy on distinct tokens", font, "H", "step (log)", "entropy H (nats)")
    return _phase_axis(fig, steps, overlay, snap, cursor)


def snap_chart(
    steps: np.ndarray,
    dz_common: np.ndarray,
    B_hat: np.ndarray,
    overlay: dict[str, Any] | None,
    snap: Snap | None,
    n: int | str,
    font: int = FONT,
    cursor: float | None = None,
    indicative: bool = False,
) -> Spec:
    """The snap: −Δz of the common token(s) (its largest move) and B̂_n, measured, with calibrated
    Theorem 4 (in the measurement's colours if its conditions hold; where they fail, in greys named
    indicative, and only with ``indicative``), on a log step axis, each theory line labelled on it."""
    pos = steps > 0
    keep = decimate(int(pos.sum()), MAX_POINTS)
    x = steps[pos][keep].tolist()
    traces = [
        dict(
            type="scatter",
            x=x,
            y=jl(dz_common[pos][keep]),
            mode="lines+markers",
            name="the common token's drop −Δz, measured",
            line=dict(color="#d35400", width=3.5),
            marker=dict(size=5),
        ),
        dict(
            type="scatter",
            x=x,
            y=jl(B_hat[pos][keep]),
            mode="lines",
            name="total growth B̂, measured",
            line=dict(color="#1f77b4", width=3),
        ),
    ]
    labels: list[Spec] = []
    if overlay and "step" in overlay and (overlay.get("solid") or indicative):
        more, labels = theory_traces(overlay, font)
        traces += more
    title = f"The snap: the common token's logit drop and the total growth B̂ (n = {n})"
    fig = spec(traces, title, font, "B", "step (log)", "logit change (nats)")
    fig["layout"].setdefault("annotations", []).extend(labels)
    if labels and "C0" in overlay:  # Theorem 4's constant from the run's initial state, beside its curves
        constant = f"Theorem 4's constant C₀ = ρ₀⁴/K = {overlay['C0']:.3g}"
        fig["layout"]["legend"].setdefault("title", {})["text"] = constant
    return _phase_axis(fig, steps, overlay, snap, cursor)


BRACKET_NAMES = {  # short legend names (the metrics' full labels name them on the axes of other pages)
    "bracket_lo": "lower end f²(0) × growth B̂",
    "B_hat": "upper end, total growth B̂",
    "dz_dominant": "the winner's logit change Δz",
}


def bracket_chart(
    steps: np.ndarray,
    B_hat: np.ndarray,
    dz: np.ndarray,
    lo: np.ndarray,
    n: int | str,
    font: int = FONT,
    cursor: float | None = None,
) -> Spec:
    """Theorem 3's bracket: the dominant distinct token's Δz between f²(0)·B̂_n and B̂_n."""
    keep = decimate(len(steps), MAX_POINTS)
    x = steps[keep].tolist()
    traces = [
        dict(
            type="scatter",
            x=x,
            y=jl(lo[keep]),
            mode="lines",
            name=BRACKET_NAMES["bracket_lo"],
            line=dict(color="#2ca02c", width=1.5),
        ),
        dict(
            type="scatter",
            x=x,
            y=jl(B_hat[keep]),
            mode="lines",
            name=BRACKET_NAMES["B_hat"],
            fill="tonexty",
            fillcolor="rgba(44,160,44,0.15)",
            line=dict(color="#1f77b4", width=2.5),
        ),
        dict(
            type="scatter",
            x=x,
            y=jl(dz[keep]),
            mode="lines+markers",
            name=BRACKET_NAMES["dz_dominant"],
            line=dict(color="#d62728", width=3),
            marker=dict(size=5),
        ),
    ]
    fig = spec(
        traces, f"Theorem 3: the winner's logit change Δz in its bracket (n = {n})", font, "bracket", "step", "nats"
    )
    cursor_line(fig, cursor)
    return _long_runs_on_log_x(fig, steps)


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
                name=label("loss"),
                line=dict(color="#8c564b", width=3),
            ),
            dict(
                type="scatter",
                x=x,
                y=jl(acc[keep]),
                name=label("accuracy"),
                yaxis="y2",
                line=dict(color="#17becf", width=3),
            ),
        ],
        "Loss and accuracy (all classes, T→∞ contexts)",
        font,
        "loss",
        "step",
        "loss (nats, log)",
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
    lay["margin"]["r"] = 40 + 3 * font
    return _long_runs_on_log_x(fig, steps)


def to_json(fig: Spec | go.Figure) -> str:
    return json.dumps(fig, separators=(",", ":")) if isinstance(fig, dict) else fig.to_json()


def payload_bytes(figs: list[Spec | go.Figure]) -> int:
    """Bytes of JSON these figures send to the browser (what one live tick costs)."""
    return sum(len(to_json(f)) for f in figs)
