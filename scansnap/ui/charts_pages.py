"""Figure builders of the Theory, Compare and Sweep pages (no streamlit here)."""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from scansnap.core.metrics import html_label, html_subscripts, is_log
from scansnap.paper.history import decimate, rnd
from scansnap.ui.chart_style import FONT, THEORY, plotly_text, style, wrap_html
from scansnap.ui.result_words import column_label, log_ticks, tick_text
from scansnap.ui.settings_words import setting_label, value_words

AXES = ("t", "ln t", "ln ln t")
LEGEND_CHARS = 60  # a Compare legend entry's line (the chart is the page's width: ≥ 1,100 px at 1280×720)
# Tick labels on the Sweep page's log axes (a chart half the page wide: ~400 px of plot at 1280×720, ~300 px
# tall): at most this many, spaced evenly enough in log η that "0.05" or "2.5e3" at 15 px never touch.
MAX_X_TICKS, MAX_Y_TICKS = 7, 8


def _log_axis(values: Any, max_ticks: int) -> dict[str, Any]:
    """A log axis of learning rates: compact tick labels (0.5, 1, 2, 1e3), no more than ``max_ticks``."""
    ticks = log_ticks(list(values), max_ticks)
    return dict(type="log", tickvals=ticks, ticktext=[tick_text(v) for v in ticks], tickangle=0)


def _axis(t: np.ndarray, mode: str, M: float, K: float, eta_y: float) -> tuple[np.ndarray, str]:
    if mode == "ln t":
        return np.log(t), "ln t"
    if mode == "ln ln t":
        return np.log(np.log(M * eta_y * t / K)), "ln ln(M η<sub>Y</sub> t / K)"
    return t, "t (single-sample updates)"


def theorem4(th: dict[str, Any], mode: str, M: float, K: float, eta_y: float, font: int = FONT) -> go.Figure:
    """B_n(t) (Eqn. 129) with its scanning and snapping forms, t′₀ and t₀ marked."""
    t = np.asarray(th["t"])
    ok = M * eta_y * t / K > 1.0 if mode == "ln ln t" else t > 0
    x, label = _axis(t[ok], mode, M, K, eta_y)
    fig = go.Figure()
    fig.add_trace(
        go.Scatter(
            x=rnd(x).tolist(),
            y=rnd(th["B_n"][ok]).tolist(),
            name="B<sub>n</sub> (exact in h)",
            line=dict(color="#1f77b4", width=3.5),
        )
    )
    for key, color, name, mask in (
        ("B_scan", "#2ca02c", "B<sub>n</sub>, scanning form (t < t′₀)", t[ok] < th["t0_prime"] * 1.5),
        ("B_snap", "#ff7f0e", "B<sub>n</sub>, snapping form (t ≥ t₀)", t[ok] > th["t0"] / 1.5),
    ):
        fig.add_trace(
            go.Scatter(
                x=rnd(x[mask]).tolist(),
                y=rnd(np.asarray(th[key])[ok][mask]).tolist(),
                name=name,
                line=dict(color=color, **THEORY),
            )
        )
    for tv, name, anchor in (
        (th["t0_prime"], "t′₀ = K ln M/η<sub>Y</sub> ", "right"),
        (th["t0"], " t₀ = 2K ln M/η<sub>Y</sub>", "left"),
    ):
        xv, _ = _axis(np.array([tv]), mode, M, K, eta_y)
        if np.isfinite(xv[0]):
            fig.add_vline(x=float(xv[0]), line=dict(color="#555", dash="dot", width=2))
            fig.add_annotation(  # inside the plot's top: the legend is above the plot
                x=float(xv[0]),
                y=1,
                yref="paper",
                text=name,
                showarrow=False,
                yanchor="top",
                xanchor=anchor,
                bgcolor="rgba(255,255,255,0.8)",
            )
    return style(fig, f"Theorem 4: B<sub>n</sub>(t) vs {label}", font, "thm4", label, "B<sub>n</sub>", height=460)


