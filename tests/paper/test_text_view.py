"""JoMA's drop-then-rebound read off an entropy curve; the text items in the catalog and the runner."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.metrics import METRICS, label, metric_names
from engine.paper.items import runner, text_configs
from engine.paper.items.catalog import ITEMS, QUICK_DIFFERENCES, total_work
from engine.paper.text_view import MIN_REBOUND, drop_rebound, summary


def test_drop_and_rebound_are_measured_from_the_minimum():
    steps = np.array([0, 10, 20, 30])
    d = drop_rebound(steps, [2.5, 2.0, 2.2, 2.4])
    assert (d.min_step, d.min_value, d.end_step) == (10, 2.0, 30)
    assert d.drop == pytest.approx(0.5) and d.rebound == pytest.approx(0.4) and d.rebounded
    only_falls = drop_rebound(steps, [2.5, 2.4, 2.3, 2.2])
    assert only_falls.dropped and only_falls.rebound == 0 and not only_falls.rebounded
    small = drop_rebound(steps, [2.5, 2.0, 2.0 + MIN_REBOUND / 2, 2.0 + MIN_REBOUND / 2])
    assert not small.rebounded  # half the threshold is not a rebound
    flat = drop_rebound(steps, [2.5, 2.5, 2.6, 2.6])
    assert not flat.dropped and not flat.rebounded  # a rise without a drop is not "sparser, then denser"


def test_summary_states_each_layer_with_numbers():
    steps = np.array([0, 10, 20, 30])
    H = np.array([[2.5, 2.5], [2.0, 2.4], [2.3, 2.3], [2.4, 2.2]])
    text = summary(steps, H)
    assert text.startswith("At this budget (30 steps): ")
    assert "layer 0: a drop-then-rebound WAS measured (H 2.500 at step 0 → 2.000 at step 10 → 2.400 at step 30)" in text
    assert "layer 1: NO drop-then-rebound was measured" in text


def test_text_metrics_have_readable_labels():
    assert metric_names("text") == ["train_loss", "attn_entropy", "attn_share_frequent", "val_loss", "val_ppl"]
    assert "attn_entropy" not in metric_names("synthetic") and "train_loss" in metric_names("synthetic")
    assert all(METRICS[m].per_layer for m in ("attn_entropy", "attn_share_frequent"))
    assert label("attn_entropy") == "attention entropy (nats)" and label("val_ppl") == "validation perplexity"


def test_the_text_items_are_catalogued_with_their_work_and_quick_differences():
    assert list(ITEMS)[-2:] == ["fig7", "joma-real"] and ITEMS["fig7"].corpus and not ITEMS["fig4"].corpus
    assert ITEMS["fig7"].work(True) == 100 + 200 and ITEMS["fig7"].work(False) == 2 * 1500
    assert ITEMS["joma-real"].work(True) == 200 and ITEMS["joma-real"].work(False) == 22_800
    assert total_work(["fig7", "joma-real"], True) == 500
    assert sum(d.startswith(("fig7:", "joma-real:")) for d in QUICK_DIFFERENCES) == 2


def test_run_item_hands_the_corpus_loader_to_text_items_only(monkeypatch):
    seen = {}

    def fake_run(quick, progress, corpus_loader=None):
        seen["loader"] = corpus_loader
        raise RuntimeError("stop here")

    monkeypatch.setattr(runner.MODULES["fig7"], "run", fake_run)
    loader = object()
    with pytest.raises(RuntimeError, match="stop here"):
        runner.run_item("fig7", quick=True, corpus_loader=loader)
    assert seen["loader"] is loader
    assert text_configs.joma_config(True).optim.steps == 200


def test_a_curve_lowest_at_the_end_is_said_to_fall_not_to_turn():
    d = drop_rebound([0, 10, 20], [2.5, 2.0, 1.5])
    assert d.dropped and not d.turned and not d.rebounded
    assert d.sentence(0) == (
        "layer 0: NO drop-then-rebound was measured "
        "(H 2.500 at step 0 → 1.500 at step 20, its lowest value, at the end)"
    )
