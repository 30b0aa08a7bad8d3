"""Checks of scansnap.kinds.synthetic.science.theory against its defining equations, the paper's limits and Fig. 9."""

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import erf

from scansnap.kinds.synthetic.science import theory as th

MS = [10, 100, 1e4, 1e6]
S_GRID = np.concatenate([[0.0], np.geomspace(1e-9, 1e6, 60)])


@pytest.mark.parametrize("M", MS)
@pytest.mark.parametrize("eta_y", [0.01, 1.0, 80.0])
def test_solve_h_satisfies_eqn45(M, eta_y):
    with np.errstate(all="raise"):  # no overflow, no invalid values
        h = th.solve_h(S_GRID, M, eta_y)
    b = M * eta_y * S_GRID + 1.0
    residual = np.exp(M * h) + (M - 1) * M * h - b
    assert np.max(np.abs(residual) / b) < 1e-10
    assert h[0] == 0.0
    assert np.all(np.diff(h) > 0)


@pytest.mark.parametrize("M", MS)
def test_solve_h_matches_brentq(M):
    for s in [1e-6, 0.3, 7.0, 1e3, 1e6]:
        b = M * s + 1.0
        x = brentq(lambda x, b=b: np.exp(x) + (M - 1) * x - b, 0.0, np.log(b) + 1.0, xtol=1e-300, rtol=1e-15)
        assert th.solve_h(s, M, 1.0) == pytest.approx(x / M, rel=1e-12)


@pytest.mark.parametrize("M", MS)
def test_solve_h_relative_accuracy_at_tiny_s(M):
    # For y = η_Y s ≤ 1e-6, Eqn. 45 gives x = Mh = y − y²/(2M) + O(y³/M); the O(·) term is < 1e-12 relative.
    s = np.geomspace(1e-15, 1e-6, 30)
    y = 0.7 * s
    assert np.allclose(M * th.solve_h(s, M, 0.7), y - y**2 / (2 * M), rtol=1e-12, atol=0)


def test_scalar_in_scalar_out():
    assert isinstance(th.solve_h(2.0, 100, 1.0), float)
    assert isinstance(th.B_exact(2.0, 100, 1, 1.0, 1.0), float)
    assert th.gamma(np.array([1.0, 2.0]), 100, 1, 1.0).shape == (2,)


@pytest.mark.parametrize("M", MS)
def test_h_early_and_late_phase(M):
    K, eta_y = 3.0, 0.7
    # Early (Lemma 9): h ≈ η_Y t/(MK).  Eqn. 45 with e^x ≈ 1 + x + x²/2 gives x = Mh ≈ η_Y s − x²/(2M),
    # i.e. a relative error ≤ x/(2M) ≤ ln M/(20M) for t ≤ t'_0/10 (x ≤ ln M/10); we allow twice that.
    t = np.geomspace(1e-8, th.t0_prime(M, K, eta_y) / 10, 50)
    early = eta_y * t / (M * K)
    assert np.max(np.abs(th.solve_h(t / K, M, eta_y) / early - 1)) < np.log(M) / (10 * M)
    # Late: h ≈ ln(Mη_Y s)/M.  e^x = c + 1 − (M−1)x with c = Mη_Y s, so the relative error of x is
    # ≈ (M−1)/c ≤ 1/(20 ln M) for t ≥ 10 t_0 (c ≥ 20 M ln M); we allow 1.5× that.
    t = np.geomspace(10 * th.t0(M, K, eta_y), 1e12, 50)
    late = np.log(M * eta_y * t / K) / M
    assert np.max(np.abs(th.solve_h(t / K, M, eta_y) / late - 1)) < 1.5 / (20 * np.log(M))


