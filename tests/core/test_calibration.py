"""Calibrated Theorem 4 (scansnap.kinds.synthetic.science.calibration) against an independent float64 integration.

``lemma3_meanfield`` below integrates the T = ∞ system straight from the paper, in engine units
(one step = the class mean of Lemma 3's ẇ_n = η_Y(e_n − α_n) and Eqn. 10's
ż_m = η_Z Σ_{n∈ψ⁻¹(m)} diag(f_n) P^⊥_{f_n} Y(e_n − α_n), Y = F(F^TF)⁻¹W), with numpy and a loop
over classes; it shares no code with scansnap/kinds/synthetic/science/model.py or train.py.

Tolerance.  The calibrated curves leave out one effect: distinct logits rise by Δz_l ≈ f_l²B̂,
which lowers ρ and σ by δ = 2κ₄B̂(1 − σ); calibration.feedback_error turns that into a relative
error ≲ ½δ(1 − e^{−4u})/u.  With ≥ 100 linspace distinct tokens κ₄ ≈ 0.016 and the estimate is
≤ 0.3 % (measured 0.13–0.16 %), well inside the issue's 5 %.  With 10 distinct tokens κ₄ ≈ 0.14
and B̂ ≈ 0.5: the estimate is ~7 % and the error is measured at 5.6 %: looser, for that reason.
A heavy common token alone does not loosen it (σ(u) is kept): 0.65 % at weight 5.
"""

from __future__ import annotations

import numpy as np
import pytest

from scansnap.kinds.synthetic.science import calibration as cal
from scansnap.kinds.synthetic.science import theory
from scansnap.kinds.synthetic.science.config import DataConfig, OptimConfig, RunConfig
from scansnap.kinds.synthetic.science.data import build_problem

SGD = OptimConfig(method="sgd", momentum=0.0)


def lemma3_meanfield(P, psi, M_out, eta_y, eta_z, steps, momentum=0.0):
    """Euler (or heavy-ball) steps of Lemma 3 + Eqn. 10 from W = 0, Z = 0; B̂ as train.Trainer.step
    defines it.  Returns W (S, K, M_out), z (S, Q, M_ctx), B (S, K) at steps 0..S−1, f (S−1, K, M_ctx)."""
    K, Mc = P.shape
    W, z = np.zeros((K, M_out)), np.zeros((int(psi.max()) + 1, Mc))
    target = np.eye(K, M_out)
    distinct = (P > 0) & ((P > 0).sum(0) == 1)[None]
    buf_W = buf_z = None
    B = np.zeros(K)
    rec = {"W": [W], "z": [z], "B": [B], "f": []}
    for _ in range(steps):
        ct = P * np.exp(z[psi])
        f = ct / np.linalg.norm(ct, axis=1, keepdims=True)
        a = np.exp(W - W.max(1, keepdims=True))
        resid = target - a / a.sum(1, keepdims=True)  # e_n − α_n
        Y = f.T @ np.linalg.solve(f @ f.T, W)
        grad_z = np.zeros_like(z)
        for n in range(K):
            g = Y @ resid[n]
            grad_z[psi[n]] -= f[n] * (g - f[n] * (f[n] @ g)) / K
        grad_W = -resid / K
        if momentum:
            buf_W = grad_W if buf_W is None else momentum * buf_W + grad_W
            buf_z = grad_z if buf_z is None else momentum * buf_z + grad_z
            grad_W, grad_z = buf_W, buf_z
        z_new, W = z - eta_z * grad_z, W - eta_y * grad_W
        B = B + ((z_new - z)[psi] * distinct).sum(1) / (f**2 * distinct).sum(1)
        z = z_new
        for key, v in (("W", W), ("z", z), ("B", B), ("f", f)):
            rec[key].append(v)
    return {k: np.array(v) for k, v in rec.items()}


def problem(num_distinct=100, common_weight=1.0, num_common=1, num_last=1, per_last=2):
    return build_problem(
        DataConfig(
            num_last=num_last,
            num_next_per_last=per_last,
            num_common=num_common,
            num_distinct_per_next=num_distinct,
            common_weight=common_weight,
            T="inf",
        )
    )


