"""Calibrated Theorem 4 in engine units (science §4.1): the common token's drop and B̂ of a run.

Engine units.  A mean-field step of the engine (``yz-meanfield``, Lemma-3 decoder, T = ∞) takes
the MEAN of the per-class losses, L = (1/K) Σ_n −ln α_n[y_n] (model.loss_and_grads_lemma3), so
with plain SGD, writing e_n for the one-hot of n's label:
    w_n ← w_n + (η_Y/K)(e_n − α_n),                                      Lemma 3, per class
    z_m ← z_m + (η_Z/K) Σ_{n∈ψ⁻¹(m)} diag(f_n) P^⊥_{f_n} Y(e_n − α_n),     Eqn. 10
the expectation of one paper update of a uniformly drawn class: one step = one unit of t.

Decoder (Eqns. 45, 85).  From W(0) = 0, w_n = (M−1)h ζ_n, ζ_n = (M/(M−1))(e_n − 1/M), with
M = M_out, the decoder's output size (all M tokens in the paper layout, K in the compact one).
The margin is w_y − w_o = Mh and e_n − α_n = ((M−1)/D) ζ_n, D = (M−1) + e^{Mh}, hence the
discrete recursion h_{k+1} = h_k + (η_Y/K)/((M−1) + e^{M h_k}) (Euler of Eqn. 45 at s = t/K), and
    W(e_n − α_n) = G [e_n − (1 − e_n)/(M−1)],  G := (w_y − w_o)(1 − α_y) = Mγ/(M−1),
with γ = (M−1)²h/D of Eqn. 85 (G = γ up to M/(M−1)).

Gradient (Thm. 1, Eqns. 86–89).  With F^TF = (1−ρ)I + ρ11^T (every f_n·f_n' = ρ), the
coefficient of f_n' (n' ≠ n) in Y(e_n − α_n) = F(F^TF)⁻¹W(e_n − α_n) is −Gβ with
    β = (ρ + 1/(M−1)) / ((1−ρ)(1 + (K−1)ρ)),   so (1−ρ)β = (ρ + ε)/(1 + (K−1)ρ), ε = 1/(M−1).
The paper keeps β ≈ ρ; ε, the decoder's cross term, is ~20 % of ρ at M ≈ 200.

Attention (Eqns. 97–100), P^⊥_{f_n} f_n = 0, classes symmetric, N_c common tokens of equal
share σ/N_c of ‖f_n‖² (σ = Σ_{c∈CT} f_nc²), K_m = |ψ⁻¹(m)| classes on the query row m:
    distinct l of n:  Δz_l = η_Z f_l² ξ,    ξ = (G/K)(K−1)βρ              (Eqn. 98, the 1/K of the mean)
    each common c:     Δz_c = −η_Z (K_m/K) G (K−1) (1−ρ)β σ/N_c          (Eqn. 100, Σ over ψ⁻¹(m))
B̂ (train.Trainer.step) adds Σ_l Δz_l / Σ_l f_l² = η_Z ξ a step, so −Δz_c/ΔB̂ = (K_m/N_c)(1−ρ)σ/ρ;
with one query and σ = ρ (one common token, or N_c of equal weight) −Δz_c = (K/N_c)(1−ρ)B̂.

Theorem 4 (Eqns. 118–129).  Freeze the distinct logits ("all normalisers ≈ ρ_0"); with
u = −Δz_c only the common share moves: ρ(u) = ρ(0)e^{−2u}/(1 − σ + σe^{−2u}), σ(u) likewise.
The paper also drops 1 − σ + σe^{−2u}, ε and (1−ρ)(1+(K−1)ρ): ρ = e^{2z_c}/ρ_0², ρ_0² := 1/ρ(0)
(science §4.1), and u̇ = η_Z (K_m/K)(K−1)/N_c · G ρ(0)² e^{−4u}, which integrates to
    −Δz_c = ¼ ln(1 + 4Γ/C_0'),  Γ = η_Z Σ_k G_k ≈ η_Z ∫γ (Eqn. 128),  C_0' = N_c K ρ_0⁴/(K_m (K−1)),
    B̂ = (N_c/K_m)(−Δz_c)  (to first order in ρ).
Several common tokens: ρ(0) is their total overlap f_n·f_n' and each carries σ/N_c; several
queries: ρ(0) is the mean over all class pairs (all enter (F^TF)⁻¹) and a row's drive has K_m
classes.  So in engine units Eqn. 129 describes the common token's drop; the paper's C_0 = ρ_0⁴/K becomes
N_c ρ_0⁴/(K−1) for one query (its Σ_{n'≠n} has K−1 terms), and B̂ is N_c/K of it (the mean over
classes spreads the drive of the K classes; N_c tokens share it).  :func:`printed_curves` is that
form.  :func:`calibrated_curves` keeps ε, ρ(u), σ(u), (1−ρ)(1+(K−1)ρ) and the discrete decoder,
and steps (w_y, w_o, z_c, z_d) with the run's own optimiser rule (SGD with momentum, Adam: no
time change of the closed form).  What it still leaves out: the distinct logits' share of the
normaliser (relative error ~ f_l²·B̂, small with ≥ 100 distinct tokens) and class asymmetry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scansnap.kinds.synthetic.science import theory


class OptimRule(Protocol):
    """What the stepper needs of an optimiser config (scansnap.kinds.synthetic.science.config.OptimConfig fits)."""

    @property
    def method(self) -> str: ...
    @property
    def momentum(self) -> float: ...
    @property
    def beta1(self) -> float: ...
    @property
    def beta2(self) -> float: ...
    @property
    def eps(self) -> float: ...
    @property
    def weight_decay(self) -> float: ...


@dataclass(frozen=True)
class Theorem4Constants:
    """A run's initial state, reduced to what Theorem 4 needs.

    rho_init = ρ(0): mean of f_n(0)·f_n'(0) over ordered pairs n ≠ n' (all classes: they all
    enter (F^TF)⁻¹); common_share = σ(0): class mean of Σ_{c∈CT(n)} f_nc(0)²; n_common = N_c:
    tokens in the support of ≥ 2 classes; classes_per_query = K_m: class mean of |ψ⁻¹(ψ(n))|;
    f2_distinct: class mean of the mean f_l(0)² over G_DT(n) (Adam's ε scale only);
    f4_ratio = κ₄: class mean of Σ_{G_DT} f_l(0)⁴ / Σ_{G_DT} f_l(0)² (see :func:`feedback_error`).
    """

    K: int
    M: int
    n_common: int
    classes_per_query: float
    rho_init: float
    common_share: float
    f2_distinct: float
    f4_ratio: float

    @property
    def rho0_sq(self) -> float:
        """ρ_0² = 1/ρ(0) (Thm. 4: f_n·f_n' ≈ e^{2z_c}/ρ_0²; = ‖P_n‖²/Σ_{c∈CT} P(c|n)² at zero init)."""
        return 1.0 / self.rho_init

    @property
    def C0_paper(self) -> float:
        """C_0 = ρ_0⁴/K as printed in Thm. 4."""
        return self.rho0_sq**2 / self.K

    @property
    def C0_engine(self) -> float:
        """C_0' = N_c K ρ_0⁴/(K_m(K−1)): Eqn. 129's constant for −Δz_c in engine units."""
        return self.n_common * self.K * self.rho0_sq**2 / (self.classes_per_query * (self.K - 1))

    @property
    def eps(self) -> float:
        """ε = 1/(M−1), the decoder's cross term in β."""
        return 1.0 / (self.M - 1)


def _check_inputs(P: NDArray, psi: NDArray, common: NDArray, z0: NDArray, M_out: int) -> None:
    if P.ndim != 2 or P.shape[0] < 2 or not np.all(np.isfinite(P)) or np.any(P < 0):
        raise ValueError(f"P must be a finite K×M_ctx table of P(l|n) ≥ 0 with K ≥ 2, got shape {P.shape}")
    K, M_ctx = P.shape
    if psi.shape != (K,) or psi.min() < 0 or z0.ndim != 2 or psi.max() >= z0.shape[0] or z0.shape[1] != M_ctx:
        raise ValueError(f"psi must map the K={K} classes to rows of z0 (Q×{M_ctx}); got {psi.shape}, {z0.shape}")
    if common.shape not in ((K, M_ctx), (M_ctx,)):
        raise ValueError(f"common_mask must have shape ({K}, {M_ctx}) or ({M_ctx},), got {common.shape}")
    if not common.any():
        raise ValueError("common_mask marks no common token: Theorem 4 needs at least one")
    if int(M_out) < 2:
        raise ValueError(f"M_out (decoder outputs) must be >= 2, got {M_out!r}")


def theorem4_constants(
    P: ArrayLike, psi: ArrayLike, common_mask: ArrayLike, z0: ArrayLike, M_out: int
) -> Theorem4Constants:
    """ρ(0), σ(0), N_c, K_m of a run from P (K×M_ctx), ψ (K,), the common mask ((K, M_ctx) or
    (M_ctx,)), the initial logits z(0) of the query rows (Q×M_ctx) and the decoder size M_out.

    c̃_n = P(·|n)e^{z_ψ(n)(0)}, f_n = c̃_n/‖c̃_n‖ (Eqn. 5).  With one common token c of weight w
    at zero init, ρ(0) = σ(0) = w²/‖w_n‖², so ρ_0² = ‖P_n‖²/P(c|n)² (science §4.1).
    """
    P, z0 = np.asarray(P, dtype=np.float64), np.asarray(z0, dtype=np.float64)
    psi, common = np.asarray(psi, dtype=np.int64), np.asarray(common_mask, dtype=bool)
    _check_inputs(P, psi, common, z0, M_out)
    rows = z0[psi]
    ct = P * np.exp(rows - rows.max(axis=1, keepdims=True))
    f = ct / np.linalg.norm(ct, axis=1, keepdims=True)
    K = P.shape[0]
    gram = f @ f.T
    common_kn = np.broadcast_to(common, P.shape) & (P > 0)
    distinct = (P > 0) & ~np.broadcast_to(common_kn.any(0), P.shape)
    n_distinct = np.maximum(distinct.sum(1), 1)
    return Theorem4Constants(
        K=K,
        M=int(M_out),
        n_common=int(common_kn.any(0).sum()),
        classes_per_query=float(np.mean(np.bincount(psi)[psi])),
        rho_init=float((gram.sum() - np.trace(gram)) / (K * (K - 1))),
        common_share=float(np.mean((f**2 * common_kn).sum(1))),
        f2_distinct=float(np.mean((f**2 * distinct).sum(1) / n_distinct)),
        f4_ratio=float(np.mean((f**4 * distinct).sum(1) / np.maximum((f**2 * distinct).sum(1), 1e-300))),
    )


def decoder_h(steps: int, M: int, K: int, eta_y: float) -> NDArray[np.float64]:
    """h_k, k = 0..steps: h_{k+1} = h_k + (η_Y/K)/((M−1) + e^{M h_k}), h_0 = 0 (plain SGD, W(0) = 0)."""
    h = np.zeros(int(steps) + 1)
    a, rate = M - 1.0, eta_y / K
    for k in range(int(steps)):
        h[k + 1] = h[k] + rate / (a + np.exp(M * h[k]))
    return h


def _shares(u: float | NDArray, c: Theorem4Constants) -> tuple:
    """ρ(u), σ(u) and the distinct tokens' normaliser factor 1/(1 − σ + σe^{−2u}) at common drop u."""
    e = np.exp(-2.0 * np.asarray(u))
    scale = 1.0 / (1.0 - c.common_share + c.common_share * e)
    return c.rho_init * e * scale, c.common_share * e * scale, scale


def _drives(G: float, u: float, c: Theorem4Constants) -> tuple[float, float, float]:
    """(ξ, g_c, s): B̂'s rate ξ = (G/K)(K−1)βρ, the common token's loss gradient
    g_c = (K_m/K) G (K−1)(1−ρ)β σ/N_c, and the distinct f² scale s (see module docstring)."""
    rho, sigma, scale = _shares(u, c)
    cross = (rho + c.eps) / (1.0 + (c.K - 1) * rho)  # (1−ρ)β
    xi = G / c.K * (c.K - 1) * cross * rho / (1.0 - rho)
    g_c = c.classes_per_query / c.K * G * (c.K - 1) * cross * sigma / c.n_common
    return float(xi), float(g_c), float(scale)


class _Stepper:
    """:func:`scansnap.kinds.synthetic.science.optim.finish_update_` (torch.optim's SGD / Adam) in numpy, on a vector
    of scalar
    coordinates with weight decay λ·``decay`` per coordinate: the web process draws this theory and loads no
    torch (tests/core/test_optim.py holds the two to float64 rounding)."""

    def __init__(self, rule: OptimRule, lr: NDArray, decay: NDArray):
        self.rule, self.lr, self.decay = rule, lr, decay * rule.weight_decay
        self.t, self.buf = 0, None
        self.m, self.v = np.zeros_like(lr), np.zeros_like(lr)

    def step(self, p: NDArray, g: NDArray) -> NDArray:
        r, d = self.rule, g + self.decay * p
        self.t += 1
        if r.method == "sgd":
            if r.momentum > 0:
                self.buf = d.copy() if self.buf is None else r.momentum * self.buf + d
                d = self.buf
            return p - self.lr * d
        self.m = self.m + (1 - r.beta1) * (d - self.m)
        self.v = r.beta2 * self.v + (1 - r.beta2) * d * d
        denom = np.sqrt(self.v) / np.sqrt(1 - r.beta2**self.t) + r.eps
        return p - (self.lr / (1 - r.beta1**self.t)) * self.m / denom


def reduced_system(
    n_steps: int, c: Theorem4Constants, eta_y: float, eta_z: float, rule: OptimRule
) -> dict[str, NDArray[np.float64]]:
    """Step the reduced coordinates p = (w_y, w_o, z_c, z_d) n_steps times with the run's rule.

    w_y, w_o: a decoder row's label / other logits (exact for any per-coordinate optimiser by
    symmetry); z_c: a common logit; z_d: a pseudo distinct logit with gradient −ξ f̄², so that
    B̂ += Δz_d/f̄² is the engine's pooled estimator (weight decay on z_d is left out).
    Returns "h" (margin/M), "dz_common" (−Δz_c) and "B" (B̂) at steps 0..n_steps.
    """
    M, K = c.M, c.K
    lr = np.array([eta_y, eta_y, eta_z, eta_z])
    stepper = _Stepper(rule, lr, np.array([1.0, 1.0, 1.0, 0.0]))
    p = np.zeros(4)
    out = np.zeros((3, int(n_steps) + 1))
    B = 0.0
    for k in range(int(n_steps)):
        margin = p[0] - p[1]
        miss = 1.0 - 1.0 / (1.0 + (M - 1) * np.exp(-margin))  # 1 − α_y
        xi, g_c, scale = _drives(margin * miss, -p[2], c)
        f2 = c.f2_distinct * scale
        g = np.array([-miss / K, miss / (K * (M - 1)), g_c, -xi * f2])
        new = stepper.step(p, g)
        B += (new[3] - p[3]) / f2
        p = new
        out[:, k + 1] = ((p[0] - p[1]) / M, -p[2], B)
    return {"h": out[0], "dz_common": out[1], "B": out[2]}


def printed_curves(
    steps: ArrayLike, c: Theorem4Constants, eta_y: float, eta_z: float
) -> dict[str, NDArray[np.float64]]:
    """Eqn. 129 in engine units with the run's C_0' (module docstring), continuous h (Eqn. 45):
    −Δz_c = ¼ ln(1 + 4Γ(t)(M/(M−1))/C_0') and B̂ = (N_c/K_m)(−Δz_c)."""
    t = np.asarray(steps, dtype=np.float64)
    four_gamma = 4.0 * np.asarray(theory.Gamma(t, c.M, c.K, eta_y, eta_z)) * c.M / (c.M - 1)
    dz = 0.25 * np.log1p(four_gamma / c.C0_engine)
    return {"dz_common": dz, "B": c.n_common / c.classes_per_query * dz}


def feedback_error(c: Theorem4Constants, B: ArrayLike, dz: ArrayLike) -> NDArray[np.float64]:
    """First-order relative error of the calibrated curves from the one effect they leave out.

    Distinct logits rise by Δz_l ≈ f_l²B̂, so the distinct part of ‖c̃_n‖² grows by 1 + 2κ₄B̂ and
    ρ, σ fall by δ = 2κ₄B̂(1 − σ(u)); the drive σ(ρ+ε) by ≈ 2δ.  Where the drop is ≈ ¼ ln(1 + aΓ)
    (ρ ≪ 1), perturbing a by −2δ̄ shifts u by −½δ̄(1 − e^{−4u}) with δ̄ ≤ δ(t), so the relative
    error is ≲ ½δ(1 − e^{−4u})/u (→ 2δ for small u).  B, dz: the calibrated curves."""
    B, u = np.asarray(B, dtype=np.float64), np.asarray(dz, dtype=np.float64)
    delta = 2.0 * c.f4_ratio * B * (1.0 - _shares(u, c)[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(u > 0, 0.5 * delta * -np.expm1(-4.0 * u) / u, 2.0 * delta)


def _first_crossing(x: NDArray, level: float) -> float:
    """The fractional step where the increasing-at-first series x first reaches level (NaN if never)."""
    above = np.flatnonzero(x >= level)
    if not len(above):
        return float("nan")
    k = int(above[0])
    if k == 0:
        return 0.0
    return k - 1 + float((level - x[k - 1]) / (x[k] - x[k - 1]))


def transition_steps(h: NDArray, M: int, K: int, eta_y: float) -> tuple[float, float]:
    """t'_0 and t_0 in code steps for the run's decoder: the steps where its margin Mh reaches
    Eqn. 45's value at t'_0 = K ln M/η_Y and t_0 = 2K ln M/η_Y (exactly those for gradient flow)."""
    levels = [float(M * theory.solve_h(theory.t0_prime(M, K, eta_y) * f / K, M, eta_y)) for f in (1, 2)]
    x = M * np.asarray(h)
    return _first_crossing(x, levels[0]), _first_crossing(x, levels[1])


def sgd_t0(M: int, K: int, eta_y: float) -> float:
    """t_0 in code steps of a plain-SGD decoder (:func:`transition_steps` on :func:`decoder_h`): the
    t₀ that :func:`calibrated_curves` gives such a run, without stepping the whole reduced system.
    The discrete decoder runs ahead of Eqn. 45's flow, so 2·(2K ln M/η_Y) steps always reach it."""
    h = decoder_h(2 * math.ceil(theory.t0(M, K, eta_y)) + 2, M, K, eta_y)
    return transition_steps(h, M, K, eta_y)[1]


@dataclass(frozen=True)
class CalibratedTheory:
    """Calibrated curves on a run's stored steps, and the predicted transition in code steps.

    t0_prime / t0: where the run's own decoder (stepped with its optimiser) reaches the margin of
    t'_0 / t_0 (NaN when not within the steps); *_printed: K ln M/η_Y and 2K ln M/η_Y."""

    steps: NDArray[np.int64]
    B_theory: NDArray[np.float64]
    dz_common_theory: NDArray[np.float64]
    h: NDArray[np.float64]
    t0_prime: float
    t0: float
    t0_prime_printed: float
    t0_printed: float
    constants: Theorem4Constants


def calibrated_curves(
    steps: ArrayLike, c: Theorem4Constants, eta_y: float, eta_z: float, rule: OptimRule
) -> CalibratedTheory:
    """B_theory(step), dz_common_theory(step) (−Δz_c, mean over classes) and t'_0, t_0 of a run."""
    st = np.asarray(steps, dtype=np.int64)
    if st.ndim != 1 or (st.size and st.min() < 0):
        raise ValueError(f"steps must be a 1-D array of integers >= 0, got shape {st.shape}")
    for name, v in (("eta_y", eta_y), ("eta_z", eta_z)):
        if not (np.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {v!r}")
    red = reduced_system(int(st.max(initial=0)), c, eta_y, eta_z, rule)
    tp, t0 = transition_steps(red["h"], c.M, c.K, eta_y)
    return CalibratedTheory(
        steps=st,
        B_theory=red["B"][st],
        dz_common_theory=red["dz_common"][st],
        h=red["h"][st],
        t0_prime=tp,
        t0=t0,
        t0_prime_printed=theory.t0_prime(c.M, c.K, eta_y),
        t0_printed=theory.t0(c.M, c.K, eta_y),
        constants=c,
    )


def dz_common(z: ArrayLike, z0: ArrayLike, psi: ArrayLike, common_mask: ArrayLike) -> NDArray[np.float64]:
    """Measured −Δz of the common tokens, per class: mean over CT(n) of z_{ψ(n),c}(0) − z_{ψ(n),c}.

    z: (..., Q, M_ctx), z0: (Q, M_ctx), common_mask: (K, M_ctx) or (M_ctx,).  Returns (..., K),
    NaN for a class without a common token."""
    z, z0 = np.asarray(z, dtype=np.float64), np.asarray(z0, dtype=np.float64)
    psi = np.asarray(psi, dtype=np.int64)
    drop = (z0 - z)[..., psi, :]  # (..., K, M_ctx)
    mask = np.broadcast_to(np.asarray(common_mask, dtype=bool), drop.shape[-2:])
    n = mask.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(n > 0, (drop * mask).sum(-1) / n, np.nan)
