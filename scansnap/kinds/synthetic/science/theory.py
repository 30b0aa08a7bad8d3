"""Closed-form theory curves of Scan and Snap (Tian et al. 2023, App. D/F) and JoMA's v-dynamics.

Everything is numpy/scipy only and vectorised over t.  Symbols follow the paper:
h(s) the decoder scale (Eqn. 45, s = t/K), γ(t) the speed-control coefficient (Eqn. 85),
Γ(t) = η_Z ∫γ (Eqn. 128), B_n(t) = ¼ ln(C_0 + 4Γ) (Eqn. 129), t'_0 = K ln M/η_Y,
t_0 = 2(1+ω_1)K ln M/η_Y with ω_1 = ln ln M/ln M, and ν = η_Y/η_Z.
The dict keys of :func:`theory_curve` ("h", "gamma", "Gamma", "B_n", ...) are the project's
metric names, so theory and measurements overlay by key.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import log_softmax, wrightomega

Float = float | NDArray[np.float64]


def _positive(name: str, value: float) -> float:
    v = float(value)
    if not (np.isfinite(v) and v > 0):
        raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return v


def _tokens(M: float) -> float:
    m = float(M)
    if not (np.isfinite(m) and m >= 2):
        raise ValueError(f"M (number of tokens) must be a finite number >= 2, got {M!r}")
    return m


def _times(t: ArrayLike, name: str = "t") -> NDArray[np.float64]:
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name} must be finite and >= 0 (got min {np.min(arr)!r})")
    return arr


def _like(t: ArrayLike, out: NDArray[np.float64]) -> Float:
    return float(out) if np.ndim(t) == 0 else out


def _x(s: NDArray[np.float64], M: float, eta_y: float) -> NDArray[np.float64]:
    """x = M h solving e^x + a x = b with a = M−1, b = M η_Y s + 1 (Eqn. 45), overflow-free.

    Closed form: x = b/a − ω(z), z = b/a − ln a, ω = Wright omega.  Because ω + ln ω = z this
    equals ln(a ω(z)), which avoids the cancellation of b/a − ω for large z.  Two Newton steps
    on g(x) = expm1(x) + a x − M η_Y s (convex, increasing) polish to machine precision, also for
    tiny s where x ≈ η_Y s.  e^x ≤ b, so nothing overflows.
    """
    a = M - 1.0
    c = M * eta_y * s
    z = (c + 1.0) / a - np.log(a)
    w = wrightomega(z)
    with np.errstate(divide="ignore"):
        x = np.where(z > 0, np.log(a * w), (c + 1.0) / a - w)
    for _ in range(2):
        x = x - (np.expm1(x) + a * x - c) / (np.exp(x) + a)
    return np.where(c == 0, 0.0, np.maximum(x, 0.0))


def solve_h(s: ArrayLike, M: float, eta_y: float) -> Float:
    """Eqn. 45: e^{M h(s)} + (M−1) M h(s) = M η_Y s + 1, solved for h (h(0) = 0, s ≥ 0).

    Integral of ḣ = η_Y/((M−1) + e^{M h}) (Lemma 6).  Early phase h ≈ η_Y s/M, late phase
    h ≈ ln(M η_Y s)/M (Lemma 9).  Requires M ≥ 2 (M = 1 makes (M−1) vanish).
    """
    M, eta_y = _tokens(M), _positive("eta_y", eta_y)
    arr = _times(s, "s")
    return _like(s, _x(arr, M, eta_y) / M)


def _h_of_t(t: ArrayLike, M: float, K: float, eta_y: float) -> tuple[NDArray, NDArray]:
    M, K, eta_y = _tokens(M), _positive("K", K), _positive("eta_y", eta_y)
    x = _x(_times(t) / K, M, eta_y)
    return x / M, x


def gamma(t: ArrayLike, M: float, K: float, eta_y: float) -> Float:
    """Eqn. 85: γ(t) = (M−1)² h(t/K) / ((M−1) + e^{M h(t/K)}), the speed-control coefficient.

    e^{M h} ≤ M η_Y t/K + 1 by Eqn. 45, so the denominator cannot overflow.
    """
    h, x = _h_of_t(t, M, K, eta_y)
    M = float(M)
    return _like(t, (M - 1.0) ** 2 * h / ((M - 1.0) + np.exp(x)))


def Gamma(t: ArrayLike, M: float, K: float, eta_y: float, eta_z: float) -> Float:
    """Eqn. 128: Γ(t) = η_Z ∫_0^t γ(t') dt' = η_Z K (M−1)² h(t/K)² / (2 η_Y)."""
    eta_z = _positive("eta_z", eta_z)
    h, _ = _h_of_t(t, M, K, eta_y)
    return _like(t, eta_z * float(K) * (float(M) - 1.0) ** 2 * h**2 / (2.0 * eta_y))


def _B(four_gamma: NDArray, C0: float, zero_offset: bool) -> NDArray[np.float64]:
    # zero_offset: B̃ = ¼ ln((C_0 + 4Γ)/C_0), so B̃(0) = 0 (science §4 caveat)
    C0 = _positive("C0", C0)
    if zero_offset:
        return 0.25 * np.log1p(four_gamma / C0)
    return 0.25 * np.log(C0 + four_gamma)


def B_exact(
    t: ArrayLike, M: float, K: float, eta_y: float, eta_z: float, C0: float = 1.0, zero_offset: bool = False
) -> Float:
    """Eqn. 129: B_n(t) = ¼ ln(C_0 + 4Γ(t)) = ¼ ln(C_0 + 2(η_Z/η_Y) K (M−1)² h(t/K)²), exact in h."""
    four_gamma = 4.0 * np.asarray(Gamma(t, M, K, eta_y, eta_z))
    return _like(t, _B(four_gamma, C0, zero_offset))


def B_scan(
    t: ArrayLike, M: float, K: float, eta_y: float, eta_z: float, C0: float = 1.0, zero_offset: bool = False
) -> Float:
    """Thm. 4, t < t'_0: B_n(t) = ¼ ln(C_0 + (2(M−1)²/(K M²)) η_Y η_Z t²) (scanning, O(ln t))."""
    M, K = _tokens(M), _positive("K", K)
    eta_y, eta_z = _positive("eta_y", eta_y), _positive("eta_z", eta_z)
    arr = _times(t)
    return _like(t, _B(2.0 * (M - 1.0) ** 2 / (K * M**2) * eta_y * eta_z * arr**2, C0, zero_offset))


def B_snap(
    t: ArrayLike, M: float, K: float, eta_y: float, eta_z: float, C0: float = 1.0, zero_offset: bool = False
) -> Float:
    """Thm. 4, t ≥ t_0: B_n(t) = ¼ ln(C_0 + (2K(M−1)²/M²)(η_Z/η_Y) ln²(M η_Y t/K)) (snapping).

    Valid only for t ≥ t_0; the logarithm is clipped at 0 (ln⁺) so that the curve stays finite
    for t ≤ K/(M η_Y), far outside its range of validity.
    """
    M, K = _tokens(M), _positive("K", K)
    eta_y, eta_z = _positive("eta_y", eta_y), _positive("eta_z", eta_z)
    arr = _times(t)
    log_term = np.log(np.maximum(M * eta_y * arr / K, 1.0))
    return _like(t, _B(2.0 * K * (M - 1.0) ** 2 / M**2 * (eta_z / eta_y) * log_term**2, C0, zero_offset))


def omega_1(M: float) -> float:
    """Thm. 1/4: ω_1 = ln ln M / ln M, the o(1) correction in t_0 = 2(1+ω_1) K ln M/η_Y."""
    lnM = np.log(_tokens(M))
    return float(np.log(lnM) / lnM)


def t0_prime(M: float, K: float, eta_y: float) -> float:
    """Thm. 4: t'_0 = K ln M / η_Y, end of the scanning regime (γ peaks around here)."""
    return _positive("K", K) * float(np.log(_tokens(M))) / _positive("eta_y", eta_y)


def t0(M: float, K: float, eta_y: float, with_omega: bool = False) -> float:
    """Thm. 4: t_0 = 2(1+ω_1) K ln M / η_Y, start of snapping; ω_1 is dropped unless with_omega.

    The default (no ω_1) is what reproduces the dots of the paper's Fig. 9 (science §5).
    """
    factor = 1.0 + omega_1(M) if with_omega else 1.0
    return 2.0 * factor * t0_prime(M, K, eta_y)


def B_at_t0(M: float, K: float, nu: float, C0: float = 1.0) -> float:
    """Thm. 4: B_n(t_0) = ¼ ln(C_0 + 2K(M−1)² M^{-2} ν^{-1} ln²(2(1+ω_1) M ln M)), ν = η_Y/η_Z.

    This is B_snap at t_0 with ω_1 (depends on K, M, ν only); B_exact at that t_0 is smaller by
    about ¼·2·ln 2/ln(M ln M) because the snapping form overestimates h there.
    """
    M, K, nu = _tokens(M), _positive("K", K), _positive("nu", nu)
    arg = 2.0 * (1.0 + omega_1(M)) * M * np.log(M)
    return float(0.25 * np.log(_positive("C0", C0) + 2.0 * K * (M - 1.0) ** 2 / M**2 / nu * np.log(arg) ** 2))


def theory_curve(
    t: ArrayLike, M: float, K: float, eta_y: float, eta_z: float, C0: float = 1.0, zero_offset: bool = False
) -> dict[str, NDArray | float]:
    """Eqns. 45, 85, 128, 129 on a grid of t: h(t/K), γ, Γ, B_n and both regime forms.

    Keys "t", "h", "gamma", "Gamma", "B_n", "B_scan", "B_snap" (arrays like t) and the scalars
    "t0_prime" = K ln M/η_Y and "t0" = 2K ln M/η_Y (without ω_1, as in Fig. 9).
    """
    arr = np.atleast_1d(_times(t))
    args = (M, K, eta_y, eta_z, C0, zero_offset)
    return {
        "t": arr,
        "h": np.asarray(solve_h(arr / _positive("K", K), M, eta_y)),
        "gamma": np.asarray(gamma(arr, M, K, eta_y)),
        "Gamma": np.asarray(Gamma(arr, M, K, eta_y, eta_z)),
        "B_n": np.asarray(B_exact(arr, *args)),
        "B_scan": np.asarray(B_scan(arr, *args)),
        "B_snap": np.asarray(B_snap(arr, *args)),
        "t0_prime": t0_prime(M, K, eta_y),
        "t0": t0(M, K, eta_y),
    }


def _slope(x: NDArray, y: ArrayLike) -> float:
    y = np.asarray(y, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or x.size < 2:
        raise ValueError(f"t and B must be 1-D of equal length >= 2, got {x.shape} and {y.shape}")
    return float(np.polyfit(x, y, 1)[0])


def slope_vs_log(t: ArrayLike, B: ArrayLike) -> float:
    """Least-squares dB/d ln t (Thm. 4 scanning: → ½ once (2(M−1)²/(KM²))η_Yη_Z t² ≫ C_0)."""
    arr = np.asarray(t, dtype=np.float64)
    if not np.all(arr > 0):
        raise ValueError("t must be > 0 for a slope against ln t")
    return _slope(np.log(arr), B)


def slope_vs_loglog(t: ArrayLike, B: ArrayLike, M: float, K: float, eta_y: float) -> float:
    """Least-squares dB/d ln ln(M η_Y t/K) (Thm. 4 snapping: → ½ for t ≫ t_0)."""
    u = _tokens(M) * _positive("eta_y", eta_y) * np.asarray(t, dtype=np.float64) / _positive("K", K)
    if not np.all(u > 1):
        raise ValueError("t must satisfy M*eta_y*t/K > 1 for a slope against ln ln(M η_Y t/K)")
    return _slope(np.log(np.log(u)), B)


def joma_default_mu(n: int = 10, seed: int = 0) -> NDArray[np.float64]:
    """JoMA Fig. 4 target: μ = sort(U(0,1)·3 + 1), here from numpy's default_rng(seed).

    The reference script uses torch.manual_seed(0); this module may not import torch, so the
    values differ from the paper's, but the law (n values in [1, 4], sorted) is the same.
    """
    if int(n) < 1:
        raise ValueError(f"n must be an integer >= 1, got {n!r}")
    return np.sort(np.random.default_rng(seed).random(int(n)) * 3.0 + 1.0)


def joma_simulate(
    mu: ArrayLike,
    v0: float = 0.05,
    eta: float = 0.02,
    iters: int = 5000,
    tau: float = 3.0,
    nonlinear: bool = True,
    every: int = 1,
) -> dict[str, NDArray]:
    """JoMA Thm. 4 / Thm. 2 (Euler): v ← v + η(μ − v)∘softmax(v²/τ) (nonlinear), or
    v ← v + η μ∘softmax(v²/τ) (linear, μ playing the saliency Δ).

    Starts from v = v0·1.  Records the state *before* the update at iterations 0, every,
    2·every, ... (as draw_figure_4.py does): "iteration" (n_rec,), "v" (n_rec, len(mu)) and
    "entropy" (n_rec,) = −Σ p ln p in nats of p = softmax(v²/τ).
    """
    mu = np.asarray(mu, dtype=np.float64)
    if mu.ndim != 1 or mu.size < 1 or not np.all(np.isfinite(mu)):
        raise ValueError(f"mu must be a non-empty finite 1-D array, got shape {mu.shape}")
    eta, tau = _positive("eta", eta), _positive("tau", tau)
    if int(iters) < 1 or int(every) < 1:
        raise ValueError(f"iters and every must be integers >= 1, got {iters!r}, {every!r}")
    v = np.full(mu.shape, float(v0))
    rec_it, rec_v, rec_h = [], [], []
    for i in range(int(iters)):
        logp = log_softmax(v**2 / tau)
        p = np.exp(logp)
        if i % int(every) == 0:
            rec_it.append(i)
            rec_v.append(v.copy())
            rec_h.append(float(-np.sum(p * logp)))
        v = v + eta * ((mu - v) if nonlinear else mu) * p
    return {"iteration": np.asarray(rec_it), "v": np.asarray(rec_v), "entropy": np.asarray(rec_h)}
