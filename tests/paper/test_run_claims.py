"""The four claims of one run (scansnap.kinds.synthetic.paper.claims) on hand-made histories: each passes on data that
satisfies it, fails on data that violates it, and is n/a (with its reason) when it cannot be judged
or its theorem's conditions fail.  Real runs: tests/paper/test_badges.py."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper import claims
from scansnap.kinds.synthetic.paper.claims import Observed
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE
from scansnap.paper.verdicts import Verdict

# Two classes, each with its own query: token 0 common, tokens 1-3 distinct of class 0 (P rising),
# token 4 distinct of class 1.
P = np.array([[0.2, 0.1, 0.3, 0.4, 0.0], [0.2, 0.0, 0.0, 0.0, 0.8]])
KIND = np.array(
    [
        [KIND_COMMON, KIND_DISTINCT, KIND_DISTINCT, KIND_DISTINCT, KIND_NONE],
        [KIND_COMMON, KIND_NONE, KIND_NONE, KIND_NONE, KIND_DISTINCT],
    ]
)
STEPS = np.unique(np.r_[0, np.round(np.geomspace(1, 1000, 60))]).astype(np.int64)  # log-spaced, as stored


def observe(dz: np.ndarray, entropy: np.ndarray, steps: np.ndarray = STEPS, **theory) -> Observed:
    """z(0) = 0 and z(t) = dz for every stored t ≥ 1 (rows: query q = class n); ``theory``: the
    Theorem 4 fields (dz_common, dz_theory, t0)."""
    z = np.stack([np.zeros_like(dz)] + [dz] * (len(steps) - 1))
    return Observed(steps, z, entropy, P, KIND, np.array([0, 1]), {}, **theory)


GOOD_DZ = np.array([[-0.5, 0.1, 0.3, 0.4, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.8]])
SNAPPED = 2.15 - 0.15 * (1 - np.exp(-STEPS / 5.0))  # falls, then freezes: a snap near step 20
DRIFTING = 2.15 - 0.45 * np.log1p(STEPS) / np.log(1001)  # ln t: the same drop every decade, no snap
DROP = 0.6 * (1 - np.exp(-STEPS / 8.0))  # −Δz_common: the snap's largest move, frozen after ~30
T0 = 63.0  # a predicted t_0 inside the run (the theorem4 preset's)


def on_curve(ratio: float) -> dict:
    """Theorem 4 fields where the calibrated curve is ``ratio`` × the measured drop: the verdict's
    statistic max |measured/curve − 1| is then |1/ratio − 1| at every step."""
    return {"dz_common": DROP, "dz_theory": ratio * DROP, "t0": T0}


def test_good_run_passes_every_claim():
    got = {v.id: v for v in claims.run_claims(observe(GOOD_DZ, SNAPPED, **on_curve(1.05)))}
    assert [v.status for v in got.values()] == ["pass"] * 4, got
    # Thm 2a looks above each class's median P: token 3 only (class 0's median is token 2's 0.3;
    # class 1's single distinct token is its own median)
    assert got["thm2b"].value == pytest.approx(-0.5) and got["thm2a"].value == pytest.approx(0.4)
    assert got["thm3"].value == pytest.approx(1.0)  # Δz on tokens 1-3 has the order of P: ρ = 1
    assert got["thm4"].value == pytest.approx(1 - 1 / 1.05)


def test_common_token_rising_fails_thm2b():
    dz = GOOD_DZ.copy()
    dz[1, 0] = 0.01
    v = claims.thm2b_common_fall(observe(dz, SNAPPED))
    assert v.status == "fail" and v.value == pytest.approx(0.01)


def test_top_distinct_token_flat_fails_thm2a_and_disorder_fails_thm3():
    dz = GOOD_DZ.copy()
    dz[0, 3] = 0.0  # the top-P distinct token of class 0 did not move: Δz order (0.1, 0.3, 0) vs P
    assert claims.thm2a_distinct_rise(observe(dz, SNAPPED)).status == "fail"
    v = claims.thm3_ordered(observe(dz, SNAPPED))
    # ranks of Δz (2, 3, 1) against ranks of P (1, 2, 3): ρ = 1 − 6·(1+1+4)/(3·8) = −0.5
    assert v.status == "fail" and v.value == pytest.approx(-0.5)


def test_a_drop_that_misses_the_calibrated_curve_fails_thm4():
    """The curve 1.25× the measurement: |1/1.25 − 1| = 0.2 ≥ CURVE_TOL.  A snap measured in the run does
    not make the verdict: it stands beside it."""
    v = claims.thm4_snap(observe(GOOD_DZ, SNAPPED, **on_curve(1.25)))
    assert v.status == "fail" and v.value == pytest.approx(0.2)
    assert v.detail.startswith(
        f"snap measured at step {claims.measured_snap(observe(GOOD_DZ, SNAPPED, dz_common=DROP))}"
    )
    assert f"predicted t₀ = {T0:.3g}" in v.detail


def test_claims_that_cannot_be_judged_are_na_with_a_reason():
    early = observe(GOOD_DZ, SNAPPED, **{**on_curve(1.0), "t0": 2000.0})  # the run ends at 1000 < t_0
    v = claims.thm4_snap(early)
    assert v.status == "n/a" and "not reached the predicted t₀ = 2e+03" in v.reason
    assert claims.thm4_snap(observe(GOOD_DZ, SNAPPED)).reason == "no calibrated Theorem 4 curve for this run"
    uniform = Observed(STEPS, None, SNAPPED, P, KIND, np.array([0, 1]), {})  # a top-k run: no z rows
    assert claims.thm3_ordered(uniform).status == "n/a"
    no_common = claims.thm2b_common_fall(
        Observed(STEPS, observe(GOOD_DZ, SNAPPED).z, SNAPPED, P, np.where(KIND == 2, 1, KIND), np.array([0, 1]), {})
    )
    assert no_common.status == "n/a" and "no common token" in no_common.reason


def test_top_k_runs_fall_back_to_the_stored_shares():
    top_k = Observed(STEPS, None, SNAPPED, P, KIND, np.array([0, 1]), {"share_common_down": 1.0})
    assert claims.thm2b_common_fall(top_k).status == "pass"
    assert (
        claims.thm2b_common_fall(top_k.__class__(**{**top_k.__dict__, "shares": {"share_common_down": 0.5}})).status
        == "fail"
    )


# ------------------------------------------------------------------------------ conditions, the lead signal, Adam
def test_outside_the_theorems_conditions_every_verdict_is_na_never_green_or_red():
    """The issue: a theorem whose conditions fail gives n/a with them, whether the measurement would
    pass (Thm 2a, Thm 4's snap) or miss (Thm 2b): the measured number stands beside it."""
    failed = {"theorem2": ("T = 128: finite contexts",), "theorem3": (), "theorem4": ("momentum 0.9",)}
    bad = GOOD_DZ.copy()
    bad[1, 0] = 0.01
    obs = replace(observe(bad, DRIFTING, dz_common=DROP), failed=failed)
    got = {v.id: v for v in claims.run_claims(obs)}
    assert got["thm2b"].status == "n/a" and got["thm2b"].conditions == failed["theorem2"]
    assert got["thm2b"].reason == "outside the theorem (failed: T = 128)"  # no sentence given: the short form
    assert got["thm2b"].detail.startswith("measured ") and "= 0.01" in got["thm2b"].detail
    assert got["thm2a"].status == "n/a" and got["thm2a"].value == pytest.approx(0.4)  # measured, kept
    assert got["thm3"].status == "pass"  # Theorem 3's conditions hold here
    snap = claims.measured_snap(obs)
    assert got["thm4"].status == "n/a" and got["thm4"].conditions == ("momentum 0.9",)
    assert f"snap measured at step {snap}" in got["thm4"].detail
    plain = {"theorem2": ("the theorem assumes infinitely long sequences; this run uses 128 tokens",)}
    said = {v.id: v for v in claims.run_claims(replace(obs, failed_plain=plain))}["thm2b"]
    assert said.reason == plain["theorem2"][0] and claims.in_words(said) == f"Not judged: {plain['theorem2'][0]}."
    clean = replace(obs, failed={})
    assert {v.id: v.status for v in claims.run_claims(clean)}["thm2b"] == "fail"  # where the theorem applies


def test_the_snap_is_measured_on_the_common_tokens_drop_when_there_is_one():
    with_drop = observe(GOOD_DZ, DRIFTING, dz_common=DROP)
    assert claims.measured_snap(with_drop) is not None  # −Δz_common freezes after ~30
    assert claims.measured_snap(observe(GOOD_DZ, DRIFTING)) is None  # the entropy alone (ln t) does not


def test_adam_has_no_theorem4():
    obs = observe(GOOD_DZ, SNAPPED, method="adam", **on_curve(1.0))
    v = claims.thm4_snap(obs)
    assert v.status == "n/a" and "adam" in v.reason


def test_verdict_text_is_what_the_badge_and_the_cli_say():
    """One line per verdict (scansnap.kinds.synthetic.paper.claims.verdict_text), read back from verdicts.json."""
    failed = {"theorem2": ("T = 128: finite contexts (Assumption 1b)", "plain decoder: Y is not kept in span(F)")}
    obs = replace(observe(GOOD_DZ, SNAPPED, **on_curve(1.05)), failed=failed)
    got = {v.id: v for v in claims.run_claims(obs)}
    text = claims.verdict_text(got["thm2b"])
    want = "N/A: outside the theorem (failed: T = 128, plain decoder) · measured max over common tokens of Δz = -0.5"
    assert text == want + " · Δz over steps 0–10"
    assert claims.verdict_text(got["thm4"]).startswith("PASS: max over steps ≥ 10 of |−Δz_common / Theorem 4 − 1| = ")
    for v in got.values():
        assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v or math.isnan(v.value)


@pytest.mark.parametrize("seed", range(5))
def test_spearman_is_scipys_with_ties_and_nan_where_there_is_no_order(seed):
    """Theorem 3's ρ (claims.spearman, computed without scipy.stats) equals scipy.stats.spearmanr on random
    data with ties (values drawn from 6 levels), to float64 rounding; NaN for fewer than 3 points or a
    constant, as before."""
    from scipy.stats import spearmanr

    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 6, 40).astype(float), rng.normal(size=40) + rng.integers(0, 6, 40)
    assert claims.spearman(x, y) == pytest.approx(spearmanr(x, y).statistic, abs=1e-12)
    assert claims.spearman(x, x) == pytest.approx(1.0) and claims.spearman(x, -x) == pytest.approx(-1.0)
    assert math.isnan(claims.spearman(x[:2], y[:2])) and math.isnan(claims.spearman(np.ones(5), y[:5]))
