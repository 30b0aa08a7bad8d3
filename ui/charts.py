"""Plotly figure builders (no streamlit here, so they are unit-testable).

Builders take plain arrays (shaped by ``engine.paper.views``).  The six live charts return a plain
figure dict (``Spec``: {"data": [...], "layout": {...}}, JSON-ready): they are rebuilt on every
0.5 s tick and plotly's object model (validation, deep copies) cost ~10× more than the data.
The P(l|n) preview returns a ``go.Figure``.  Colours are per token and the same
in every chart: distinct tokens on a Viridis scale by their P(l|n) rank within the class
(dark = most likely), common tokens grey.  Theory is dashed.  Trace names use the engine's
metric names verbatim.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots  # P(l|n) preview

from engine.paper.views import TokenInfo, decimate, rnd

Spec = dict[str, Any]
COMMON_GREY = "#9a9a9a"
THEORY: dict[str, Any] = dict(dash="dash", width=2.5)
FONT = 15
LECTURE_FONT = 22
MAX_POINTS = 150  # points per trace in live charts
MAX_CHART_POINTS = 4000  # points per chart: many-token charts get fewer points a line


def plot_config(filename: str) -> dict[str, Any]:
    """Streamlit ``config=``: PNG download at 2× with a meaningful file name, no logo."""
    return {"toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}, "displaylogo": False}


COLOR_LEVELS = 6  # shades of distinct tokens: one trace per shade keeps a live chart's redraw cheap


def colour_levels(info: TokenInfo) -> np.ndarray:
    """Each distinct token's P(l|n) rank quantised to ``COLOR_LEVELS`` shades (0 = smallest P)."""
    return np.rint(np.asarray(info.rank) * (COLOR_LEVELS - 1)).astype(np.int64)


def token_colors(info: TokenInfo) -> list[str]:
    """Distinct tokens on Viridis by their P(l|n) rank in ``COLOR_LEVELS`` shades (darker =
    larger P), common tokens grey."""
    r = 0.85 - 0.8 * colour_levels(info) / (COLOR_LEVELS - 1)
    return list(_token_colors(tuple(np.round(r, 6).tolist()), tuple(int(k) for k in info.kind)))


@functools.lru_cache(maxsize=256)
def _token_colors(r: tuple[float, ...], kind: tuple[int, ...]) -> tuple[str, ...]:
    """Cached: plotly's colour-scale sampling validates every colour (~3 ms a call), and the
    ranks only change with the run's P(l|n), not from one live tick to the next."""
    dist = sample_colorscale("Viridis", list(r))
    return tuple(dist[i] if k == 1 else COMMON_GREY for i, k in enumerate(kind))


def jl(a: Any, digits: int = 4) -> list[float | None]:
    """A JSON-safe rounded list (NaN/inf → null, as plotly's own serialiser does)."""
    return [v if math.isfinite(v) else None for v in rnd(a, digits).ravel().tolist()]