@pytest.mark.parametrize(("M", "K", "eta_y", "eta_z"), [(100, 1, 1.0, 1.0), (1e4, 3, 0.5, 2.0), (1e6, 1, 8.0, 0.1)])
def test_Gamma_is_eta_z_integral_of_gamma(M, K, eta_y, eta_z):
    tp = th.t0_prime(M, K, eta_y)
    for t in [0.3 * tp, tp, 5 * th.t0(M, K, eta_y), 200 * tp]:
        pts = [p for p in (0.5 * tp, tp, 2 * tp) if p < t]
        integral, _ = quad(th.gamma, 0.0, t, args=(M, K, eta_y), points=pts, limit=200, epsabs=0, epsrel=1e-10)
        assert th.Gamma(t, M, K, eta_y, eta_z) == pytest.approx(eta_z * integral, rel=1e-6)


def test_gamma_no_overflow_and_regimes():
    M, K, eta_y = 1e6, 1, 1.0
    t = np.array([0.0, 1.0, th.t0_prime(M, K, eta_y), 1e6, 1e15])
    with np.errstate(all="raise"):
        g = th.gamma(t, M, K, eta_y)
        th.B_exact(t, M, K, eta_y, 1.0)
    assert g[0] == 0.0 and np.all(np.isfinite(g))
    # Thm. 1(b): γ ≈ η_Y t/K early, then decays
    assert g[1] == pytest.approx(eta_y * 1.0 / K, rel=1e-4)
    assert g[3] > g[4] > 0


@pytest.mark.parametrize("M", [100, 1e4, 1e6])
def test_B_scan_and_B_snap_match_B_exact_in_their_regimes(M):
    K, ey, ez = 1.0, 1.0, 1.0
    # Scanning: B error ≈ ½·(relative error of h) ≤ ln M/(40M) for t ≤ t'_0/10 (see early-phase test).
    t = np.geomspace(1e-3, th.t0_prime(M, K, ey) / 10, 40)
    assert np.max(np.abs(th.B_scan(t, M, K, ey, ez) - th.B_exact(t, M, K, ey, ez))) < np.log(M) / (20 * M)
    # Snapping: B error ≈ ½·(relative error of h) ≤ 1/(40 ln M) for t ≥ 10 t_0; we allow 0.03/ln M.
    t = np.geomspace(10 * th.t0(M, K, ey), 1e8 * th.t0(M, K, ey), 40)
    assert np.max(np.abs(th.B_snap(t, M, K, ey, ez) - th.B_exact(t, M, K, ey, ez))) < 0.03 / np.log(M)


def test_zero_offset():
    args = (1e4, 2, 1.0, 3.0)
    for fn in (th.B_exact, th.B_scan, th.B_snap):
        assert fn(0.0, *args, C0=5.0, zero_offset=True) == 0.0
        t = np.array([0.5, 50.0, 5e4])
        diff = fn(t, *args, C0=5.0) - fn(t, *args, C0=5.0, zero_offset=True)
        assert np.allclose(diff, 0.25 * np.log(5.0), rtol=0, atol=1e-12)


def test_slopes_section_6_8():
    """science §6.8: B = ¼ ln(C_0 + 4Γ).  Scanning: 4Γ ∝ t², so dB/d ln t = ½·4Γ/(C_0 + 4Γ) → ½ once 4Γ ≫ C_0.
    Snapping: 4Γ ∝ (ln(Mη_Y t/K))², so dB/d ln ln(Mη_Y t/K) → ½ likewise.  The scanning window starts where
    4Γ is only ~4·C_0 (measured slope 0.467): ±0.05 around ½."""
    M, K, ey, ez, C0 = 1e4, 1.0, 1.0, 1.0, 1.0
    lo = 2 * np.sqrt(C0 * K * M**2 / (2 * (M - 1) ** 2 * ey * ez))
    t = np.geomspace(lo, th.t0_prime(M, K, ey), 200)
    assert th.slope_vs_log(t, th.B_exact(t, M, K, ey, ez)) == pytest.approx(0.5, abs=0.05)  # measured 0.467
    t0 = th.t0(M, K, ey)
    slopes = []
    for hi in (1e2, 1e4, 1e8):
        t = np.geomspace(10 * t0, hi * t0, 200)
        slopes.append(th.slope_vs_loglog(t, th.B_exact(t, M, K, ey, ez), M, K, ey))
    assert slopes[-1] == pytest.approx(0.5, abs=0.05)  # measured 0.501
    assert abs(slopes[0] - 0.5) > abs(slopes[1] - 0.5) > abs(slopes[2] - 0.5)  # tends to ½


