"""Theory on a run's own time axis, for its charts: Theorem 4 calibrated to the run (science §4.1) on a
log grid of its steps, the predicted t'_0 and t_0 in code steps, and whether the curve is solid
(every condition of Theorem 4 holds) or indicative (with the failed conditions); and the snap
measured in the run itself.  Pure numpy: the web process draws these.

No time change maps the closed form onto momentum or Adam runs (science §4.1): the calibrated
curves step the reduced system with the run's own optimiser instead, and there is no theory for Adam.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engine.core.config import RunConfig
from engine.core.data import KIND_COMMON, KIND_DISTINCT, Problem
from engine.core.theory_checks import Condition, measured_snap_step, sign_agreement
from engine.paper.run_theory import replica_theory

POINTS = 200  # grid points of a theory curve


def step_grid(steps: int, points: int = POINTS) -> np.ndarray:
    """0 and about ``points`` log-spaced integer steps up to ``steps``."""
    grid = np.round(np.logspace(0, np.log10(max(steps, 1)), points)).astype(np.int64)
    return np.unique(np.concatenate([[0], grid, [steps]]))


def calibrated_overlay(cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int) -> dict[str, Any]:
    """The charts' theory for one replica: ``solid`` (Theorem 4 applies), ``failed`` (its failed
    conditions, in words) and, unless the optimiser is Adam (no theory): ``step``, ``B_theory``,
    ``dz_common_theory`` on a log grid, ``t0_prime``/``t0`` (predicted, code steps; NaN when the run
    ends first) and ``C0`` = ρ_0⁴/K of the run's initial state."""
    grid = step_grid(cfg.optim.steps)
    th = replica_theory(cfg, problem, z0, replica, grid)
    out: dict[str, Any] = {"solid": th.solid, "failed": th.failed("theorem4")}
    if th.curves is not None:
        c = th.curves
        out |= {"step": grid, "B_theory": c.B_theory, "dz_common_theory": c.dz_common_theory,
                "t0_prime": c.t0_prime, "t0": c.t0, "C0": c.constants.C0_paper}  # fmt: skip
    return out


def measured_snap(steps: np.ndarray, series: np.ndarray) -> int | None:
    """The step from which the run's series (−Δz_common, or the entropy) is measured to have snapped."""
    ok = np.isfinite(series)
    if ok.sum() < 4:
        return None
    return measured_snap_step(np.asarray(steps)[ok], np.asarray(series)[ok])


def twin_agreement(
    steps: np.ndarray, z: Sequence[np.ndarray], statics: dict[str, np.ndarray], replica: int
) -> tuple[int, Condition] | None:
    """Whether a finite-T replica moves its distinct and common logits in the direction of its T = ∞
    twin (stored with the run), at the latest step both have: (that step, the condition).
    steps (S,), z: the replica's (Q, M_ctx) logits at each of them.  None without a twin or a shared step after 0."""
    if "mf_steps" not in statics or replica >= len(statics["mf_z"]) or len(steps) < 2:
        return None
    tw_steps = np.asarray(statics["mf_steps"])
    shared = np.intersect1d(np.asarray(steps)[1:], tw_steps[1:])
    if not len(shared):
        return None
    t = int(shared[-1])
    i, j = int(np.flatnonzero(np.asarray(steps) == t)[0]), int(np.flatnonzero(tw_steps == t)[0])
    rows = np.searchsorted(np.asarray(statics["query_tokens"]), np.asarray(statics["psi"]))
    tw = np.asarray(statics["mf_z"][replica], dtype=np.float64)
    dz_run = (z[i] - z[0])[rows]
    dz_twin = (tw[j] - tw[0])[rows]
    kind = statics["token_kind"]
    return t, sign_agreement(dz_run, dz_twin, kind == KIND_DISTINCT, kind == KIND_COMMON)
