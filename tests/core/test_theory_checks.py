"""scansnap.kinds.synthetic.science.theory_checks: theorem conditions on runs, the finite-T sign check, the measured
snap."""

from __future__ import annotations

import numpy as np
import pytest

from scansnap.core.config import SnapshotConfig
from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.synthetic.science import theory
from scansnap.kinds.synthetic.science import theory_checks as tc
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.paper.presets import get_preset


def facts(cfg: RunConfig) -> tc.RunFacts:
    pb = build_problem(cfg.data)
    return tc.run_facts(cfg, pb, np.zeros((pb.Q, pb.M_ctx)))


def failed(cfg: RunConfig, theorem: str) -> set[str]:
    return {c.name for c in tc.applicability(facts(cfg))[theorem] if not c.holds}


# ---------------------------------------------------------------------------- applicability
def test_theorem4_preset_meets_every_condition():
    cfg = get_preset("theorem4").config
    for theorem in ("theorem2", "theorem3", "theorem4"):
        conds = tc.applicability(facts(cfg))[theorem]
        assert all(c.holds for c in conds), [c for c in conds if not c.holds]
        assert all(c.detail for c in conds)


def test_the_finite_t_lecture_fails_the_named_conditions_and_says_each_in_words():
    """Finite T, ten common tokens with ρ(0) = 10/(10 + Σx²) ≈ 0.72 ≥ 1/K, the plain decoder, momentum;
    each failed condition has its numbers (detail) and one sentence of words (plain)."""
    cfg = get_preset("lecture-finite-t").config
    assert failed(cfg, "theorem4") == {"T = ∞", "Assumption 2", "Lemma-3 decoder", "plain SGD", "one common token"}
    assert failed(cfg, "theorem3") == {"T = ∞", "Assumption 2", "Lemma-3 decoder", "plain SGD"}
    conds = {c.name: c for c in tc.applicability(facts(cfg))["theorem4"]}
    x = np.linspace(0.1, 1.0, 10)
    rho = 10 / (10 + np.sum(x**2))
    assert f"{rho:.3g}" in conds["Assumption 2"].detail and "1/K = 0.5" in conds["Assumption 2"].detail
    assert conds["T = ∞"].plain == "the theorem assumes infinitely long sequences; this run uses 128 tokens"
    assert f"overlap by {rho:.2g}, more than the 0.5 it allows" in conds["Assumption 2"].plain
    assert conds["plain SGD"].plain == "the theorem assumes plain gradient steps; this run uses SGD with momentum 0.9"
    assert conds["one common token"].plain.endswith("this run has 10")
    for c in conds.values():  # words, not symbols: no inequality or Greek letter in a plain sentence
        assert not set(c.plain) & set("λρξ≥≤<>=∞|"), c.plain


def test_the_lecture_preset_is_inside_theorem_4():
    """The Lecture preset is Theorem 4's own setting (T = ∞, one common token, one query, the Lemma-3
    decoder, plain SGD, zero init, η_Y ≥ η_Z, Assumption 2): its calibrated curve is drawn solid."""
    cfg = get_preset("lecture").config
    assert failed(cfg, "theorem4") == set() and failed(cfg, "theorem2") == set()


def test_adam_rates_queries_and_init_are_named():
    base = get_preset("theorem4").config
    adam = base.with_overrides({"optim.method": "adam"})
    sgd_cond = next(c for c in tc.applicability(facts(adam))["theorem4"] if c.name == "plain SGD")
    assert not sgd_cond.holds and "Adam" in sgd_cond.detail
    slow_y = base.with_overrides({"optim.eta_y": 0.1, "optim.eta_z": 0.2})
    assert failed(slow_y, "theorem4") == {"η_Y ≥ η_Z"}
    two_q = base.with_overrides({"data.num_last": 2, "data.common_weight": 0.5})
    assert failed(two_q, "theorem4") == {"one query"}
    rand = base.with_overrides({"model.init": "normal"})
    assert failed(rand, "theorem4") == {"Y(0) = 0"}
    assert failed(rand, "theorem3") == failed(rand, "theorem2") == {"Y(0) = 0"}  # they rest on Thm. 1's ξ_n > 0


