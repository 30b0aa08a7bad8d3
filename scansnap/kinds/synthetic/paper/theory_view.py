"""Theory on a run's own time axis, for its charts: Theorem 4 calibrated to the run (science §4.1) on a
log grid of its steps, the predicted t'_0 and t_0 in code steps, and whether the curve is solid
(every condition of Theorem 4 holds) or indicative (with the failed conditions); and the snap
measured in the run itself.  Pure numpy.  The overlay is computed once per run, where the run's theory
is computed (the worker, before its first step), and stored with its statics (:func:`overlay_statics`);
the charts read it back (:func:`stored_overlay`).

No time change maps the closed form onto momentum or Adam runs (science §4.1): the calibrated
curves step the reduced system with the run's own optimiser instead, and there is no theory for Adam.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scansnap.kinds.synthetic.paper.run_theory import ReplicaTheory, replica_conditions, replica_curves, replica_theory
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, Problem
from scansnap.kinds.synthetic.science.theory_checks import Condition, measured_snap_step, sign_agreement, snap_is_stable

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
    out: dict[str, Any] = {
        "solid": th.solid,
        "failed": th.failed("theorem4"),
        "failed_plain": th.failed_plain("theorem4"),
    }
    if th.curves is not None:
        c = th.curves
        out |= {
            "step": grid,
            "B_theory": c.B_theory,
            "dz_common_theory": c.dz_common_theory,
            "t0_prime": c.t0_prime,
            "t0": c.t0,
            "C0": c.constants.C0_paper,
        }
    return out


THEORY_STATICS = (
    "theory_step",
    "theory_B",
    "theory_dz",
    "theory_t0p",
    "theory_t0",
    "theory_C0",
    "theory_curve",
    "theory_solid",
    "theory_failed",
    "theory_failed_plain",
)


def overlay_statics(
    cfg: RunConfig, problem: Problem, z0: np.ndarray, theories: Sequence[ReplicaTheory] | None = None
) -> dict[str, np.ndarray]:
    """The overlay of every replica as arrays stored with the run (:data:`THEORY_STATICS`): the grid
    (G,); ``theory_B``, ``theory_dz`` (R, G), NaN where a replica has no curve; ``theory_t0p``,
    ``theory_t0``, ``theory_C0`` (R,); ``theory_curve``, ``theory_solid`` (R,) bool; ``theory_failed``
    (R,) its failed conditions joined by newlines.  z0: (R, Q, M_ctx), each replica's initial logits.
    ``theories``: each replica's conditions, with the curves already computed where there are (on
    steps that hold the grid: a run computes those under Theorem 4 for its snapshots); the missing
    curves are computed here, on the grid."""
    grid = step_grid(cfg.optim.steps)
    if theories is None:
        theories = [ReplicaTheory(replica_conditions(cfg, problem, z0[r], r), None) for r in range(cfg.n_replicas)]
    done = [
        th if th.curves is not None else ReplicaTheory(th.conditions, replica_curves(cfg, problem, z0[r], r, grid))
        for r, th in enumerate(theories)
    ]
    return overlay_tables(done, cfg.optim.steps)


def overlay_tables(theories: Sequence[ReplicaTheory], total_steps: int) -> dict[str, np.ndarray]:
    """:func:`overlay_statics` from each replica's theory, its curves (if any) computed on steps that
    hold the grid of a run of ``total_steps``."""
    grid = step_grid(total_steps)
    R = len(theories)
    out: dict[str, np.ndarray] = {
        "theory_step": grid,
        "theory_B": np.full((R, len(grid)), np.nan),
        "theory_dz": np.full((R, len(grid)), np.nan),
        **{k: np.full(R, np.nan) for k in ("theory_t0p", "theory_t0", "theory_C0")},
        "theory_curve": np.array([th.curves is not None for th in theories], dtype=bool),
        "theory_solid": np.array([th.solid for th in theories], dtype=bool),
        "theory_failed": np.array(["\n".join(th.failed("theorem4")) for th in theories], dtype=str),
        "theory_failed_plain": np.array(["\n".join(th.failed_plain("theorem4")) for th in theories], dtype=str),
    }
    for r, c in enumerate(th.curves for th in theories):
        if c is not None:
            at = np.searchsorted(c.steps, grid)
            out["theory_B"][r], out["theory_dz"][r] = c.B_theory[at], c.dz_common_theory[at]
            out["theory_t0p"][r], out["theory_t0"][r], out["theory_C0"][r] = c.t0_prime, c.t0, c.constants.C0_paper
    return out


def stored_overlay(statics: dict[str, np.ndarray], replica: int) -> dict[str, Any] | None:
    """:func:`calibrated_overlay` of ``replica`` read back from the run's statics (None before the
    worker has stored them)."""
    if "theory_step" not in statics:
        return None
    failed = str(statics["theory_failed"][replica])
    plain = str(statics["theory_failed_plain"][replica]) if "theory_failed_plain" in statics else failed  # older runs
    out: dict[str, Any] = {
        "solid": bool(statics["theory_solid"][replica]),
        "failed": tuple(failed.split("\n")) if failed else (),
        "failed_plain": tuple(plain.split("\n")) if plain else (),
    }
    if statics["theory_curve"][replica]:
        out |= {
            "step": statics["theory_step"],
            "B_theory": statics["theory_B"][replica],
            "dz_common_theory": statics["theory_dz"][replica],
            "t0_prime": float(statics["theory_t0p"][replica]),
            "t0": float(statics["theory_t0"][replica]),
            "C0": float(statics["theory_C0"][replica]),
        }
    return out


def measured_snap(steps: np.ndarray, series: np.ndarray) -> int | None:
    """The step from which the run's series (−Δz_common, or the entropy) is measured to have snapped."""
    ok = np.isfinite(series)
    if ok.sum() < 4:
        return None
    return measured_snap_step(np.asarray(steps)[ok], np.asarray(series)[ok])


@dataclass(frozen=True)
class Snap:
    """The snap measured in a run: its ``step``, and whether it is ``provisional`` (the run's first half
    measured it elsewhere: :func:`~scansnap.kinds.synthetic.science.theory_checks.snap_is_stable`)."""

    step: int
    provisional: bool

    @property
    def label(self) -> str:
        return "snap so far (provisional)" if self.provisional else "snap (measured)"


def run_snap(dz_steps: np.ndarray, dz_common: np.ndarray, h_steps: np.ndarray, entropy: np.ndarray) -> Snap | None:
    """The run's measured snap, of −Δz_common where it has a common token, else of the entropy."""
    steps, series = (dz_steps, dz_common) if np.isfinite(dz_common).any() else (h_steps, entropy)
    step = measured_snap(steps, series)
    if step is None:
        return None
    ok = np.isfinite(series)
    return Snap(step, not snap_is_stable(np.asarray(steps)[ok], np.asarray(series)[ok], step))


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
    rows = np.searchsorted(np.asarray(statics["query_tokens"]), np.asarray(statics["query_of_class_id"]))
    tw = np.asarray(statics["mf_z"][replica], dtype=np.float64)
    dz_run = (z[i] - z[0])[rows]
    dz_twin = (tw[j] - tw[0])[rows]
    kind = statics["token_kind"]
    return t, sign_agreement(dz_run, dz_twin, kind == KIND_DISTINCT, kind == KIND_COMMON)