def joma(lin: dict[str, np.ndarray], nonlin: dict[str, np.ndarray], font: int = FONT) -> go.Figure:
    """JoMA attention entropy: linear (only sparser) vs nonlinear (sparser, then denser)."""
    fig = go.Figure()
    for sim, name, color in ((lin, "linear activation", "#1f77b4"), (nonlin, "nonlinear activation", "#d62728")):
        k = decimate(len(sim["iteration"]), 400)
        fig.add_trace(
            go.Scatter(
                x=sim["iteration"][k].tolist(),
                y=rnd(sim["entropy"][k]).tolist(),
                name=name,
                line=dict(color=color, width=3),
            )
        )
    return style(fig, "JoMA: attention entropy during training", font, "joma", "iteration", "entropy (nats)")


def overlay(series: list[tuple[str, np.ndarray, np.ndarray]], metric: str, logx: bool, font: int = FONT) -> go.Figure:
    """One line per stored run; the legend says how their configs differ.  A metric registered as
    log-scaled (a loss) is drawn on a log y axis: on a linear one its curves collapse onto 0."""
    fig = go.Figure()
    colors = qualitative.D3
    logy = is_log(metric)
    for i, (label, x, y) in enumerate(series):
        k = decimate(len(x), 500)
        xs, ys = x[k], y[k]
        keep = np.ones(len(xs), dtype=bool)
        if logx:
            keep &= xs > 0
        if logy:
            keep &= ys > 0  # a log axis cannot place 0 (or NaN)
        xs, ys = xs[keep], ys[keep]
        fig.add_trace(
            go.Scatter(
                x=xs.tolist(),
                y=rnd(ys).tolist(),
                name="<br>".join(wrap_html(plotly_text(label), LEGEND_CHARS)),  # a name is text, not HTML
                mode="lines",
                line=dict(color=colors[i % len(colors)], width=3),
            )
        )
    name = html_label(metric)
    style(fig, f"{name} across runs", font, "cmp", "step (log)" if logx else "step", _log_title(name, logy), 480)
    if logx:
        fig.update_xaxes(type="log", dtick=1)  # decades only: minor tick labels crowd the axis
    if logy:
        fig.update_yaxes(type="log", exponentformat="power")
    return fig


def _log_title(name: str, log: bool) -> str:
    return f"{name} (log)" if log else name


def sweep_lines(summary: Any, metric: str = "entropy_distinct", font: int = FONT) -> go.Figure:
    """Final metric vs η_Y/η_Z, mean ± SEM over seeds, one line per η_Z (the paper's Fig. 6 layout)."""
    fig = go.Figure()
    for i, (ez, g) in enumerate(summary.groupby("eta_z")):
        g = g.sort_values("ratio")
        fig.add_trace(
            go.Scatter(
                x=g["ratio"].tolist(),
                y=rnd(g["mean"]).tolist(),
                name=f"η<sub>Z</sub> = {tick_text(ez)}",
                error_y=dict(type="data", array=rnd(g["sem"]).tolist(), visible=True),
                mode="lines+markers",
                line=dict(width=3, color=qualitative.D3[i % 10]),
            )
        )
    ratios = sorted(summary["ratio"].unique())
    name, logy = html_label(metric), is_log(metric)
    title = html_subscripts(f"final {name} vs η_Y/η_Z (mean ± SEM over seeds)")
    style(fig, title, font, "sweep", html_subscripts("η_Y/η_Z (log)"), _log_title(name, logy), height=440)
    fig.update_xaxes(**_log_axis(ratios, MAX_X_TICKS))
    if logy:
        fig.update_yaxes(type="log", exponentformat="power")
    return fig