def test_several_common_tokens_corollary_2():
    """Three equal common tokens, one query: Corollary 2 covers Thm 2(b); Thm 4 needs one."""
    cfg = get_preset("theorem4").config.with_overrides({"data.num_common": 3, "data.common_weight": 1.0})
    assert failed(cfg, "theorem2") == set()
    assert failed(cfg, "theorem4") == {"one common token"}
    pb = build_problem(cfg.data)
    P = pb.P.copy()
    P[0, 0] *= 2  # class-dependent common probability: not Corollary 2's symmetric case
    assert not tc.common_symmetric(P, pb.psi, pb.common_mask)


@pytest.mark.parametrize("K", [2, 3, 5])
def test_spectral_radius_of_E0_for_equal_overlaps(K):
    """Every f_n·f_n' = ρ: eigenvalues of E are (K−1)ρ and −ρ, so the radius is max(K−1, 1)·ρ."""
    cfg = get_preset("theorem4").config.with_overrides({"data.num_next_per_last": K, "data.common_weight": 0.7})
    pb = build_problem(cfg.data)
    f = pb.P / np.linalg.norm(pb.P, axis=1, keepdims=True)
    rho = f[0] @ f[1]
    assert tc.spectral_radius_E0(pb.P, pb.psi, np.zeros((1, pb.M_ctx))) == pytest.approx(max(K - 1, 1) * rho)


def test_sign_agreement():
    distinct = np.array([[0, 1, 1, 0, 0], [0, 0, 0, 1, 1]], dtype=bool)
    common = np.array([1, 0, 0, 0, 0], dtype=bool)
    inf = np.array([[-0.5, 0.2, 0.1, 0, 0], [-0.5, 0, 0, 0.3, 0.1]])
    assert tc.sign_agreement(0.5 * inf, inf, distinct, common).holds
    flipped = tc.sign_agreement(-inf, inf, distinct, common)
    assert not flipped.holds
    assert "distinct logits move -0.175 at finite T but +0.175 at T = ∞" in flipped.detail
    assert "common logits move +0.5" in flipped.detail
    assert tc.sign_agreement(np.zeros_like(inf), inf, distinct, common).holds  # no motion is no flip
    with pytest.raises(ValueError, match="one shape"):
        tc.sign_agreement(inf[:1], inf, distinct, common)


# ---------------------------------------------------------------------------- measured snap
STEPS = snapshot_steps(20000, SnapshotConfig(log_count=150, max_count=200))  # the old theorem4 schedule
T = np.maximum(STEPS, 1).astype(float)


def noisy(y, level, seed):
    """y plus Gaussian noise of σ = level × its total change (sampled runs: ~0.05 %, measured on Syn-Small)."""
    return y + level * abs(y[-1] - y[0]) * np.random.default_rng(seed).normal(size=len(y))


def expected_snap(t, slope, total):
    """The rule of measured_snap_step applied to an exact slope dy/dlog₂t on a dense grid t over the
    analysed range: the last t where it is ≥ min(10 % of the total change, ½ of its maximum)."""
    level = min(0.1 * total, 0.5 * slope.max())
    return t[np.flatnonzero(slope >= level)[-1]]


@pytest.mark.parametrize("steps", [100, 2000, 20000, 100000])
def test_ln_t_never_snaps(steps):
    """ln t changes by ln 2 every doubling: never below ½ of its fastest doubling, at any run length."""
    st = snapshot_steps(steps, SnapshotConfig(log_count=150, max_count=200))
    y = np.log(np.maximum(st, 1))
    assert tc.measured_snap_step(st, y) is None
    for level in (0.002, 0.01):
        assert all(tc.measured_snap_step(st, noisy(y, level, s)) is None for s in range(10))