@pytest.mark.parametrize(
    ("nu", "M", "t_end", "b_t0", "b_end"), [(10.0, 100, 5.0, 0.51, 0.78), (1.0, 1e4, 50.0, 1.38, 1.53)]
)
def test_fig9_numbers(nu, M, t_end, b_t0, b_end):
    # Fig. 9 (K = 1, C_0 = 1): the dots are B_exact at t_0 = 2K ln M/η_Y *without* ω_1
    # (with ω_1 one gets 0.55 / 1.40, and the snapping closed form gives 0.60 / 1.43).
    # b_t0, b_end: the values science §5 reads off the paper's Fig. 9 (2 decimals, hence ±0.005).
    b0 = [th.B_exact(th.t0(M, 1, nu * ez), M, 1, nu * ez, ez) for ez in (0.5, 1, 2, 4, 8)]
    assert np.allclose(b0, b0[0], rtol=1e-12, atol=0)
    assert b0[0] == pytest.approx(b_t0, abs=0.005)
    assert th.B_exact(t_end, M, 1, nu * 8.0, 8.0) == pytest.approx(b_end, abs=0.005)


@pytest.mark.parametrize("M", [100, 1e4, 1e6])
def test_B_at_t0_closed_form(M):
    K, nu = 2.0, 3.0
    t0w = {ez: th.t0(M, K, nu * ez, with_omega=True) for ez in (0.5, 1, 2, 4, 8)}
    exact = np.array([th.B_exact(t, M, K, nu * ez, ez) for ez, t in t0w.items()])
    snap = np.array([th.B_snap(t, M, K, nu * ez, ez) for ez, t in t0w.items()])
    closed = th.B_at_t0(M, K, nu)
    assert np.allclose(exact, exact[0], rtol=1e-12, atol=0)  # invariant across η_Z at fixed ν
    assert np.allclose(snap, closed, rtol=1e-12, atol=0)  # closed form = B_snap(t_0 with ω_1)
    # B_snap overestimates h at t_0 by ≈ ln 2/ln(M ln M) relatively, so B by about half of that.
    gap = closed - exact[0]
    assert 0 < gap < 0.6 * np.log(2) / np.log(M * np.log(M))


def test_theory_curve_keys_and_consistency():
    t = np.linspace(0, 50, 11)
    c = th.theory_curve(t, 1e4, 1, 2.0, 1.0)
    assert set(c) == {"t", "h", "gamma", "Gamma", "B_n", "B_scan", "B_snap", "t0_prime", "t0"}
    assert c["t0"] == pytest.approx(2 * c["t0_prime"]) and c["t0_prime"] == pytest.approx(np.log(1e4) / 2)
    assert np.array_equal(c["B_n"], th.B_exact(t, 1e4, 1, 2.0, 1.0))
    assert np.all(np.diff(c["B_n"]) > 0) and c["B_n"][0] == 0.0


def test_t0_with_omega():
    M = 1e4
    w1 = np.log(np.log(M)) / np.log(M)
    assert th.t0(M, 3, 0.5, with_omega=True) == pytest.approx(2 * (1 + w1) * 3 * np.log(M) / 0.5, rel=1e-14)