def sweep_heatmap(summary: Any, metric: str = "entropy_distinct", font: int = FONT) -> go.Figure:
    """The final metric at each trained (η_Z, η_Y) point: square markers on log-log axes coloured by
    the mean over seeds (a sweep over ratios fills a diagonal band, not a full grid)."""
    ez, ey, mean = summary["eta_z"].to_numpy(), summary["eta_y"].to_numpy(), summary["mean"].to_numpy()
    size = max(18, 46 - 2 * len(np.unique(ez)))
    span = float(np.ptp(mean)) or 1.0
    ink = ["black" if (v - mean.min()) / span > 0.55 else "white" for v in mean]  # readable on Viridis
    fig = go.Figure(
        go.Scatter(
            x=ez.tolist(),
            y=ey.tolist(),
            mode="markers+text",
            text=[f"{v:.2f}" for v in mean],
            textposition="middle center",
            textfont=dict(size=max(font - 4, 10), color=ink),
            marker=dict(
                symbol="square",
                size=size,
                color=rnd(mean).tolist(),
                colorscale="Viridis",
                colorbar=dict(title=dict(text=html_label(metric), side="right")),  # a long label reads upwards
                line=dict(width=0),
            ),
            customdata=np.c_[summary["ratio"].to_numpy(), summary["sem"].to_numpy()].tolist(),
            hovertemplate="η<sub>Z</sub>=%{x:g}, η<sub>Y</sub>=%{y:g} (ratio %{customdata[0]:g}): "
            "%{marker.color} ± %{customdata[1]:.3f}<extra></extra>",
        )
    )
    fig.update_xaxes(**_log_axis(np.unique(ez), MAX_X_TICKS))
    fig.update_yaxes(**_log_axis(np.unique(ey), MAX_Y_TICKS))
    title = html_subscripts(f"final {html_label(metric)} over (η_Z, η_Y) (mean over seeds)")
    return style(fig, title, font, "sweeph", html_subscripts("η_Z (log)"), html_subscripts("η_Y (log)"), height=440)


def _html_words(text: str) -> str:
    """A label for figure text: escaped (it is text, not HTML), its subscripts drawn (``η_Y`` → η<sub>Y</sub>)."""
    return html_subscripts(plotly_text(text))


def _html_phrase(key: str, value: Any, kind: str) -> str:
    """``phrase`` for figure text: the setting's label with its subscripts, the value as it is (a file name's
    underscores stay underscores)."""
    return f"{_html_words(setting_label(key, kind))} = {plotly_text(value_words(key, value))}"


def grid_chart(summary: Any, keys: list[str], metric: str, font: int = FONT, kind: str = "synthetic") -> go.Figure:
    """A grid's final ``metric`` per cell: a dot per seed and the mean over seeds as a line, against
    the first axis, one colour per value of the second (every other axis: its own line too); the axes
    and the metric in words (a ``kind`` run's setting labels, the metric's label and unit)."""
    fig = go.Figure()
    x = keys[0] if keys else "seed"
    by = keys[1:]
    groups = summary.groupby([summary[k].astype(str) for k in by]) if by else [((), summary)]
    for i, (_, g) in enumerate(groups):
        name = ", ".join(_html_phrase(k, g[k].iloc[0], kind) for k in by) or _html_words(column_label(metric))
        colour = qualitative.D3[i % 10]
        xs = g[x].map(lambda v: value_words(x, v))
        mean = g.assign(_x=xs).groupby("_x", sort=False)[metric].mean()
        dots = dict(size=9, color=colour, opacity=0.5)
        fig.add_trace(
            go.Scatter(
                x=xs.tolist(),
                y=rnd(g[metric]).tolist(),
                mode="markers",
                showlegend=False,
                marker=dots,
                name=name,
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=mean.index.tolist(),
                y=rnd(mean).tolist(),
                mode="lines+markers",
                name=name,
                line=dict(width=3, color=colour),
                marker=dict(size=11),
            )
        )
    name = _html_words(column_label(metric))
    title = f"final {name}: seeds (dots), their mean (line)"
    x_title = "seed" if x == "seed" else setting_label(x, kind)
    style(fig, title, font, "grid", _html_words(x_title), name, height=440)
    fig.update_xaxes(type="category")
    return fig
