"""Theory for one replica of one run: which theorems apply (their conditions checked on the run), and
Theorem 4 calibrated to the run (science §4.1): −Δz_common and B_n on its own steps, with the
predicted t'_0 and t_0 in code steps.

A curve is *solid* only when every condition of Theorem 4 holds; otherwise it is *indicative* and
carries the failed conditions.  There is no theory for Adam: no curve at all.  Everything here is
numpy (the web process draws it; the worker stores it with the run's scalars).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from scansnap.kinds.synthetic.science import calibration as cal
from scansnap.kinds.synthetic.science import theory_checks as tc
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import Problem, build_problem

THEOREMS = {"theorem2": "Thm 2", "theorem3": "Thm 3", "theorem4": "Thm 4"}


@dataclass(frozen=True)
class ReplicaTheory:
    """``conditions``: theorem → its conditions; ``curves``: the calibrated Theorem 4 (None for Adam
    or when the initial logits are unknown); ``solid``: every Theorem 4 condition holds."""

    conditions: dict[str, list[tc.Condition]]
    curves: cal.CalibratedTheory | None

    @property
    def solid(self) -> bool:
        return all(c.holds for c in self.conditions["theorem4"])

    def failed(self, theorem: str) -> tuple[str, ...]:
        """The failed conditions of a theorem, stated with their numbers."""
        return tuple(c.detail for c in self.conditions[theorem] if not c.holds)

    def failed_plain(self, theorem: str) -> tuple[str, ...]:
        """The failed conditions of a theorem, each one sentence of words."""
        return tuple(c.plain for c in self.conditions[theorem] if not c.holds)


def replica_config(cfg: RunConfig, replica: int) -> RunConfig:
    """The config of one replica: its own (η_Y, η_Z) pair and seed."""
    seeds = list(cfg.replicas.seeds)
    pair, seed = cfg.lr_pairs[replica // len(seeds)], seeds[replica % len(seeds)]
    over = {"replicas.seeds": [seed], "replicas.lr_pairs": None, "optim.eta_y": pair[0], "optim.eta_z": pair[1]}
    return cfg.with_overrides(over)


def replica_conditions(cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int) -> dict[str, list[tc.Condition]]:
    """The conditions of Theorems 2–4 checked on ``replica``; z0: its initial query rows (Q, M_ctx)."""
    return tc.applicability(tc.run_facts(replica_config(cfg, replica), problem, z0))


def replica_curves(
    cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int, steps: np.ndarray
) -> cal.CalibratedTheory | None:
    """Theorem 4 calibrated to ``replica`` on ``steps`` (None for Adam or without a common token)."""
    one = replica_config(cfg, replica)
    if one.optim.method != "sgd" or not problem.common_mask.any():
        return None
    consts = cal.theorem4_constants(problem.P, problem.psi, problem.common_mask, z0, problem.M_out)
    return cal.calibrated_curves(steps, consts, one.optim.eta_y, one.optim.eta_z, one.optim)


def replica_theory(
    cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int, steps: np.ndarray, only_if_solid: bool = False
) -> ReplicaTheory:
    """Conditions and calibrated curves of ``replica`` on ``steps`` (``only_if_solid``: no curves
    unless every condition of Theorem 4 holds)."""
    theory = ReplicaTheory(replica_conditions(cfg, problem, z0, replica), None)
    if only_if_solid and not theory.solid:
        return theory
    return ReplicaTheory(theory.conditions, replica_curves(cfg, problem, z0, replica, steps))


def theory_scalars(theories: list[ReplicaTheory], at: np.ndarray) -> dict[str, np.ndarray]:
    """``B_theory`` and ``dz_common_theory`` (S, R) at the steps ``at`` (each replica's curves hold
    them) for every replica where Theorem 4 applies, NaN elsewhere (the run's stored metrics)."""
    out = {k: np.full((len(at), len(theories)), np.nan) for k in ("B_theory", "dz_common_theory")}
    for r, th in enumerate(theories):
        if th.solid and th.curves is not None:
            rows = np.searchsorted(th.curves.steps, at)
            out["B_theory"][:, r] = th.curves.B_theory[rows]
            out["dz_common_theory"][:, r] = th.curves.dz_common_theory[rows]
    return out


def replica_t0(cfg: RunConfig, problem: Problem, replica: int) -> float:
    """Theorem 4's predicted t_0 of ``replica`` in code steps, for plain SGD (the runs it covers): the
    step where the decoder's margin reaches t_0's, as the charts mark it (calibration.sgd_t0)."""
    return cal.sgd_t0(problem.M_out, problem.K, replica_config(cfg, replica).optim.eta_y)


def unmet_conditions(
    cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int
) -> dict[str, tuple[tc.Condition, ...]]:
    """Theorem → the conditions that do not hold on ``replica`` (empty where the theorem applies)."""
    conds = replica_conditions(cfg, problem, z0, replica)
    return {name: tuple(c for c in cs if not c.holds) for name, cs in conds.items()}


def failed_conditions(cfg: RunConfig, problem: Problem, z0: np.ndarray, replica: int) -> dict[str, tuple[str, ...]]:
    """Theorem → the conditions that do not hold on ``replica``, stated with their numbers."""
    return {name: tuple(c.detail for c in cs) for name, cs in unmet_conditions(cfg, problem, z0, replica).items()}


def initial_constants(cfg: RunConfig) -> cal.Theorem4Constants | None:
    """Theorem 4's constants (ρ_0, C_0, M, K) of a config's initial state at zero init, z(0) = 0
    (exact for ``init = "zero"``; random inits start within their small σ of it).  None without a
    common token or with a single next token (ρ(0) averages over pairs of classes)."""
    problem = build_problem(cfg.data)
    if problem.K < 2 or not problem.common_mask.any():
        return None
    z0 = np.zeros((len(problem.query_ids), problem.P.shape[1]))
    return cal.theorem4_constants(problem.P, problem.psi, problem.common_mask, z0, problem.M_out)


def short_condition(detail: str) -> str:
    """A failed condition's detail up to its explanation: 'T = 128: finite contexts (…)' → 'T = 128'."""
    return detail.split(":")[0].split(" (")[0].strip()