def constants(pb, z0=None):
    z0 = np.zeros((pb.Q, pb.M_ctx)) if z0 is None else z0
    return cal.theorem4_constants(pb.P, pb.psi, pb.common_mask, z0, pb.M_out)


def rel_err(theory_curve, measured, steps, t_min=10):
    ok = np.asarray(steps) >= t_min
    return np.abs(theory_curve[ok] / measured[ok] - 1)


# ---------------------------------------------------------------------------- constants
def test_rho0_at_zero_init_is_the_norm_over_the_common_weight():
    """Science §4.1: ρ_0² = ‖P_n‖²/P(c|n)² = (w² + Σ_l x_l²)/w² for one common token of weight w."""
    for w in (1.0, 3.0):
        pb = problem(common_weight=w)
        c = constants(pb)
        x = np.linspace(0.1, 1.0, 100)
        assert c.rho0_sq == pytest.approx((w**2 + np.sum(x**2)) / w**2, rel=1e-12)
        assert c.common_share == pytest.approx(c.rho_init, rel=1e-12)  # one common token: σ = ρ
        assert c.C0_paper == pytest.approx(c.rho0_sq**2 / 2, rel=1e-12)
        assert c.C0_engine == pytest.approx(c.rho0_sq**2, rel=1e-12)  # N_c K ρ_0⁴/(K_m (K−1)), K = K_m = 2
        assert (c.K, c.M, c.n_common, c.classes_per_query) == (2, pb.M_out, 1, 2.0)
    assert constants(problem()).C0_paper > 100  # "in the hundreds" (science §4.1): ρ_0² ≈ 38


def test_constants_follow_the_gram_matrix_for_random_logits_and_several_queries():
    pb = problem(num_distinct=7, num_common=3, num_last=2, per_last=3)  # K = 6, Q = 2, N_c = 3
    z0 = np.random.default_rng(0).normal(size=(pb.Q, pb.M_ctx))
    c = constants(pb, z0)
    f = np.array([pb.P[n] * np.exp(z0[pb.psi[n]]) for n in range(pb.K)])
    f /= np.sqrt((f**2).sum(1, keepdims=True))
    off = [f[n] @ f[m] for n in range(pb.K) for m in range(pb.K) if n != m]
    assert c.rho_init == pytest.approx(np.mean(off), rel=1e-12)
    assert c.common_share == pytest.approx(np.mean((f[:, :3] ** 2).sum(1)), rel=1e-12)
    assert (c.K, c.n_common, c.classes_per_query) == (6, 3, 3.0)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"P": np.ones((1, 4))}, "K ≥ 2"),
        ({"psi": np.array([0, 5])}, "psi must map"),
        ({"common_mask": np.zeros(3, dtype=bool)}, "common_mask must have shape"),
        ({"common_mask": np.zeros(4, dtype=bool)}, "no common token"),
        ({"M_out": 1}, "M_out"),
    ],
)
def test_bad_inputs_name_the_field(change, match):
    args = {"P": np.full((2, 4), 0.25), "psi": np.array([0, 0]), "common_mask": np.ones(4, dtype=bool)}
    args |= {"z0": np.zeros((1, 4)), "M_out": 6} | change
    with pytest.raises(ValueError, match=match):
        cal.theorem4_constants(**args)


# ---------------------------------------------------------------------------- decoder and factors
def test_decoder_recursion_is_the_lemma3_decoder():
    """w_n = (M−1)h ζ_n: the measured margin w_y − w_o equals M h_k of the recursion, step by step."""
    pb = problem(num_distinct=10)
    run = lemma3_meanfield(pb.P, pb.psi, pb.M_out, 3.0, 1.0, 200)
    margin = run["W"][:, 0, 0] - run["W"][:, 0, 1]
    h = cal.decoder_h(200, pb.M_out, pb.K, 3.0)
    np.testing.assert_allclose(margin, pb.M_out * h, rtol=1e-12, atol=1e-14)
    red = cal.reduced_system(200, constants(pb), 3.0, 1.0, SGD)
    np.testing.assert_allclose(red["h"], h, rtol=1e-12, atol=1e-15)


