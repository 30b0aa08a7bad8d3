"""Fig. 9 (App. F): Theorem 4's B_n(t) = ¼ ln(C_0 + 2(η_Z/η_Y) K (M−1)² h(t/K)²) (Eqn. 129).

Left: ν = η_Y/η_Z = 10, M = 100, t ∈ [0, 5]; right: ν = 1, M = 10⁴, t ∈ [0, 50]; η_Z ∈ {0.5, 1,
2, 4, 8}; K = 1, C_0 = 1 (science §5 [INFERRED], which reproduces the paper's ranges).  Dotted
lines mark t_0 = 2K ln M/η_Y (without ω_1), dots mark B_n(t_0), which depends on K, M, ν only.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.core.metrics import html_subscripts
from scansnap.kinds.synthetic.paper.items import ITEMS
from scansnap.kinds.synthetic.science import theory
from scansnap.paper import verdicts as vd
from scansnap.paper.items.result import ItemResult, Progress

NAME = "fig9"
TITLE = ITEMS[NAME].title
K, C0 = 1.0, 1.0
ETA_Z = (0.5, 1.0, 2.0, 4.0, 8.0)
PANELS = (
    {"nu": 10.0, "M": 100.0, "t_max": 5.0, "paper_B_t0": 0.51},
    {"nu": 1.0, "M": 10_000.0, "t_max": 50.0, "paper_B_t0": 1.38},
)


def curves(n_t: int = 400) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(curves: nu, M, eta_z, eta_y, t, B_n) and (t0: nu, M, eta_z, eta_y, t0, B_t0)."""
    rows, dots = [], []
    for p in PANELS:
        t = np.linspace(0.0, p["t_max"], n_t)
        for ez in ETA_Z:
            ey = p["nu"] * ez
            B = np.asarray(theory.B_exact(t, p["M"], K, ey, ez, C0))
            rows.append(pd.DataFrame({"nu": p["nu"], "M": p["M"], "eta_z": ez, "eta_y": ey, "t": t, "B_n": B}))
            t0 = theory.t0(p["M"], K, ey)
            dots.append((p["nu"], p["M"], ez, ey, t0, float(theory.B_exact(t0, p["M"], K, ey, ez, C0))))
    return (pd.concat(rows, ignore_index=True), pd.DataFrame(dots, columns=["nu", "M", "eta_z", "eta_y", "t0", "B_t0"]))


def figure(cur: pd.DataFrame, dots: pd.DataFrame) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=[f"ν = {p['nu']:g}, M = {p['M']:g}" for p in PANELS])
    colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd"]
    for j, p in enumerate(PANELS):
        for i, ez in enumerate(ETA_Z):
            c = cur[(cur["nu"] == p["nu"]) & (cur["eta_z"] == ez)]
            d = dots[(dots["nu"] == p["nu"]) & (dots["eta_z"] == ez)].iloc[0]
            fig.add_trace(
                go.Scatter(
                    x=c["t"],
                    y=c["B_n"],
                    mode="lines",
                    name=html_subscripts(f"η_Z = {ez:g}"),
                    legendgroup=str(ez),
                    showlegend=j == 0,
                    line={"color": colors[i]},
                ),
                row=1,
                col=j + 1,
            )
            fig.add_trace(
                go.Scatter(
                    x=[d["t0"], d["t0"]],
                    y=[0, d["B_t0"]],
                    mode="lines",
                    showlegend=False,
                    line={"color": colors[i], "dash": "dot"},
                    hoverinfo="skip",
                ),
                row=1,
                col=j + 1,
            )
            fig.add_trace(
                go.Scatter(
                    x=[d["t0"]],
                    y=[d["B_t0"]],
                    mode="markers",
                    showlegend=False,
                    marker={"color": colors[i], "size": 8},
                    hovertemplate="t₀ = %{x:.4g}<br>B<sub>n</sub>(t₀) = %{y:.4f}<extra></extra>",
                ),
                row=1,
                col=j + 1,
            )
        fig.update_xaxes(title_text="t", range=[0, p["t_max"]], row=1, col=j + 1)
    fig.update_yaxes(title_text="B<sub>n</sub>(t)", row=1, col=1)
    title = "Fig. 9: B_n(t) (Eqn. 129, K = 1, C_0 = 1); dotted: t₀ = 2K ln M/η_Y; dots: B_n(t₀)"
    fig.update_layout(title=html_subscripts(title), height=420)
    return fig


def run(quick: bool = False, progress: Progress | None = None) -> ItemResult:
    cur, dots = curves()
    verdicts = []
    for p in PANELS:
        d = dots[dots["nu"] == p["nu"]]
        verdicts.append(
            vd.same_across(
                NAME,
                f"B_n(t_0) is identical across η_Z at ν = {p['nu']:g}, M = {p['M']:g}",
                "B_n(t_0) over η_Z",
                d["B_t0"],
                rtol=1e-9,
            )
        )
        verdicts.append(
            vd.close_to(
                NAME,
                f"B_n(t_0) matches the paper's dots at ν = {p['nu']:g} (science §5)",
                "B_n(t_0)",
                float(d["B_t0"].mean()),
                p["paper_B_t0"],
                tol=0.01,
            )
        )
    cfg = {
        "K": K,
        "C0": C0,
        "eta_z": list(ETA_Z),
        "panels": list(PANELS),
        "t0": "2 K ln M / eta_y (no omega_1)",
        "B_n": "scansnap.kinds.synthetic.science.theory.B_exact (Eqn. 129)",
    }
    figures = [("Fig. 9 (paper layout)", figure(cur, dots))]
    return ItemResult(NAME, TITLE, verdicts, {"curves": cur, "t0": dots}, figures, {"fig9 theory": cfg})
