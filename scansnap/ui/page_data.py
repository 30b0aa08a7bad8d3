"""What the pages read or compute once for everyone: each function is cached server-wide in an LRU
bounded in bytes (:mod:`scansnap.ui.caches`).  They live here, not in the page scripts, because a page script
runs anew on every rerun (and would make a new, empty cache each time)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import plotly.graph_objects as go

from scansnap.core.metrics import METRICS, bare_label, label, shared_metrics
from scansnap.kinds.synthetic.paper.run_theory import initial_constants
from scansnap.kinds.synthetic.science.calibration import Theorem4Constants
from scansnap.kinds.synthetic.science.config import DataConfig
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.kinds.synthetic.science.theory import B_exact, joma_default_mu, joma_simulate, theory_curve
from scansnap.kinds.synthetic.science.theory import t0 as theory_t0
from scansnap.paper.presets import load_presets
from scansnap.service.facade import StoredReproduction
from scansnap.ui import preview_chart
from scansnap.ui.caches import byte_lru
from scansnap.ui.resources import service


@byte_lru("P previews")
def p_preview(data_json: str, font_size: int) -> go.Figure:
    """The P(l|n) preview figure of a data config (the caller checked its size first).  Shared, never
    changed (``st.plotly_chart`` serialises it)."""
    pb = build_problem(DataConfig.model_validate(json.loads(data_json)))
    return preview_chart.p_heatmap(pb.P, pb.psi, pb.token_kind, font_size)


@byte_lru("compare series")
def compare_series(run_id: str, metric: str, last_step: int) -> tuple[tuple[str, np.ndarray, np.ndarray], ...]:
    """A run's lines of ``metric`` as (what the line is, steps, values) (``last_step`` keys a growing run):
    a synthetic run's class mean averaged over replicas (one line); a real-text run's run-level metric
    (one line), or a per-layer one's mean over heads, one line per layer.  A kind's frame names its two
    index columns (replica, n; layer, head); <NA> in one is "none": no class, run-level, mean over heads."""
    df = service().stored.scalars(run_id, metrics=[metric])
    if metric in METRICS and METRICS[metric].per_layer:
        df = df[df["layer"].notna() & df["head"].isna()]
        return tuple(
            (f"layer {int(layer)}", g["step"].to_numpy(), g["value"].to_numpy())
            for layer, g in df.sort_values("step").groupby("layer")
        )
    nullable = [c for c in df.columns[1:3] if df[c].dtype == "Int64"]  # the class (synthetic), the layer (text)
    df = df[df[nullable[0]].isna()].groupby("step", as_index=False)["value"].mean()
    return (("", df["step"].to_numpy(), df["value"].to_numpy()),)


@byte_lru("theory curves")
def preset_constants(name: str) -> Theorem4Constants | None:
    """Theorem 4's ρ_0, C_0, M, K of preset ``name``'s initial state (None without a common token)."""
    return initial_constants(load_presets()[name].config)


def theorem4_t0(M: float, K: float, eta_y: float) -> float:
    """Theorem 4's t_0 in theory time (:func:`scansnap.kinds.synthetic.science.theory.t0`)."""
    return float(theory_t0(M, K, eta_y))


def theorem4_curve(M: float, K: float, eta_y: float, eta_z: float, C0: float, tmax: float) -> dict[str, Any]:
    """Theorem 4's curves on [0, tmax] (:func:`scansnap.kinds.synthetic.science.theory.theory_curve`), plus ``B_t0``
    = B_n(t_0)."""
    t = np.unique(np.concatenate([np.logspace(-3, np.log10(tmax), 400), np.linspace(0, tmax, 400)[1:]]))
    th = theory_curve(t, M, K, eta_y, eta_z, C0=C0)
    return th | {"B_t0": float(B_exact(th["t0"], M, K, eta_y, eta_z, C0=C0))}


def overlaid_metrics(kinds: set[str]) -> list[str]:
    """The metrics runs of every one of ``kinds`` record (:func:`scansnap.core.metrics.shared_metrics`)."""
    return shared_metrics(kinds)


def metric_label(name: str) -> str:
    """A metric's name in words (:func:`scansnap.core.metrics.label`)."""
    return label(name)


def metric_words(name: str) -> str:
    """A metric's name in words, without its unit, for a sentence (:func:`scansnap.core.metrics.bare_label`)."""
    return bare_label(name)


@byte_lru("theory curves")
def joma_pair(iters: int, tau: float, eta: float) -> tuple[dict, dict]:
    """JoMA's entropy simulation with a linear and a nonlinear MLP (science §7)."""
    mu = joma_default_mu()
    return (
        joma_simulate(mu, nonlinear=False, iters=iters, tau=tau, eta=eta),
        joma_simulate(mu, nonlinear=True, iters=iters, tau=tau, eta=eta),
    )


@byte_lru("reproductions")
def reproduction(rid: str) -> StoredReproduction:
    """A stored reproduction (immutable once stored)."""
    return service().reproduction(rid)