def test_decoder_recursion_tends_to_eqn45_as_the_rate_falls():
    """Euler's global error is O(step): halving η_Y (at equal η_Y t) halves the gap to Eqn. 45."""
    M, K, gaps = 50, 2, []
    for eta_y in (0.4, 0.2, 0.1):
        n = round(40 / eta_y)
        h = cal.decoder_h(n, M, K, eta_y)
        gaps.append(abs(h[-1] / theory.solve_h(n / K, M, eta_y) - 1))
    assert gaps[0] > gaps[1] > gaps[2]
    assert gaps[1] / gaps[2] == pytest.approx(2.0, rel=0.1)


@pytest.mark.parametrize(("num_last", "per_last", "num_common"), [(1, 3, 2), (2, 2, 1)])
def test_per_step_factors_of_K_Nc_and_the_cross_term(num_last, per_last, num_common):
    """Exact per-step identities of the module docstring, on the independent integration:
    ΔB̂ = η_Z (G/K)(K−1)βρ with β = (ρ + 1/(M−1))/((1−ρ)(1+(K−1)ρ)), and
    −Δz_c = η_Z (K_m/K) G (K−1)(1−ρ)β σ/N_c (so −Δz_c/ΔB̂ = (K_m/N_c)(1−ρ)σ/ρ)."""
    pb = problem(num_distinct=6, num_common=num_common, num_last=num_last, per_last=per_last)
    c, eta_z = constants(pb), 0.7
    run = lemma3_meanfield(pb.P, pb.psi, pb.M_out, 2.0, eta_z, 60)
    K, M = pb.K, pb.M_out
    for k in (0, 5, 59):
        f, W = run["f"][k], run["W"][k]
        rho, sigma = f[0] @ f[1], np.sum(f[0, :num_common] ** 2)
        margin = W[0, 0] - W[0, 1]
        G = margin * (1 - 1 / (1 + (M - 1) * np.exp(-margin)))
        beta = (rho + 1 / (M - 1)) / ((1 - rho) * (1 + (K - 1) * rho))
        dB = run["B"][k + 1, 0] - run["B"][k, 0]
        drop = run["z"][k, 0, 0] - run["z"][k + 1, 0, 0]
        assert dB == pytest.approx(eta_z * G / K * (K - 1) * beta * rho, rel=1e-9)
        assert drop == pytest.approx(
            eta_z * per_last / K * G * (K - 1) * (1 - rho) * beta * sigma / num_common, rel=1e-9
        )
    assert c.classes_per_query == per_last


def test_printed_form_is_the_small_rho_limit_of_the_calibrated_curves():
    """With ε = 1/(M−1) ≪ ρ ≪ 1 the calibrated curves reduce to Eqn. 129 in engine units, for any
    K, N_c, K_m.  Left gaps: O(Kρ) (here 0.3 %) and the left Riemann sum of G ∝ t, ~1/t."""
    st = np.arange(20001)
    for K, n_c, k_m in [(2, 1, 2), (4, 3, 4), (4, 3, 2)]:
        c = cal.Theorem4Constants(K, 10**6, n_c, k_m, 1e-3, 1e-3, 1e-3, 1e-3)
        calib = cal.calibrated_curves(st, c, 0.05, 0.05, SGD)
        printed = cal.printed_curves(st, c, 0.05, 0.05)
        for t_min, tol in ((100, 0.015), (1000, 0.005)):
            ok = st >= t_min
            assert np.max(np.abs(printed["dz_common"][ok] / calib.dz_common_theory[ok] - 1)) < tol
            assert np.max(np.abs(printed["B"][ok] / calib.B_theory[ok] - 1)) < tol