def test_joma_nonlinear_bounce_back():
    mu = th.joma_default_mu()  # science §7: μ = sort(rand(10)·3 + 1), so 10 values in [1, 4], ascending
    assert mu.shape == (10,) and np.all(np.diff(mu) >= 0) and mu.min() >= 1 and mu.max() <= 4
    r = th.joma_simulate(mu)
    H, v = r["entropy"], r["v"]
    assert v.shape == (5000, 10) and r["iteration"][-1] == 4999  # 5000 iterations (science §7)
    assert H[0] == pytest.approx(np.log(10), abs=1e-9)  # v(0) = 0.05·1: softmax uniform over 10
    i_min = int(np.argmin(H))
    assert 0 < i_min < len(H) - 1
    # the bounce (science §7) is qualitative: 0.2 nats is half the measured one (min 1.14 at 819, final 1.55)
    # and ~10⁸ times the Euler loop's float error (test_joma_simulate_equals_own_euler_loop: 1e-12)
    assert H[-1] - H[i_min] > 0.2
    reached = v >= 0.9 * mu
    first = np.where(reached.any(axis=0), reached.argmax(axis=0), len(H))
    assert first[-1] < len(H) and first[-1] < first[0]  # largest μ converges first
    assert np.all(np.diff(first) <= 0)
    assert np.array_equal(th.joma_simulate(mu, every=100)["v"], v[::100])


def test_joma_linear_entropy_monotone_and_erf_invariant():
    mu = th.joma_default_mu()
    H = th.joma_simulate(mu, nonlinear=False)["entropy"]
    # linear: the most salient component takes all (science §7), so H falls from ln 10 = 2.30 towards 0
    assert np.all(np.diff(H) <= 1e-12) and H[-1] < 0.1
    # Continuous form dv_l/dt = μ_l e^{v_l²/τ}/A gives ∫_{v0}^{v_l} e^{−u²/τ}du ∝ μ_l, i.e.
    # (erf(v_l/√τ) − erf(v0/√τ))/μ_l equal for all l.  Euler's relative error per step is
    # ≈ |v|Δv/τ ≤ 0.9·(1e-4·3.9)/3 ≈ 1.2e-4 (Δv ≤ ημ), so 1e-4 on the spread is a safe bound
    # (measured 5e-6); a wrong update (e.g. μ² instead of μ) spreads by O(1).
    tau, v0 = 3.0, 0.05
    v = th.joma_simulate(mu, v0=v0, eta=1e-4, iters=20000, tau=tau, nonlinear=False)["v"][-1]
    q = (erf(v / np.sqrt(tau)) - erf(v0 / np.sqrt(tau))) / mu
    assert v.max() > 0.5
    assert np.ptp(q) / q.mean() < 1e-4


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: th.solve_h(-1.0, 10, 1.0), "s must be finite and >= 0"),
        (lambda: th.B_exact(np.array([1.0, -2.0]), 10, 1, 1.0, 1.0), "t must be finite and >= 0"),
        (lambda: th.gamma(np.nan, 10, 1, 1.0), "t must be finite"),
        (lambda: th.solve_h(1.0, 1, 1.0), "M .* >= 2"),
        (lambda: th.t0(1.5, 1, 1.0), "M .* >= 2"),
        (lambda: th.solve_h(1.0, 10, 0.0), "eta_y must be .* > 0"),
        (lambda: th.Gamma(1.0, 10, 1, 1.0, -1.0), "eta_z must be .* > 0"),
        (lambda: th.B_scan(1.0, 10, 0, 1.0, 1.0), "K must be .* > 0"),
        (lambda: th.B_exact(1.0, 10, 1, 1.0, 1.0, C0=0.0), "C0 must be .* > 0"),
        (lambda: th.B_at_t0(10, 1, -1.0), "nu must be .* > 0"),
        (lambda: th.joma_simulate([1.0, 2.0], eta=0.0), "eta must be .* > 0"),
        (lambda: th.slope_vs_loglog([0.01, 1.0], [0.0, 1.0], 10, 1, 1.0), "M\\*eta_y\\*t/K > 1"),
    ],
)
def test_input_validation(call, match):
    with pytest.raises(ValueError, match=match):
        call()
