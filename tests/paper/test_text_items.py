"""The real-text reproduce items: plumbing on a tiny synthetic corpus; the real quick runs when the
built-in corpus is installed (slow)."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.text.data import EncodedCorpus
from engine.core.text.tokenizer import Vocabulary
from engine.paper.items import fig7, joma_real, text_configs

V = 60


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny_loader(data_cfg) -> EncodedCorpus:
    rng = np.random.default_rng(0)
    p = 1 / np.arange(1, V + 1)
    p /= p.sum()
    train, val = rng.choice(V, size=6000, p=p), rng.choice(V, size=4000, p=p)
    vocab = Vocabulary(tuple(["<unk>", *(f"w{i}" for i in range(1, V))]), np.bincount(train, minlength=V))
    return EncodedCorpus("tiny", vocab, train, val)


SMALL = {"model.d_model": 16, "model.d_ff": 16, "model.device": "cpu", "optim.bptt": 8}


def test_items_refuse_to_run_without_a_corpus_loader():
    with pytest.raises(ValueError, match="needs corpus_loader"):
        fig7.run(quick=True)
    with pytest.raises(ValueError, match="needs corpus_loader"):
        joma_real.run(quick=True)


def test_fig7_result_shape(monkeypatch):
    monkeypatch.setattr(text_configs, "FIG7_QUICK", text_configs.FIG7_QUICK | SMALL)
    seen = []
    r = fig7.run(quick=True, progress=seen.append, corpus_loader=tiny_loader)
    assert sum(seen) == fig7.work(True) == 300
    assert [v.item for v in r.verdicts] == ["fig7", "fig7"] and len(r.figures) == 2
    assert set(r.configs) == {"1 layer", "3 layers"}
    maps = r.data["maps"]
    assert sorted(maps.groupby("run")["step"].unique()["3 layers"].tolist()) == [0, 50, 100, 200]
    assert maps["a"].between(0, 1).all() and (maps["key"] <= maps["query"]).all()
    sums = maps.groupby(["run", "step", "query"])["a"].sum()
    np.testing.assert_allclose(sums.to_numpy(), 1.0, rtol=1e-5)  # each causal row is a distribution
    sc = r.data["scalars"]
    assert set(sc[sc.run == "3 layers"].query("metric == 'attn_entropy'")["layer"]) == {0, 1, 2}


def test_joma_result_states_the_measured_numbers(monkeypatch):
    over = text_configs.JOMA_QUICK | SMALL | {"optim.steps": 30, "snapshots.linear_every": 5}
    monkeypatch.setattr(text_configs, "JOMA_QUICK", over)
    r = joma_real.run(quick=True, corpus_loader=tiny_loader)
    assert len(r.verdicts) == 4  # drop and rebound for each of the 2 layers
    assert [v.status == "n/a" for v in r.verdicts] == [False, True, False, True]  # quick: rebounds not judged
    assert all("budget too small to show a rebound" in v.reason for v in r.verdicts[1::2])
    assert all("H(end) − min H = " in v.reason for v in r.verdicts[1::2])  # the measured number is stated
    assert r.notes[0].startswith("At this budget (30 steps): layer 0:")
    assert all("min" in v.detail and "at step" in v.detail for v in r.verdicts[::2])
    full = joma_real.layer_verdicts(0, np.array([0, 10, 20]), np.array([2.5, 2.0, 2.05]))
    assert [v.status for v in full] == ["pass", "fail"]  # the full run judges the rebound (0.05 < 0.1)


def test_summary_says_plainly_whether_a_rebound_was_measured():
    steps = np.array([0, 10, 20, 30])
    H = np.array([[2.5, 2.5], [2.0, 2.4], [2.3, 2.3], [2.4, 2.2]])  # L0: drop 0.5, rebound 0.4; L1 only falls
    text = joma_real.summary(steps, H)
    assert "layer 0: a drop-then-rebound WAS measured (H 2.500 at step 0 → 2.000 at step 10 → 2.400" in text
    assert "layer 1: NO drop-then-rebound was measured" in text
    v = joma_real.layer_verdicts(1, steps, H[:, 1])
    assert [x.passed for x in v] == [True, False]


@pytest.mark.slow
def test_fig7_quick_on_the_builtin_corpus_passes():
    from engine.service.corpora import encoded_corpus

    r = fig7.run(quick=True, corpus_loader=encoded_corpus)
    assert all(v.passed for v in r.verdicts), [v.detail for v in r.verdicts]
