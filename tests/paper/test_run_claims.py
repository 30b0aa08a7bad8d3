"""The four claims of one run (engine.paper.claims) on hand-made histories: each passes on data that
satisfies it, fails on data that violates it, and is n/a (with its reason) when it cannot be judged;
and on one real run, the Lab's path (run store → history) and reproduce's path (snapshots) agree."""

from __future__ import annotations

import math

import numpy as np
import pytest

from engine.core.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE
from engine.paper import claims
from engine.paper.claims import Observed, snap_step

# Two classes, each with its own query: token 0 common, tokens 1-3 distinct of class 0 (P rising),
# token 4 distinct of class 1.
P = np.array([[0.2, 0.1, 0.3, 0.4, 0.0], [0.2, 0.0, 0.0, 0.0, 0.8]])
KIND = np.array(
    [
        [KIND_COMMON, KIND_DISTINCT, KIND_DISTINCT, KIND_DISTINCT, KIND_NONE],
        [KIND_COMMON, KIND_NONE, KIND_NONE, KIND_NONE, KIND_DISTINCT],
    ]
)
STEPS = np.array([0, 1, 10, 100, 1000])


def observe(dz: np.ndarray, entropy: np.ndarray, steps: np.ndarray = STEPS) -> Observed:
    """z(0) = 0 and z(t) = dz for every stored t ≥ 1 (rows: query q = class n)."""
    z = np.stack([np.zeros_like(dz)] + [dz] * (len(steps) - 1))
    return Observed(steps, z, entropy, P, KIND, np.array([0, 1]), {})


GOOD_DZ = np.array([[-0.5, 0.1, 0.3, 0.4, 0.0], [-0.5, 0.0, 0.0, 0.0, 0.8]])
SNAPPED = np.array([2.15, 2.15, 2.05, 2.0, 1.999])


def test_good_run_passes_every_claim():
    got = {v.id: v for v in claims.run_claims(observe(GOOD_DZ, SNAPPED))}
    assert [v.status for v in got.values()] == ["pass"] * 4, got
    # Thm 2a looks above each class's median P: token 3 only (class 0's median is token 2's 0.3;
    # class 1's single distinct token is its own median)
    assert got["thm2b"].value == pytest.approx(-0.5) and got["thm2a"].value == pytest.approx(0.4)
    assert got["thm3"].value == pytest.approx(1.0)  # Δz on tokens 1-3 has the order of P: ρ = 1
    assert got["thm4"].value == 100  # the first stored step from which each doubling moves H < 5 %


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
    drifting = np.array([2.15, 2.15, 2.05, 1.9, 1.7])
    v = claims.thm4_snap(observe(GOOD_DZ, drifting))
    assert v.status == "fail" and math.isinf(v.value)


def test_claims_that_cannot_be_judged_are_na_with_a_reason():
    short = observe(GOOD_DZ, SNAPPED[:2], STEPS[:2])
    v = claims.thm4_snap(short)
    assert v.status == "n/a" and "4 steps" in v.reason
    flat = claims.thm4_snap(observe(GOOD_DZ, np.full(5, 2.15)))
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


# ------------------------------------------------------------------------------ the snap detector
def test_snap_step_on_closed_forms():
    """B = ln t (scanning forever) moves ln 2 per doubling = 1/d of the total over d doublings: with
    d = 13 < 1/0.05 = 20 doublings no snap is measured.  B = ln ln t (snapping) moves
    ln(ln 2t / ln t) per doubling, which drops below 5 % of the total from some t on."""
    t = np.unique(np.round(np.geomspace(1, 8192, 80))).astype(float)
    steps = np.r_[0.0, t]
    scan = np.r_[0.0, np.log(t)]
    assert snap_step(steps, scan) is None
    snap = np.r_[0.0, np.log(np.log(np.e * t))]  # ln ln(e t): finite at t = 1
    got = snap_step(steps, snap)
    assert got is not None and got <= steps[-1] / 2
    total = snap[-1] - snap[0]
    # at the returned step and after it, every doubling moves less than 5 % of the total
    for s in steps[(steps >= got) & (2 * steps <= steps[-1])]:
        step_change = np.log(np.log(np.e * 2 * s)) - np.log(np.log(np.e * s))
        assert step_change < 0.05 * total + 1e-3  # (interpolation between stored steps adds < 1e-3)


def test_snap_step_ignores_noise_below_the_fraction():
    rng = np.random.default_rng(0)
    steps = np.arange(0, 201)
    H = np.r_[2.15, 2.15 - 0.8 * (1 - np.exp(-steps[1:] / 5.0))] + rng.normal(0, 0.002, 201)
    got = snap_step(steps, H)
    assert got is not None and 10 <= got <= 100


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
    lab = claims.run_claims(observed(hist, store.statics(job.run_id), 0))
    tr, snaps = train(cfg)
    rep = claims.run_claims(observed_from_snapshots(snaps, tr.problem, 0))
    assert [(v.id, v.status) for v in lab] == [(v.id, v.status) for v in rep]
    for a, b in zip(lab, rep, strict=True):
        assert a.value == pytest.approx(b.value, rel=1e-5, abs=1e-6) or (math.isinf(a.value) and math.isinf(b.value))
    assert all(v.status == "pass" for v in lab), lab
    store.close()
