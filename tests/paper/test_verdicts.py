"""Every verdict function on synthetic data that satisfies its claim (passes) and data that
violates it (fails): a verdict that cannot fail is a defect."""

import json
import math

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper import fig6_patterns as f6
from scansnap.paper import verdicts as vd

P = np.array([[0.2, 0.1, 0.3, 0.4, 0.0], [0.2, 0.0, 0.0, 0.0, 0.8]])
DISTINCT = np.array([[False, True, True, True, False], [False, False, False, False, True]])
COMMON = np.array([[True, False, False, False, False], [True, False, False, False, False]])


def both(make_ok, make_bad):
    ok, bad = make_ok(), make_bad()
    assert ok.passed, ok
    assert not bad.passed, bad
    for v in (ok, bad):
        assert v.statistic and v.threshold and v.claim
        json.dumps(v.to_dict())
    return ok, bad


def test_verdict_is_frozen_and_json_safe():
    v = vd.judge("x", "claim", "stat", float("nan"), "<", 1.0)
    assert not v.passed and v.to_dict()["value"] is None
    with pytest.raises(AttributeError):
        v.passed = True  # type: ignore[misc]
    assert v.status == "fail" and v.to_dict()["passed"] is False
    want = {"id", "label", "item", "claim", "statistic", "value", "threshold", "status", "passed", "detail"}
    assert set(v.to_dict()) == want | {"reason", "conditions"}


def test_not_applicable_is_neither_pass_nor_fail_and_says_why():
    v = vd.not_applicable("run", "claim", "stat", "> 0", "needs 4 steps", ["T = 128 is finite"])
    assert v.status == "n/a" and not v.passed and v.to_dict()["value"] is None
    assert v.to_dict()["reason"] == "needs 4 steps" and v.to_dict()["conditions"] == ["T = 128 is finite"]


@pytest.mark.parametrize(
    "op,value,expect",
    [
        ("<", 0.5, True),
        ("<", 1.0, False),
        ("<=", 1.0, True),
        (">", 1.0, False),
        (">=", 1.0, True),
        (">", math.inf, False),
    ],
)
def test_judge_operators(op, value, expect):
    assert vd.judge("x", "c", "s", value, op, 1.0).passed is expect


def test_share_falls():
    # starts at Syn-Small's zero-init common mass 10/15.5 = 0.645 (science §1.3)
    both(
        lambda: vd.share_falls("fig4", "c", [[0.645, 0.645], [0.4, 0.5]]),
        lambda: vd.share_falls("fig4", "c", [[0.645, 0.645], [0.4, 0.62]]),
    )


def test_argmax_is_top_prob():
    good = np.array([[0.1, 0.1, 0.2, 0.6, 0.0], [0.3, 0.0, 0.0, 0.0, 0.7]])
    bad = np.array([[0.1, 0.5, 0.2, 0.2, 0.0], [0.3, 0.0, 0.0, 0.0, 0.7]])
    both(
        lambda: vd.argmax_is_top_prob("fig4", good, P, DISTINCT),
        lambda: vd.argmax_is_top_prob("fig4", bad, P, DISTINCT),
    )


def test_higher():
    both(
        lambda: vd.higher("fig4", "c", "s", [2.1, 2.0], [1.9, 1.9], margin=0.05),
        lambda: vd.higher("fig4", "c", "s", [2.1, 1.92], [1.9, 1.9], margin=0.05),
    )


def test_converges_faster():
    steps = [0, 2, 4, 6, 8]
    fast, slow = [3, 0.5, 0.001, 0, 0], [3, 2, 0.5, 0.005, 0]
    both(lambda: vd.converges_faster("fig4", steps, fast, slow), lambda: vd.converges_faster("fig4", steps, slow, fast))
    assert not vd.converges_faster("fig4", steps, [3] * 5, [3] * 5).passed  # neither converges


def test_top_sets_differ():
    a = np.array([[0.1, 0.2, 0.3, 0.4, 0.5], [0.5, 0.4, 0.3, 0.2, 0.1]])
    same = np.array([[0.1, 0.2, 0.3, 0.4, 0.5], [0.1, 0.2, 0.35, 0.45, 0.5]])
    both(lambda: vd.top_sets_differ("fig5", a, ["a", "b"]), lambda: vd.top_sets_differ("fig5", same, ["a", "b"]))


def test_argmax_not_always_top():
    P = np.array([0.1, 0.2, 0.3, 0.4])
    picks_other = np.array([[0.1, 0.5, 0.2, 0.2], [0.1, 0.1, 0.1, 0.7]])
    always_top = np.array([[0.1, 0.2, 0.3, 0.4], [0.0, 0.1, 0.1, 0.8]])
    both(
        lambda: vd.argmax_not_always_top("fig5", picks_other, P, ["a", "b"]),
        lambda: vd.argmax_not_always_top("fig5", always_top, P, ["a", "b"]),
    )


def _fig6_grid():
    """(K-panels=2, η_Z=4, ratio=4) means that follow patterns (i)–(iii); K = (2, 6)."""
    eta_drop = np.array([0.0, 0.1, 0.2, 0.3])[None, :, None]
    k2 = np.array([1.9, 2.0, 2.05, 2.1])  # rises from ratio 1
    k6 = np.array([2.0, 1.95, 2.0, 2.05])  # dips at ratio 2
    return np.stack([k2, k6])[:, None, :] - eta_drop, np.full((2, 4, 4), 0.01)


