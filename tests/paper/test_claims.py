"""The paper's checkable claims (science §6.1–6.5, §6.7) on fresh runs of the presets."""

from functools import cache

import numpy as np
import pytest
from scipy.stats import spearmanr

from scansnap.kinds.synthetic.science.train import Snapshot, Trainer
from scansnap.paper.presets import get_preset


@cache
def run(name: str, **over) -> tuple[Trainer, list[Snapshot]]:
    cfg = get_preset(name).config.with_overrides(over) if over else get_preset(name).config
    tr = Trainer(cfg)
    return tr, list(tr.run())


def at(snaps: list[Snapshot], step: int) -> Snapshot:
    return next(s for s in snaps if s.step == step)


# Syn-Small's classes at z = 0 (science §1.3): 10 common tokens of weight 1 and 10 distinct tokens of weights
# linspace(0.1, 1, 10), normalised per class.
DISTINCT_WEIGHTS = np.linspace(0.1, 1.0, 10)
COMMON_MASS_AT_ZERO = 10 / (10 + DISTINCT_WEIGHTS.sum())  # 10/15.5 = 0.645
Q_AT_ZERO = DISTINCT_WEIGHTS / DISTINCT_WEIGHTS.sum()  # c_n restricted to the distinct tokens, renormalised (§3)
ENTROPY_AT_ZERO = float(-(Q_AT_ZERO * np.log(Q_AT_ZERO)).sum())  # science §3 quotes 2.151 nats


def test_6_1_signs_after_ten_steps():
    """Theorem 2: Δz < 0 for every common token; Σ_DT Δz > 0 and Δz > 0 above the median P."""
    tr, snaps = run("syn-small")
    pb = tr.problem
    dz = at(snaps, 10).arrays["z"][0] - snaps[0].arrays["z"][0]
    assert np.abs(at(snaps, 0).arrays["z"]).max() == 0  # zero init
    for n in range(pb.K):
        row = dz[pb.psi[n]]
        d, c = pb.distinct_mask[n], pb.common_mask[n]
        assert row[c].max() < 0
        assert row[d].sum() > 0
        upper = pb.P[n] > np.median(pb.P[n][d])
        assert row[d & upper].min() > 0


def test_6_2_distinct_logits_ordered_by_probability():
    """Theorem 3 (frequency bias): Spearman(z_ml, P(l|n)) > 0.9 (the threshold of science §6.2); the argmax
    of c_n over the distinct tokens is the largest-P one: the last of class n's block 10+10n … 19+10n."""
    tr, snaps = run("syn-small")
    pb = tr.problem
    z, c = snaps[-1].arrays["z"][0], snaps[-1].arrays["c"][0]
    for n in range(pb.K):
        d = pb.distinct_mask[n]
        best = 10 + 10 * n + 9  # 19 and 29, as science §6.2 says
        assert int(np.argmax(np.where(d, pb.P[n], -1))) == best
        assert spearmanr(z[pb.psi[n]][d], pb.P[n][d]).statistic > 0.9
        assert int(np.argmax(np.where(d, c[n], -1))) == best


def test_6_3_relative_gain_identity_in_mean_field():
    """r_{l/l'|n}(t) = r(0)·e^{2Δz_l}, exact in the T→∞ ODE (Lemma-3 decoder); Euler error O(η)."""
    _, snaps = run(
        "theorem4",
        **{
            "data.num_distinct_per_next": "10",
            "data.num_common": "10",
            "optim.eta_y": "0.01",
            "optim.eta_z": "0.01",
            "optim.steps": "3000",
        },
    )
    for s in snaps[1:]:  # science §6.3: relative error < 1e-3 in the T→∞ ODE with a small step
        rel = np.abs(s.scalars["rel_gain"] / s.scalars["rel_gain_pred"] - 1)
        assert rel.max() < 1e-3, (s.step, rel.max())
    last = snaps[-1].scalars  # the identity was exercised: r grew by e^{2Δz} ≥ e^{1}
    assert last["dz_dominant"].min() > 0.5 and (last["rel_gain"] > 2 * snaps[0].scalars["rel_gain"]).all()


