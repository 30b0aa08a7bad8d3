"""Figure builders of the Theory, Compare and Sweep pages (no streamlit here)."""

from __future__ import annotations

import html
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import qualitative

from engine.paper.history import decimate, rnd
from ui.chart_style import FONT, THEORY, style

AXES = ("t", "ln t", "ln ln t")


def _axis(t: np.ndarray, mode: str, M: float, K: float, eta_y: float) -> tuple[np.ndarray, str]:
    if mode == "ln t":
        return np.log(t), "ln t"
    if mode == "ln ln t":
        return np.log(np.log(M * eta_y * t / K)), "ln ln(M η_Y t / K)"
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
            name="B_n (exact in h)",
            line=dict(color="#1f77b4", width=3.5),
        )
    )
    for key, color, name, mask in (
        ("B_scan", "#2ca02c", "B_scan (t < t′₀)", t[ok] < th["t0_prime"] * 1.5),
        ("B_snap", "#ff7f0e", "B_snap (t ≥ t₀)", t[ok] > th["t0"] / 1.5),
    ):
        fig.add_trace(
            go.Scatter(
                x=rnd(x[mask]).tolist(),
                y=rnd(np.asarray(th[key])[ok][mask]).tolist(),
                name=name,
                line=dict(color=color, **THEORY),
            )
        )
    for tv, name, anchor in ((th["t0_prime"], "t′₀ = K ln M/η_Y ", "right"), (th["t0"], " t₀ = 2K ln M/η_Y", "left")):
        xv, _ = _axis(np.array([tv]), mode, M, K, eta_y)
        if np.isfinite(xv[0]):
            fig.add_vline(x=float(xv[0]), line=dict(color="#555", dash="dot", width=2))
            fig.add_annotation(
                x=float(xv[0]), y=1, yref="paper", text=name, showarrow=False, yanchor="bottom", xanchor=anchor
            )
    return style(fig, f"Theorem 4: B_n(t) vs {label}", font, "thm4", label, "B_n", height=460)


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
    return style(fig, "JoMA: attention entropy (nats) during training", font, "joma", "iteration", "entropy")


def overlay(series: list[tuple[str, np.ndarray, np.ndarray]], metric: str, logx: bool, font: int = FONT) -> go.Figure:
    """One line per stored run; the legend says how their configs differ."""
    fig = go.Figure()
    colors = qualitative.D3
    for i, (label, x, y) in enumerate(series):
        k = decimate(len(x), 500)
        xs, ys = x[k], y[k]
        if logx:
            xs, ys = xs[xs > 0], ys[xs > 0]
        fig.add_trace(
            go.Scatter(
                x=xs.tolist(),
                y=rnd(ys).tolist(),
                name=html.escape(label),  # a run's name is text: plotly would render HTML in a legend
                mode="lines",
                line=dict(color=colors[i % len(colors)], width=3),
            )
        )
    if logx:
        fig.update_xaxes(type="log", dtick=1)  # decades only: minor tick labels crowd the axis
    fig.update_layout(legend=dict(orientation="h", y=-0.25))
    return style(fig, f"{metric} across runs", font, "cmp", "step", metric, height=480)


def sweep_lines(summary: Any, metric: str = "entropy_distinct", font: int = FONT) -> go.Figure:
    """Final metric vs η_Y/η_Z, mean ± SEM over seeds, one line per η_Z (the paper's Fig. 6 layout)."""
    fig = go.Figure()
    for i, (ez, g) in enumerate(summary.groupby("eta_z")):
        g = g.sort_values("ratio")
        fig.add_trace(
            go.Scatter(
                x=g["ratio"].tolist(),
                y=rnd(g["mean"]).tolist(),
                name=f"η_Z={ez:g}",
                error_y=dict(type="data", array=rnd(g["sem"]).tolist(), visible=True),
                mode="lines+markers",
                line=dict(width=3, color=qualitative.D3[i % 10]),
            )
        )
    ratios = sorted(summary["ratio"].unique())
    fig.update_xaxes(type="log", tickvals=ratios, ticktext=[f"{r:g}" for r in ratios])
    return style(
        fig, f"final {metric} vs η_Y/η_Z (mean ± SEM over seeds)", font, "sweep", "η_Y/η_Z (log)", metric, height=440
    )


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
                colorbar=dict(title=dict(text=metric)),
                line=dict(width=0),
            ),
            customdata=np.c_[summary["ratio"].to_numpy(), summary["sem"].to_numpy()].tolist(),
            hovertemplate="η_Z=%{x:g}, η_Y=%{y:g} (ratio %{customdata[0]:g}): %{marker.color} ± %{customdata[1]:.3f}"
            "<extra></extra>",
        )
    )
    xs, ys = sorted(np.unique(ez)), sorted(np.unique(ey))
    fig.update_xaxes(type="log", tickvals=xs, ticktext=[f"{v:g}" for v in xs])
    fig.update_yaxes(type="log", tickvals=ys, ticktext=[f"{v:g}" for v in ys])
    return style(
        fig, f"final {metric} over (η_Z, η_Y) (mean over seeds)", font, "sweeph", "η_Z (log)", "η_Y (log)", height=440
    )
