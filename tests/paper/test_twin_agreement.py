"""Finite T against its T = ∞ twin (science §4.1, "Where it cannot work"): at T = 128 with 100+
distinct tokens per class the sampled dynamics move the logits against the mean-field ones (distinct
fall, the common one rises); with 10 distinct tokens they agree.  The Lab says so under its charts."""

from __future__ import annotations

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper.theory_view import twin_agreement
from scansnap.kinds.synthetic.science.meanfield import meanfield_twin
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.kinds.synthetic.ui.charts import twin_flip
from scansnap.paper.history import RunHistory
from scansnap.paper.presets import get_preset


def finite_T_run(distinct: int, steps: int = 300) -> tuple[RunHistory, dict[str, np.ndarray]]:
    """Theorem 4's data (one query, K = 2, one common token of weight 1) sampled at T = 128."""
    over = {"optim.steps": steps, "data.T": 128, "model.kind": "yz", "data.num_distinct_per_next": distinct}
    cfg = get_preset("theorem4").config.with_overrides(over)
    trainer = Trainer(cfg)
    snaps = list(trainer.run())
    statics = {**trainer.statics(), **meanfield_twin(cfg)}
    hist = RunHistory("r", steps=[s.step for s in snaps], z=[s.arrays["z"] for s in snaps])
    return hist, statics


@pytest.fixture(scope="module")
def many_distinct():
    return finite_T_run(100)


def test_finite_T_with_many_distinct_tokens_moves_against_its_twin(many_distinct):
    hist, statics = many_distinct
    step, cond = twin_agreement(np.asarray(hist.steps), [z[0] for z in hist.z], statics, 0)
    assert step == 300 and not cond.holds
    assert "distinct logits move -" in cond.detail and "common logits move +" in cond.detail
    assert "Unlike its T = ∞ twin (step 300)" in twin_flip(hist, statics, 0)


def test_finite_T_with_few_distinct_tokens_agrees_with_its_twin():
    hist, statics = finite_T_run(10)
    step, cond = twin_agreement(np.asarray(hist.steps), [z[0] for z in hist.z], statics, 0)
    assert step == 300 and cond.holds and twin_flip(hist, statics, 0) == ""


def test_no_twin_no_sentence(many_distinct):
    hist, statics = many_distinct
    bare = {k: v for k, v in statics.items() if not k.startswith("mf_")}
    assert twin_agreement(np.asarray(hist.steps), [z[0] for z in hist.z], bare, 0) is None
    assert twin_flip(hist, bare, 0) == ""