def layout_style(title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> dict[str, Any]:
    """Shared layout: readable fonts (≥ 14 px), white background, ``uirevision`` = ``key``."""
    axis = dict(
        title=dict(text="", font=dict(size=font)),
        tickfont=dict(size=font - 1),
        gridcolor="#e6e6e6",
        zerolinecolor="#bdbdbd",
        linecolor="#bdbdbd",
        automargin=True,
    )
    return dict(
        title=dict(text=f"<b>{title}</b>", font=dict(size=font + 3), x=0.01, xanchor="left"),
        font=dict(size=font),
        uirevision=key,
        paper_bgcolor="white",
        plot_bgcolor="white",
        height=height + 4 * (font - FONT),
        margin=dict(l=60, r=20, t=60 + 2 * (font - FONT), b=50),
        legend=dict(font=dict(size=font - 2)),
        hoverlabel=dict(font=dict(size=font)),
        xaxis={**axis, "title": dict(text=x, font=dict(size=font))},
        yaxis={**axis, "title": dict(text=y, font=dict(size=font))},
    )


def style(fig: go.Figure, title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> go.Figure:
    lay = layout_style(title, font, key, x, y, height)
    xa, ya = lay.pop("xaxis"), lay.pop("yaxis")
    fig.update_layout(lay)
    fig.update_xaxes(
        title_text=x, title_font_size=font, tickfont_size=font - 1, gridcolor=xa["gridcolor"], automargin=True
    )
    fig.update_yaxes(
        title_text=y, title_font_size=font, tickfont_size=font - 1, gridcolor=ya["gridcolor"], automargin=True
    )
    return fig


def spec(
    traces: list[dict[str, Any]], title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380
) -> Spec:
    return {"data": traces, "layout": layout_style(title, font, key, x, y, height)}


def _vline(x: float, color: str = "#555", dash: str = "dot") -> dict[str, Any]:
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, xref="x", yref="paper", line=dict(color=color, width=2, dash=dash))


def _cursor(fig: Spec, cursor: float | None) -> None:
    if cursor is not None:
        fig["layout"].setdefault("shapes", []).append(_vline(max(cursor, 1e-9), "#d62728"))


MAX_LINES = 40  # token lines per chart: a 100-token class at 150 points a line outgrew 200 KB a tick


def shown_tokens(tokens: np.ndarray, info: TokenInfo, limit: int = MAX_LINES) -> np.ndarray:
    """At most ``limit`` of ``tokens`` to draw: the distinct ones with the largest P(l|n) first,
    then common ones (all alike: grey, suppressed together) in the room left, at least 4."""
    tokens = np.asarray(tokens)
    if len(tokens) <= limit:
        return tokens
    dist = sorted((t for t in tokens if info.kind[t] == 1), key=lambda t: -info.p[t])
    common = [t for t in tokens if info.kind[t] != 1]
    n_common = min(len(common), max(4, limit - len(dist)))
    return np.sort(np.array(dist[: limit - n_common] + common[:n_common], dtype=np.int64))


def _token_traces(
    steps: np.ndarray,
    Y: np.ndarray,
    tokens: np.ndarray,
    info: TokenInfo,
    label: str,
    mf: tuple[np.ndarray, np.ndarray] | None,
) -> list[dict[str, Any]]:
    """One line per token of ``tokens`` (at most :data:`MAX_LINES`), drawn as one trace per colour
    (P-rank shade, or common grey): lines split by gaps, each point's ``customdata`` its token l
    (for the hover).  Each trace costs plotly ~1.2 ms a redraw however few its points
    (``bench/chart_draw.py``)."""
    colors = token_colors(info)
    hidden = len(tokens) - len(tokens := shown_tokens(tokens, info))
    lines = len(tokens) + (sum(info.kind[t] == 1 for t in tokens) if mf is not None else 0)
    per_line = max(40, min(MAX_POINTS, MAX_CHART_POINTS // max(lines, 1)))
    keep = decimate(len(steps), per_line)
    groups = _colour_groups(tokens, info)
    out = [
        _lines(
            steps[keep],
            Y[keep],
            group,
            name=name or kind,
            showlegend=bool(name),
            color=colors[group[0]],
            width=1.5 if kind == "common" else 2.5,
            hovertemplate=f"{label} l=%{{customdata}} ({kind})<br>step %{{x}}: %{{y}}<extra></extra>",
        )
        for group, kind, name in groups
    ]
    if hidden:
        out.append(
            dict(
                type="scatter",
                x=[None],
                y=[None],
                mode="lines",
                line=dict(width=0),
                name=f"+{hidden} tokens of smallest P not drawn",
            )
        )
    if mf is not None:
        ms, MY = mf
        mk = decimate(len(ms), per_line)
        dist = [group for group, kind, _ in groups if kind == "distinct"]
        for i, group in enumerate(dist):
            out.append(
                _lines(
                    ms[mk],
                    MY[mk],
                    group,
                    name="mean-field (T→∞)",
                    legendgroup="mf",
                    showlegend=i == 0,
                    color=colors[group[0]],
                    width=THEORY["width"],
                    dash=THEORY["dash"],
                    opacity=0.8,
                    hoverinfo="skip",
                )
            )
    return out


def _colour_groups(tokens: np.ndarray, info: TokenInfo) -> list[tuple[list[int], str, str]]:
    """``tokens`` grouped by colour, largest P first, then the common ones: (tokens, kind, legend
    name, "" for none).  The legend names three groups: highest-P and lowest-P distinct, common."""
    level = colour_levels(info)
    shades = sorted({int(level[t]) for t in tokens if info.kind[t] == 1}, reverse=True)
    groups = []
    for i, lv in enumerate(shades):
        name = (
            "distinct"
            if len(shades) == 1
            else "distinct, highest P(l|n)"
            if i == 0
            else "distinct, lowest P(l|n)"
            if i == len(shades) - 1
            else ""
        )
        groups.append(([int(t) for t in tokens if info.kind[t] == 1 and level[t] == lv], "distinct", name))
    common = [int(t) for t in tokens if info.kind[t] != 1]
    return groups + ([(common, "common", "common")] if common else [])


def _lines(
    x: np.ndarray, Y: np.ndarray, tokens: list[int], color: str, width: float, dash: str | None = None, **trace: Any
) -> dict[str, Any]:
    """Columns ``tokens`` of ``Y`` (rows at steps ``x``) as one scatter trace, lines split by gaps."""
    xs: list[Any] = []
    ys: list[Any] = []
    cd: list[Any] = []
    xl = x.tolist()
    for l in tokens:  # noqa: E741 - l is the paper's token index
        xs += [*xl, None]
        ys += [*jl(Y[:, l]), None]
        cd += [*([l] * len(xl)), None]
    line = dict(color=color, width=width, **({"dash": dash} if dash else {}))
    return dict(type="scatter", x=xs[:-1], y=ys[:-1], customdata=cd[:-1], mode="lines", line=line, **trace)


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
        _token_traces(steps, C, supp, info, "c", mf),
        f"c_n over time, next token n={n} · step {step}",
        font,
        "cn",
        "step",
        "c(l|n)",
    )
    _cursor(fig, cursor)
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
        _token_traces(steps, Z, tokens, info, "z", mf),
        f"z_m trajectories, query q={q} (dashed: mean-field T→∞)",
        font,
        "z",
        "step",
        "z(m,l)",
    )
    _cursor(fig, cursor)
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
            _vline(t1),
            _vline(t0),
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
    _cursor(fig, cursor)
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
    _cursor(fig, cursor)
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
    _cursor(fig, cursor)
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


def p_preview(P: np.ndarray, psi: np.ndarray, token_kind: np.ndarray, font: int = FONT) -> go.Figure:
    """P(l|n): rows = next tokens grouped by query, columns = tokens; a strip marks each token's kind."""
    order = np.argsort(psi, kind="stable")
    glob = np.where((token_kind == 2).any(0), 2, np.where((token_kind == 1).any(0), 1, 0))
    fig = make_subplots(rows=2, cols=1, row_heights=[0.1, 0.9], shared_xaxes=True, vertical_spacing=0.03)
    fig.add_trace(
        go.Heatmap(
            z=[glob.tolist()],
            colorscale=[[0, "#ffffff"], [0.5, "#440154"], [1, COMMON_GREY]],
            zmin=0,
            zmax=2,
            showscale=False,
            y=["kind"],
            hovertemplate="l=%{x}: %{customdata}<extra></extra>",
            customdata=[[("—", "distinct", "common")[k] for k in glob]],
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Heatmap(
            z=rnd(P[order], 3).tolist(),
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
    style(
        fig,
        "P(l|n) preview · strip: purple = distinct, grey = common",
        font,
        "P",
        "",
        "",
        height=max(320, 90 + 28 * len(order)),
    )
    fig.update_xaxes(title_text="token l", row=2, col=1)
    return fig


def to_json(fig: Spec | go.Figure) -> str:
    return json.dumps(fig, separators=(",", ":")) if isinstance(fig, dict) else fig.to_json()


def payload_bytes(figs: list[Spec | go.Figure]) -> int:
    """Bytes of JSON these figures send to the browser (what one live tick costs)."""
    return sum(len(to_json(f)) for f in figs)