# ---------------------------------------------------------------------------- theory meets measurement
@pytest.mark.parametrize(
    ("num_distinct", "weight", "steps", "num_last", "per_last"),
    [(100, 1.0, 20000, 1, 2), (200, 1.0, 3000, 1, 2), (100, 5.0, 3000, 1, 2), (100, 1.0, 3000, 2, 2)],
)
def test_calibrated_theory_meets_the_independent_integration(num_distinct, weight, steps, num_last, per_last):
    """Theorem 4's setting (one query, K = 2, one common token, ≥ 100 linspace distinct tokens,
    zero init, plain SGD, mean-field steps): within 5 % for t ≥ 10, and within 1.5× the
    first-order estimate of the one effect the curves leave out (module docstring).  The last
    case has two queries of two classes each (K_m = 2 < K = 4), outside Theorem 4."""
    pb = problem(num_distinct, weight, num_last=num_last, per_last=per_last)
    run = lemma3_meanfield(pb.P, pb.psi, pb.M_out, 1.0, 1.0, steps)
    st = np.arange(steps + 1)
    th = cal.calibrated_curves(st, constants(pb), 1.0, 1.0, SGD)
    dz = cal.dz_common(run["z"], run["z"][0], pb.psi, pb.common_mask).mean(1)
    B = run["B"].mean(1)
    bound = cal.feedback_error(th.constants, th.B_theory, th.dz_common_theory)[st >= 10]
    for calib, meas in ((th.dz_common_theory, dz), (th.B_theory, B)):
        err = rel_err(calib, meas, st)
        assert err.max() < 0.05
        assert np.all(err <= 1.5 * bound + 1e-4)


def test_ten_distinct_tokens_are_looser_for_the_stated_reason():
    """10 distinct tokens: κ₄ ≈ 0.14, the left-out feedback is large; the error passes 5 % (measured
    5.6 %) yet stays within 1.5× feedback_error."""
    pb, steps = problem(10, 1.0), 3000
    run = lemma3_meanfield(pb.P, pb.psi, pb.M_out, 1.0, 1.0, steps)
    st = np.arange(steps + 1)
    th = cal.calibrated_curves(st, constants(pb), 1.0, 1.0, SGD)
    dz = cal.dz_common(run["z"], run["z"][0], pb.psi, pb.common_mask).mean(1)
    err = rel_err(th.dz_common_theory, dz, st)
    bound = cal.feedback_error(th.constants, th.B_theory, th.dz_common_theory)[st >= 10]
    assert err.max() > 0.05
    assert np.all(err <= 1.5 * bound + 1e-4)


def test_momentum_is_stepped_not_time_changed():
    """Momentum 0.9: the reduced system stepped with the heavy-ball rule follows the full system
    (measured 0.015 %); the plain-SGD curve does not (B̂ ends 25 % lower with momentum: the hard snap)."""
    pb, steps = problem(100, 1.0), 3000
    run = lemma3_meanfield(pb.P, pb.psi, pb.M_out, 1.0, 1.0, steps, momentum=0.9)
    st = np.arange(steps + 1)
    c = constants(pb)
    th = cal.calibrated_curves(st, c, 1.0, 1.0, OptimConfig(momentum=0.9))
    dz = cal.dz_common(run["z"], run["z"][0], pb.psi, pb.common_mask).mean(1)
    assert rel_err(th.dz_common_theory, dz, st).max() < 0.01
    assert rel_err(th.B_theory, run["B"].mean(1), st).max() < 0.01
    plain = cal.calibrated_curves(st, c, 1.0, 1.0, SGD)
    assert plain.B_theory[-1] > 1.2 * run["B"][-1].mean()
    assert th.t0 < plain.t0 / 3  # momentum's decoder reaches t_0's margin ~1/(1−μ) sooner


def test_transition_steps_are_the_printed_ones_for_plain_sgd():
    c = constants(problem(100, 1.0))
    th = cal.calibrated_curves(np.arange(200), c, 0.5, 0.5, SGD)
    assert th.t0_prime_printed == pytest.approx(2 * np.log(c.M) / 0.5)
    assert th.t0_printed == pytest.approx(2 * th.t0_prime_printed)
    # the discrete decoder leads Eqn. 45 by under a step at η_Y = 0.5
    assert abs(th.t0_prime - th.t0_prime_printed) < 1.0 and abs(th.t0 - th.t0_printed) < 1.0
    assert np.isnan(cal.calibrated_curves(np.arange(10), c, 0.5, 0.5, SGD).t0)  # not reached: NaN


