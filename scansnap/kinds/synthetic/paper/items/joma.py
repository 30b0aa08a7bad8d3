"""JoMA (science §7): attention entropy of the v-dynamics, nonlinear vs linear MLP.

Euler steps (draw_figure_4.py's settings): μ = sort(U(0,1)·3 + 1) (10 components, numpy seed 0),
v(0) = 0.05·1, η = 0.02, τ = 3, 5000 iterations;
nonlinear: v ← v + η(μ − v)∘softmax(v²/τ);  linear: v ← v + η μ∘softmax(v²/τ)  (μ as saliency Δ).
Entropy H = −Σ p ln p of p = softmax(v²/τ), nats.  Expected: nonlinear drops then bounces back;
linear only drops.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.kinds.synthetic.paper.items import ITEMS
from scansnap.kinds.synthetic.science import theory
from scansnap.paper import verdicts as vd
from scansnap.paper.items.result import ItemResult, Progress

NAME = "joma"
TITLE = ITEMS[NAME].title
SETTINGS = {"n": 10, "mu_seed": 0, "v0": 0.05, "eta": 0.02, "iters": 5000, "tau": 3.0}
MIN_DROP = MIN_REBOUND = 0.1  # nats


def simulate() -> tuple[np.ndarray, dict[str, dict[str, np.ndarray]]]:
    s = SETTINGS
    mu = theory.joma_default_mu(int(s["n"]), int(s["mu_seed"]))
    sims = {
        kind: theory.joma_simulate(
            mu, v0=s["v0"], eta=s["eta"], iters=int(s["iters"]), tau=s["tau"], nonlinear=kind == "nonlinear"
        )
        for kind in ("nonlinear", "linear")
    }
    return mu, sims


def figure(mu: np.ndarray, sims: dict[str, dict[str, np.ndarray]]) -> go.Figure:
    fig = make_subplots(rows=1, cols=2, subplot_titles=["v(t), nonlinear (dashed: μ)", "attention entropy"])
    nl = sims["nonlinear"]
    every = slice(None, None, 100)
    for j in range(len(mu)):
        fig.add_trace(
            go.Scatter(
                x=nl["iteration"][every], y=nl["v"][every, j], mode="lines", name=f"v<sub>{j}</sub>", showlegend=False
            ),
            row=1,
            col=1,
        )
        fig.add_hline(y=float(mu[j]), line_dash="dash", line_width=1, row=1, col=1)
    for kind, sim in sims.items():
        fig.add_trace(go.Scatter(x=sim["iteration"], y=sim["entropy"], mode="lines", name=kind), row=1, col=2)
    fig.update_xaxes(title_text="iteration")
    fig.update_yaxes(title_text="H = −Σ p ln p (nats)", row=1, col=2)
    fig.update_layout(title="JoMA v-dynamics: p = softmax(v²/τ), τ = 3", height=400)
    return fig


def run(quick: bool = False, progress: Progress | None = None) -> ItemResult:
    mu, sims = simulate()
    nl, lin = sims["nonlinear"]["entropy"], sims["linear"]["entropy"]
    verdicts = [
        vd.entropy_drops(NAME, "nonlinear: the attention entropy first drops", nl, MIN_DROP),
        vd.entropy_rebounds(NAME, "nonlinear: the entropy bounces back after its minimum", nl, MIN_REBOUND),
        vd.entropy_drops(NAME, "linear: the attention entropy drops", lin, MIN_DROP),
        vd.entropy_never_rises(NAME, "linear: the entropy never bounces back", lin),
    ]
    ent = pd.concat(
        [pd.DataFrame({"model": k, "iteration": s["iteration"], "entropy": s["entropy"]}) for k, s in sims.items()],
        ignore_index=True,
    )
    v = pd.concat(
        [
            pd.DataFrame(
                {
                    "model": k,
                    "iteration": np.repeat(s["iteration"], len(mu)),
                    "component": np.tile(np.arange(len(mu)), len(s["iteration"])),
                    "mu": np.tile(mu, len(s["iteration"])),
                    "v": s["v"].ravel(),
                }
            )
            for k, s in sims.items()
        ],
        ignore_index=True,
    )
    v = v[v["iteration"] % 10 == 0].reset_index(drop=True)
    cfg = {**SETTINGS, "mu": mu.tolist(), "simulate": "scansnap.kinds.synthetic.science.theory.joma_simulate"}
    return ItemResult(
        NAME,
        TITLE,
        verdicts,
        {"entropy": ent, "v": v},
        [("JoMA (science §7)", figure(mu, sims))],
        {"joma": cfg},
        [
            "μ comes from numpy's default_rng(0), not torch.manual_seed(0): same law, "
            "different draws from the paper's script."
        ],
    )
