"""Figures of the ``theorems`` item (plotly); inputs are the item's tidy frames."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.core.metrics import html_label, html_subscripts

KIND_COLORS = {"common": "#d62728", "distinct": "#1f77b4", "none": "#7f7f7f"}
RUN_COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
B_N = "B<sub>n</sub>"


def signs(frame: pd.DataFrame) -> go.Figure:
    """Δz_{ψ(n),l} per token, one panel per class; bars coloured by common / distinct."""
    classes = sorted(frame["n"].unique())
    fig = make_subplots(rows=1, cols=len(classes), shared_yaxes=True, subplot_titles=[f"n = {n + 1}" for n in classes])
    for j, n in enumerate(classes):
        d = frame[(frame["n"] == n) & (frame["kind"] != "none")]
        for kind, g in d.groupby("kind"):
            fig.add_trace(
                go.Bar(
                    x=g["token"],
                    y=g["dz"],
                    name=str(kind),
                    marker_color=KIND_COLORS[str(kind)],
                    legendgroup=str(kind),
                    showlegend=j == 0,
                ),
                row=1,
                col=j + 1,
            )
        fig.update_xaxes(title_text="token l", row=1, col=j + 1)
    fig.update_yaxes(title_text="Δz<sub>ψ(n),l</sub> = z(10) − z(0)", row=1, col=1)
    fig.update_layout(title="Theorem 2: common logits fall, distinct logits rise (Syn-Small, 10 steps)", height=380)
    return fig


def mean_field(frame: pd.DataFrame) -> go.Figure:
    """Left: r(l₀/l₁|n)(t) and r(0)·exp(2Δz_l₀); right: the bracket f_nl₀(0)²·B̂_n ≤ Δz_l₀ ≤ B̂_n (class n = 1).
    Legends are the metrics' registered labels (:mod:`scansnap.core.metrics`)."""
    d = frame[frame["n"] == 0].pivot_table(index="step", columns="metric", values="value").reset_index()
    fig = make_subplots(rows=1, cols=2, subplot_titles=["Theorem 3 relative gain", "Theorem 3 bracket"])
    for col, dash in (("rel_gain", None), ("rel_gain_pred", "dash")):
        fig.add_trace(go.Scatter(x=d["step"], y=d[col], name=html_label(col), line={"dash": dash}), row=1, col=1)
    for col in ("bracket_lo", "dz_dominant", "B_hat"):
        fig.add_trace(go.Scatter(x=d["step"], y=d[col], name=html_label(col)), row=1, col=2)
    fig.update_xaxes(title_text="step (T→∞ mean field, η = 0.01)")
    fig.update_layout(legend={"orientation": "h", "y": -0.3, "yanchor": "top"}, margin={"b": 150})  # long labels: below
    fig.update_layout(title="Theorem 3 in the T→∞ mean field (Lemma-3 decoder), class n = 1", height=500)
    return fig


def theory_regimes(
    curve: pd.DataFrame, M: float, K: float, eta_y: float, t0p: float, t0: float, slopes: tuple[float, float]
) -> go.Figure:
    """B_n vs ln t (scanning slope) and vs ln ln(Mη_Y t/K) (snapping slope), t′₀ and t₀ marked."""
    lnln = html_subscripts("ln ln(Mη_Y t/K)")
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=[f"vs ln t (scan slope {slopes[0]:.3f})", f"vs {lnln} (snap slope {slopes[1]:.3f})"],
    )
    exact, scan, snap = {"color": "#1f77b4"}, {"color": "#ff7f0e", "dash": "dash"}, {"color": "#2ca02c", "dash": "dash"}
    fig.add_trace(go.Scatter(x=np.log(curve["t"]), y=curve["B_n"], name=B_N + " (Eqn. 129)", line=exact), row=1, col=1)
    fig.add_trace(go.Scatter(x=np.log(curve["t"]), y=curve["B_scan"], name="scanning form", line=scan), row=1, col=1)
    late = curve[M * eta_y * curve["t"] / K > np.e]
    lnln_t = np.log(np.log(M * eta_y * late["t"] / K))
    fig.add_trace(go.Scatter(x=lnln_t, y=late["B_n"], name=B_N, showlegend=False, line=exact), row=1, col=2)
    fig.add_trace(go.Scatter(x=lnln_t, y=late["B_snap"], name="snapping form", line=snap), row=1, col=2)
    for t, lab, pos in ((t0p, "t′₀", "bottom left"), (t0, "t₀", "bottom right")):  # clear of the title
        fig.add_vline(x=float(np.log(t)), line_dash="dot", annotation_text=lab, annotation_position=pos, row=1, col=1)
    fig.update_yaxes(range=[0, 2.5], row=1, col=1)
    fig.update_xaxes(title_text="ln t", row=1, col=1)
    fig.update_xaxes(title_text=lnln, row=1, col=2)
    fig.update_yaxes(title_text=f"{B_N}(t)", row=1, col=1)
    title = html_subscripts(f"Theorem 4 regimes (M = {M:g}, K = {K:g}, η_Y = η_Z = 1, C_0 = 1)")
    fig.update_layout(title=title, height=400)
    return fig


def long_runs(frame: pd.DataFrame) -> go.Figure:
    """Per layout: H(c_n) on distinct tokens vs step (log axis) and B̂_n vs ln t, one line per η_Y."""
    layouts = list(dict.fromkeys(frame["layout"]))
    panels = (html_label("entropy_distinct"), html_subscripts("B̂_n vs ln t"))
    titles = [f"{lay}: {what}" for lay in layouts for what in panels]
    fig = make_subplots(rows=len(layouts), cols=2, subplot_titles=titles, vertical_spacing=0.15)
    for i, lay in enumerate(layouts):
        d = frame[(frame["layout"] == lay) & (frame["n"] >= 0)]
        d = d.groupby(["eta_y", "metric", "step"])["value"].mean().reset_index()  # mean over classes n
        for k, (ey, g) in enumerate(d.groupby("eta_y")):
            h = g[(g["metric"] == "entropy_distinct") & (g["step"] > 0)]
            b = g[(g["metric"] == "B_hat") & (g["step"] > 0)]
            style = {"color": RUN_COLORS[k % len(RUN_COLORS)]}
            fig.add_trace(
                go.Scatter(
                    x=h["step"],
                    y=h["value"],
                    name=html_subscripts(f"η_Y = {ey:g}, η_Z = 1"),
                    line=style,
                    legendgroup=str(ey),
                    showlegend=i == 0,
                ),
                row=i + 1,
                col=1,
            )
            fig.add_trace(
                go.Scatter(
                    x=np.log(b["step"]),
                    y=b["value"],
                    name=html_subscripts(f"η_Y = {ey:g}"),
                    line=style,
                    legendgroup=str(ey),
                    showlegend=False,
                ),
                row=i + 1,
                col=2,
            )
        fig.update_xaxes(type="log", title_text="step", row=i + 1, col=1)
        fig.update_xaxes(title_text="ln t (t = step)", row=i + 1, col=2)
    fig.update_layout(
        title="The snap: 10⁴ sampled SGD steps (zero init, momentum 0.9, batch 128)", height=360 * len(layouts)
    )
    return fig