DENSE = np.geomspace(np.sqrt(2), STEPS[-1] / np.sqrt(2), 100001)  # the analysed range of the run


def test_ln_ln_t_snaps_where_the_rule_says():
    """y = ln ln(3t): dy/dlog₂t = ln 2/ln(3t); the mark is within the ½-doubling window of the exact one."""
    y = np.log(np.log(3 * T))
    t_star = expected_snap(DENSE, np.log(2) / np.log(3 * DENSE), y[-1] - y[0])
    snap = tc.measured_snap_step(STEPS, y)
    assert t_star / np.sqrt(2) <= snap <= t_star * np.sqrt(2)
    assert tc.measured_snap_step(STEPS, -y) == snap  # a falling series (entropy) alike


def test_theorem4_shape_snaps_near_t0():
    """B = ¼ ln(C_0 + 4Γ) (Eqn. 129): dB/dlog₂t = ln 2·t·η_Zγ/(C_0 + 4Γ); the mark is within the
    ½-doubling window of the exact one, within a factor 2 of t_0 = 2K ln M/η_Y here, and moves
    by at most a factor 2 with 0.2 % noise."""
    M, K, ey, ez = 204, 2, 1.0, 1.0
    for C0 in (1.0, 10.0, 100.0):
        B = theory.B_exact(STEPS, M, K, ey, ez, C0, zero_offset=True)
        slope = np.log(2) * DENSE * ez * theory.gamma(DENSE, M, K, ey) / (C0 + 4 * theory.Gamma(DENSE, M, K, ey, ez))
        t_star = expected_snap(DENSE, slope, B[-1] - B[1])
        snap = tc.measured_snap_step(STEPS, B)
        assert t_star / np.sqrt(2) <= snap <= t_star * np.sqrt(2)
        assert theory.t0(M, K, ey) / 2 <= snap <= 2 * theory.t0(M, K, ey)
        noisy_snaps = [tc.measured_snap_step(STEPS, noisy(B, 0.002, s)) for s in range(10)]
        assert all(snap / 2 <= s <= 2 * snap for s in noisy_snaps)


def test_hard_freeze_is_found_within_the_window():
    """y = ln min(t, 50): at t = 50 the window still sees the rise (d = ln 2/2 > 5 %); from 50·√2 it
    sees only the plateau (d = 0).  So the snap lies in [50, 50√2], also with 0.2 % noise."""
    y = np.log(np.minimum(T, 50))
    assert 50 <= tc.measured_snap_step(STEPS, y) <= 50 * np.sqrt(2)
    assert all(50 <= tc.measured_snap_step(STEPS, noisy(y, 0.002, s)) <= 50 * np.sqrt(2) for s in range(10))


def test_no_snap_without_a_measurable_change():
    rng = np.random.default_rng(0)
    assert all(tc.measured_snap_step(STEPS, rng.normal(size=len(STEPS))) is None for _ in range(10))
    assert tc.measured_snap_step(STEPS, np.ones(len(STEPS))) is None
    y = np.log(np.minimum(T, 50))
    assert tc.measured_snap_step(STEPS, 1e-4 * y + 1e-3 * rng.normal(size=len(y))) is None  # buried in noise
    assert tc.measured_snap_step(STEPS, 1e-4 * y, min_change=1e-3) is None
    assert tc.measured_snap_step(STEPS[:10], y[:10]) is None  # steps 0..9: under 3 doublings
    y_again = np.log(np.minimum(T, 50)) + np.log(np.maximum(T, 3000) / 3000)  # a plateau, then rising again
    assert tc.measured_snap_step(STEPS, y_again) is None


def test_snap_input_errors():
    with pytest.raises(ValueError, match="fraction"):
        tc.measured_snap_step(STEPS, np.log(T), fraction=1.5)
    with pytest.raises(ValueError, match="one length"):
        tc.measured_snap_step(STEPS, np.log(T)[:-1])
    with pytest.raises(ValueError, match="increasing"):
        tc.measured_snap_step(STEPS[::-1], np.log(T))