def test_6_3_identity_needs_the_span_F_decoder():
    """With the plain decoder the identity is only approximate: the check above is not vacuous."""
    _, snaps = run(
        "theorem4",
        **{
            "data.num_distinct_per_next": "10",
            "data.num_common": "10",
            "optim.eta_y": "0.01",
            "optim.eta_z": "0.01",
            "optim.steps": "3000",
            "model.meanfield_decoder": "plain",
        },
    )
    s = snaps[-1]  # ten times the tolerance the Lemma-3 decoder meets above
    assert np.abs(s.scalars["rel_gain"] / s.scalars["rel_gain_pred"] - 1).max() > 1e-2


# mean field: exact up to float rounding; finite-T SGD: the bracket holds only approximately (science §6.3
# allows 10–20 % in finite T for the identity it rests on); 5 % of the bracket's scale is asked here
@pytest.mark.parametrize("name,tol", [("theorem4", 1e-9), ("syn-small", 0.05)])
def test_6_4_theorem3_bracket(name, tol):
    """f_{nl0}(0)²·B̂_n ≤ Δz_{ml0}(t) ≤ B̂_n at every snapshot (exact in mean field; finite-T slack)."""
    over = {"optim.steps": "2000"} if name == "theorem4" else {}
    _, snaps = run(name, **over)
    for s in snaps:
        lo, dz, hi = s.scalars["bracket_lo"], s.scalars["dz_dominant"], s.scalars["B_hat"]
        assert (lo <= dz + tol * np.maximum(1, np.abs(hi))).all(), s.step
        assert (dz <= hi * (1 + tol) + tol).all(), s.step
    assert snaps[-1].scalars["B_hat"].min() > 0


def test_6_5_common_mass_falls_and_entropy_snaps():
    """science §6.5: the common mass falls from its zero-init value and levels off well above 0; the
    distinct-token entropy falls from its zero-init value, then stays nearly flat (the snap)."""
    _, snaps = run("syn-small")
    cm = np.array([s.scalars["common_mass"].mean() for s in snaps])
    H = np.array([s.scalars["entropy_distinct"].mean() for s in snaps])
    assert cm[0] == pytest.approx(COMMON_MASS_AT_ZERO, abs=1e-6)
    assert H[0] == pytest.approx(ENTROPY_AT_ZERO, abs=1e-6)
    assert round(ENTROPY_AT_ZERO, 3) == 2.151  # the value science §3 quotes
    assert (np.diff(cm) < 0.01).all()  # monotone up to SGD noise: no step may raise it by 0.01 or more
    assert 0.2 < cm[-1] < cm[0] - 0.1  # suppressed by ≥ 0.1, yet ≥ 0.2 is left: no winner-takes-all
    assert H[-1] < H[0] - 0.1
    late = [s.scalars["entropy_distinct"].mean() for s in snaps if s.step >= 50]
    assert max(late) - min(late) < 0.1 * (H[0] - H[-1])  # frozen: the snap (science §6.9's 10 % criterion)


def test_6_7_faster_decoder_gives_denser_attention_and_faster_convergence():
    """science §6.7 (Fig. 4): with η_Z = 1, η_Y = 10 ends with a higher distinct-token entropy than η_Y = 1
    (by a margin of 0.05 nats, against seed noise) and reaches a loss of 0.01 sooner (the paper's log shows
    0.013 at step 10 for η_Y = 1, science §1.3)."""
    _, slow = run("syn-small")
    _, fast = run("syn-small-fast-decoder")
    assert fast[-1].scalars["entropy_distinct"].mean() > slow[-1].scalars["entropy_distinct"].mean() + 0.05

    def first_below(snaps: list[Snapshot], level: float) -> int:
        return next(s.step for s in snaps if s.scalars["loss"].mean() < level)

    assert first_below(fast, 0.01) < first_below(slow, 0.01)