def test_fig6_eta_z_order():
    m, s = _fig6_grid()
    bad = m.copy()
    bad[0, 3, 1] = bad[0, 2, 1] + 0.01  # η_Z = 3 above η_Z = 2 in one cell
    both(lambda: f6.fig6_eta_z_order("fig6", m, s), lambda: f6.fig6_eta_z_order("fig6", bad, s))
    # SE of a difference of two means with SE 0.01 each: √(0.01² + 0.01²) = 0.014; the reversal of 0.01 is
    # within 2·SE = 0.028, and outside it once the SEs are ten times smaller (2·0.0014 = 0.0028)
    assert f6.fig6_eta_z_order("fig6", bad, s, allowance=2.0).passed
    assert not f6.fig6_eta_z_order("fig6", bad, s * 0.1, allowance=2.0).passed


def test_fig6_ratio_rises():
    m, s = _fig6_grid()
    bad = m.copy()
    bad[1, 0, 3] = bad[1, 0, 1] - 0.01
    both(lambda: f6.fig6_ratio_rises("fig6", m, s, lo=1, hi=3), lambda: f6.fig6_ratio_rises("fig6", bad, s, lo=1, hi=3))


def test_fig6_threshold():
    m, s = _fig6_grid()
    bad = m.copy()
    bad[1, :, 1] = bad[1, :, 0] + 0.05  # K = 6 rising from ratio 1 to 2
    both(lambda: f6.fig6_threshold("fig6", m, s, [2, 6]), lambda: f6.fig6_threshold("fig6", bad, s, [2, 6]))


def test_same_across_and_close_to():
    both(
        lambda: vd.same_across("fig9", "c", "B", [0.5, 0.5, 0.5]),
        lambda: vd.same_across("fig9", "c", "B", [0.5, 0.5, 0.51]),
    )
    both(
        lambda: vd.close_to("fig9", "c", "B", 0.509, 0.51, 0.01), lambda: vd.close_to("fig9", "c", "B", 0.6, 0.51, 0.01)
    )


def test_increasing():
    both(
        lambda: vd.increasing("t", "c", "B", [2, 1, 3], [0.2, 0.1, 0.3]),
        lambda: vd.increasing("t", "c", "B", [1, 2, 3], [0.1, 0.1, 0.3]),
    )


def test_relative_gain_identity():
    r0, dz = 0.5, np.linspace(0, 1, 20)
    r = r0 * np.exp(2 * dz)
    both(
        lambda: vd.relative_gain_identity("theorems", r, r * (1 + 1e-5), dz[-1:]),
        lambda: vd.relative_gain_identity("theorems", r, r * 1.01, dz[-1:]),
    )
    assert not vd.relative_gain_identity("theorems", r, r, [0.1]).passed  # not exercised


def test_bracket_holds():
    hi = np.linspace(0, 2, 10)
    lo = 0.1 * hi
    both(
        lambda: vd.bracket_holds("theorems", lo, 0.5 * hi, hi, 1e-9),
        lambda: vd.bracket_holds("theorems", lo, 1.2 * hi, hi, 1e-9),
    )


def test_snap_ratio():
    steps = np.array([0, 1, 3, 10, 30, 100, 1000, 10000])
    snapped = np.array([2.15, 2.15, 2.10, 2.0, 1.95, 1.94, 1.939, 1.938])
    drifting = np.array([2.15, 2.15, 2.10, 2.0, 1.95, 1.9, 1.8, 1.7])
    both(
        lambda: vd.snap_ratio("theorems", "c", steps, snapped), lambda: vd.snap_ratio("theorems", "c", steps, drifting)
    )
    flat = np.full(len(steps), 2.15)  # nothing happened: no snap to speak of
    assert not vd.snap_ratio("theorems", "c", steps, flat).passed
    both_runs = np.stack([snapped, drifting], axis=1)  # the worst run decides
    assert not vd.snap_ratio("theorems", "c", steps, both_runs).passed
    log_t = np.r_[0.0, 0.0, np.log10(steps[2:])]  # pure O(ln t) growth: each decade alike
    decades = np.log10(steps[-1] / steps[1])  # 10⁰ … 10⁴: the last of 4 carries 1/4 of the change
    assert vd.last_decade_share(steps, log_t)[0] == pytest.approx(1 / decades)


def test_entropy_shapes():
    bounce = np.array([2.3, 1.5, 1.1, 1.3, 1.5])
    falls = np.array([2.3, 1.5, 1.0, 0.5, 0.2])
    flat = np.array([2.3, 2.28, 2.27, 2.27, 2.27])
    both(lambda: vd.entropy_drops("joma", "c", falls), lambda: vd.entropy_drops("joma", "c", flat))
    both(lambda: vd.entropy_rebounds("joma", "c", bounce), lambda: vd.entropy_rebounds("joma", "c", falls))
    both(lambda: vd.entropy_never_rises("joma", "c", falls), lambda: vd.entropy_never_rises("joma", "c", bounce))
