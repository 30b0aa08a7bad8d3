"""Theory curves on a run's own time axis (pure numpy/scipy).

Theory time vs code steps (science §2.8): a mean-reduced batch of B samples at rate η moves
the parameters, in expectation, as one single-sample update at rate η, i.e. one unit of theory
time t (class drawn with probability 1/K), so the batch size cancels.  SGD momentum μ makes
step i move by (1−μ^i)/(1−μ) gradients (the buffer warms up), so after k steps the
parameters have moved t(k) = [k − μ(1−μ^k)/(1−μ)]/(1−μ) single-sample updates: ≈ k/(1−μ)
late, but only 41 (not 100) after 10 steps at μ = 0.9.  We draw theory at t(step)
(:func:`theory_time`; :func:`code_step` inverts it).  There is no theory for Adam.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import brentq

from engine.core.config import RunConfig
from engine.core.data import build_problem
from engine.core.theory import theory_curve


def momentum_time(k: Any, mu: float) -> np.ndarray:
    """t(k) = [k − μ(1−μ^k)/(1−μ)]/(1−μ): single-sample updates done by k momentum-SGD steps
    under a constant gradient (Σ_{i=1..k} (1−μ^i)/(1−μ)); t(k) = k when μ = 0."""
    k = np.asarray(k, dtype=np.float64)
    if mu == 0:
        return k
    return (k - mu * (1.0 - mu**k) / (1.0 - mu)) / (1.0 - mu)


def code_step(t: float, mu: float) -> float:
    """The (fractional) code step k with momentum_time(k, μ) = t (monotone, so bracketed)."""
    if mu == 0 or t <= 0:
        return max(float(t), 0.0)
    hi = t * (1.0 - mu) + mu / (1.0 - mu) + 1.0  # t(k) ≥ (k − μ/(1−μ))/(1−μ)
    return float(brentq(lambda k: float(momentum_time(k, mu)) - t, 0.0, hi, xtol=1e-12, rtol=1e-12))


def theory_time(steps: Any, cfg: RunConfig) -> np.ndarray | None:
    """Theory time t of code steps (module doc): :func:`momentum_time` for SGD; None for Adam."""
    if cfg.optim.method != "sgd":
        return None
    return momentum_time(steps, cfg.optim.momentum)


def theory_overlay(cfg: RunConfig, max_step: int, replica: int = 0, points: int = 200) -> dict[str, Any] | None:
    """Thm 4's B_n on a log grid of code steps, and t'_0, t_0 converted to code steps.

    M in Eqns. 45/85/129 is the decoder's output size (M_out: all M tokens in the paper layout,
    the K next tokens in the compact one)."""
    if cfg.optim.method != "sgd" or max_step < 1:
        return None
    pb = build_problem(cfg.data)
    eta_y, eta_z = cfg.lr_pairs[replica // len(cfg.replicas.seeds)]
    mu = cfg.optim.momentum
    steps = np.unique(np.concatenate([np.logspace(-2, np.log10(max_step), points), [max_step]]))
    th = theory_curve(momentum_time(steps, mu), pb.M_out, pb.K, eta_y, eta_z, C0=1.0, zero_offset=True)
    return {
        "step": steps,
        "B_n": np.asarray(th["B_n"]),
        "t0_prime": code_step(float(th["t0_prime"]), mu),
        "t0": code_step(float(th["t0"]), mu),
        "M": pb.M_out,
        "K": pb.K,
    }