def test_adam_is_stepped_per_coordinate():
    """torch.optim.Adam's rule: step 1 moves a coordinate by η·g/|g| (decoder margin 2η; z_c not at
    all: G = 0 at W = 0); z_c's first gradient comes at step 2, where m̂/√v̂ = (0.1/0.19)/√(0.001/(1−0.999²))."""
    c = constants(problem(100, 1.0))
    red = cal.reduced_system(1, c, 0.1, 0.05, OptimConfig(method="adam"))
    assert red["h"][1] * c.M == pytest.approx(0.2, rel=1e-5)  # ε = 1e-8 against |g_o| ≈ 1/(K(M−1)) ≈ 2.5e-3
    assert red["dz_common"][1] == 0.0
    red = cal.reduced_system(2, c, 0.1, 0.05, OptimConfig(method="adam"))
    step2 = 0.05 * (0.1 / 0.19) / np.sqrt(0.001 / (1 - 0.999**2))
    assert red["dz_common"][2] == pytest.approx(step2, rel=2e-4)  # ε = 1e-8 against √v̂ ≈ 1e-4


# ---------------------------------------------------------------------------- the engine's own trainer
def trainer_curves(cfg: RunConfig):
    from scansnap.kinds.synthetic.science.train import Trainer

    tr = Trainer(cfg)
    snaps = list(tr.run())
    pb, z0 = tr.problem, tr.Z0[0].double().numpy()
    steps = np.array([s.step for s in snaps])
    B = np.array([s.scalars["B_hat"][0].mean() for s in snaps])
    dz = cal.dz_common(np.array([s.arrays["z"][0] for s in snaps]), z0, pb.psi, pb.common_mask).mean(1)
    c = cal.theorem4_constants(pb.P, pb.psi, pb.common_mask, z0, pb.M_out)
    return steps, B, dz, cal.calibrated_curves(steps, c, cfg.optim.eta_y, cfg.optim.eta_z, cfg.optim)


ITEM1 = {  # issue 13 item 1 (the theorem4 preset before its rebuild)
    "data": {"num_last": 1, "num_next_per_last": 2, "num_common": 1, "num_distinct_per_next": 100, "T": "inf"},
    "model": {"kind": "yz-meanfield", "meanfield_decoder": "lemma3", "init": "zero", "dtype": "float64"},
    "optim": {"method": "sgd", "eta_y": 1.0, "eta_z": 1.0, "momentum": 0.0, "batch": 1, "steps": 20000},
    "snapshots": {"log_count": 150, "max_count": 200},
}


@pytest.mark.parametrize(("momentum", "steps"), [(0.0, 20000), (0.9, 3000)])
def test_engine_trainer_meets_the_calibrated_curves(momentum, steps):
    """Trainer on item 1's config: within 5 % for t ≥ 10 (measured 0.16 %; with momentum 0.9, 0.02 %).
    Snapshots store z in float32: 1e-7 relative, far below the tolerance."""
    cfg = RunConfig.from_dict(ITEM1).with_overrides({"optim.momentum": momentum, "optim.steps": steps})
    steps_, B, dz, th = trainer_curves(cfg)
    assert rel_err(th.B_theory, B, steps_).max() < 0.05
    assert rel_err(th.dz_common_theory, dz, steps_).max() < 0.05


def test_dz_common_is_the_mean_drop_over_common_tokens():
    z0 = np.zeros((2, 4))
    z = np.array([[[-1.0, -3.0, 5.0, 0.0], [-2.0, 0.0, 0.0, 9.0]]])  # (S=1, Q=2, M=4)
    common = np.array([[1, 1, 0, 0], [1, 0, 0, 0], [0, 0, 0, 0]], dtype=bool)
    out = cal.dz_common(z, z0, np.array([0, 1, 1]), common)
    np.testing.assert_allclose(out[0, :2], [2.0, 2.0])
    assert np.isnan(out[0, 2])
