"""The four claims of one run (engine.paper.claims) on hand-made histories: each passes on data that
satisfies it, fails on data that violates it, and is n/a (with its reason) when it cannot be judged;
and on one real run, the Lab's path (run store → history) and reproduce's path (snapshots) agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE
from engine.paper import claims
from engine.paper.claims import Observed

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


def observe(dz: np.ndarray, entropy: np.ndarray, steps: np.ndarray = STEPS) -> Observed:
    """z(0) = 0 and z(t) = dz for every stored t ≥ 1 (rows: query q = class n)."""
    z = np.stack([np.zeros_like(dz)] + [dz] * (len(steps) - 1))
    return Observed(steps, z, entropy, P, KIND, np.array([0, 1]), {})


GOOD_DZ = np.array([[-0.5, 0.1, 0.3, 0.4, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.8]])
SNAPPED = 2.15 - 0.15 * (1 - np.exp(-STEPS / 5.0))  # falls, then freezes: a snap near step 20
DRIFTING = 2.15 - 0.45 * np.log1p(STEPS) / np.log(1001)  # ln t: the same drop every decade, no snap


def test_good_run_passes_every_claim():
    got = {v.id: v for v in claims.run_claims(observe(GOOD_DZ, SNAPPED))}
    assert [v.status for v in got.values()] == ["pass"] * 4, got
    # Thm 2a looks above each class's median P: token 3 only (class 0's median is token 2's 0.3;
    # class 1's single distinct token is its own median)
    assert got["thm2b"].value == pytest.approx(-0.5) and got["thm2a"].value == pytest.approx(0.4)
    assert got["thm3"].value == pytest.approx(1.0)  # Δz on tokens 1-3 has the order of P: ρ = 1
    assert 5 <= got["thm4"].value <= 60  # e^{-t/5}: each doubling after ~20 moves H by < 10 % of its drop


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


def test_drifting_entropy_is_no_snap():
    v = claims.thm4_snap(observe(GOOD_DZ, DRIFTING))
    assert v.status == "fail" and math.isinf(v.value)


def test_claims_that_cannot_be_judged_are_na_with_a_reason():
    short = observe(GOOD_DZ, SNAPPED[:2], STEPS[:2])
    v = claims.thm4_snap(short)
    assert v.status == "n/a" and "8 steps" in v.reason
    flat = claims.thm4_snap(observe(GOOD_DZ, np.full(len(STEPS), 2.15)))
    assert flat.status == "n/a" and "moved by" in flat.reason
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
def test_a_miss_outside_the_theorems_conditions_is_na_never_fail():
    """Issue 13 item 4: a theorem whose conditions fail gives n/a with them, never a red badge; a
    pass outside them stays a pass that lists them."""
    failed = {"theorem2": ("T = 128: finite contexts",), "theorem3": (), "theorem4": ("momentum 0.9",)}
    bad = GOOD_DZ.copy()
    bad[1, 0] = 0.01
    obs = Observed(STEPS, observe(bad, DRIFTING).z, DRIFTING, P, KIND, np.array([0, 1]), {}, failed=failed)
    got = {v.id: v for v in claims.run_claims(obs)}
    assert got["thm2b"].status == "n/a" and got["thm2b"].conditions == failed["theorem2"]
    assert "conditions do not hold" in got["thm2b"].reason and "0.01" in got["thm2b"].reason
    assert got["thm2a"].status == "pass" and got["thm2a"].conditions == failed["theorem2"]
    assert got["thm4"].status == "n/a" and got["thm4"].conditions == ("momentum 0.9",)
    clean = Observed(STEPS, observe(bad, DRIFTING).z, DRIFTING, P, KIND, np.array([0, 1]), {})
    assert {v.id: v.status for v in claims.run_claims(clean)}["thm2b"] == "fail"  # where the theorem applies


def test_the_snap_is_measured_on_the_common_tokens_drop_when_there_is_one():
    drop = 0.6 * (1 - np.exp(-STEPS / 8.0))  # −Δz_common: the snap's largest move
    obs = Observed(STEPS, observe(GOOD_DZ, DRIFTING).z, DRIFTING, P, KIND, np.array([0, 1]), {}, dz_common=drop)
    v = claims.thm4_snap(obs)
    assert v.status == "pass" and "−Δz_common" in v.statistic  # the entropy alone (ln t) would not snap


def test_adam_has_no_theorem4():
    obs = Observed(STEPS, observe(GOOD_DZ, SNAPPED).z, SNAPPED, P, KIND, np.array([0, 1]), {}, method="adam")
    v = claims.thm4_snap(obs)
    assert v.status == "n/a" and "adam" in v.reason


# ------------------------------------------------------------------------------ Lab and reproduce agree
@pytest.mark.slow
def test_lab_and_reproduce_judge_a_run_the_same(tmp_path):
    """Syn-Small trained once through the runner (the Lab reads it back from the store) and once by
    reproduce's trainer path: the four verdicts are identical, value for value."""
    from engine.paper.history import RunHistory, observed
    from engine.paper.items.common import observed_from_snapshots, train
    from engine.paper.presets import get_preset
    from engine.service.runner import RunJob
    from engine.service.store import RunStore

    cfg = get_preset("syn-small").config
    store = RunStore(tmp_path)
    job = RunJob(cfg, store)
    assert job.run() == "finished"
    hist = RunHistory(job.run_id)
    hist.update(store)
    lab = claims.run_claims(observed(hist, store.statics(job.run_id), 0, cfg))
    tr, snaps = train(cfg)
    rep = claims.run_claims(observed_from_snapshots(snaps, tr, 0))
    assert [(v.id, v.status) for v in lab] == [(v.id, v.status) for v in rep]
    for a, b in zip(lab, rep, strict=True):
        assert a.value == pytest.approx(b.value, rel=1e-5, abs=1e-6) or (math.isinf(a.value) and math.isinf(b.value))
    assert all(v.status == "pass" for v in lab), lab
    store.close()
