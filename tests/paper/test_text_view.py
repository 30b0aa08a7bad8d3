"""JoMA's drop-then-rebound read off an entropy curve; the text items in the catalog and the runner."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scansnap.core.metrics import METRICS, label, metric_names
from scansnap.kinds.text.paper.items import configs
from scansnap.kinds.text.paper.text_view import (
    MIN_REBOUND,
    across_seeds,
    drop_rebound,
    groups_sentence,
    live_readings,
    live_verdict,
    smoothed,
    snapshot_noise,
    story,
    summary,
    trend,
)
from scansnap.paper.items import runner
from scansnap.paper.items.catalog import ITEMS, quick_differences, total_work

STEPS = np.arange(0, 1100, 100)  # 11 snapshots
FALL_AND_RISE = np.array([2.5, 2.2, 2.0, 2.0, 2.0, 2.1, 2.2, 2.3, 2.4, 2.4, 2.4])
ONLY_FALLS = np.array([2.5, 2.3, 2.2, 2.1, 2.0, 1.95, 1.9, 1.9, 1.9, 1.9, 1.9])


def test_smoothing_is_a_centred_running_median_that_keeps_the_start():
    h = np.array([2.5, 2.0, 3.0, 1.0, 2.0, 2.2, 9.0])
    # by hand: k=0 kept; k=1 median(2.5, 2.0, 3.0); k=2..4 median of 5 around k; k=5 median(2.0, 2.2, 9.0);
    # the end: median of the last three
    expected = [2.5, 2.5, 2.0, 2.0, 2.2, 2.2, 2.2]
    np.testing.assert_allclose(smoothed(h), expected)
    np.testing.assert_allclose(smoothed([1.0, 2.0]), [1.0, 2.0])


def test_drop_and_rebound_are_measured_on_the_smoothed_curve():
    d = drop_rebound(STEPS, FALL_AND_RISE)
    assert (d.min_step, d.min_value, d.end_step) == (200, 2.0, 1000)
    assert d.drop == pytest.approx(0.5) and d.rebound == pytest.approx(0.4) and d.rebounded
    only_falls = drop_rebound(STEPS, ONLY_FALLS)
    assert only_falls.dropped and only_falls.rebound == 0 and not only_falls.rebounded
    small = drop_rebound(STEPS, np.r_[2.5, np.minimum(FALL_AND_RISE[1:], 2.0 + MIN_REBOUND / 2)])
    assert small.dropped and not small.rebounded  # half the threshold is not a rebound
    flat = drop_rebound(STEPS, np.r_[2.5, np.full(10, 2.6)])
    assert not flat.dropped and not flat.rebounded  # a rise without a drop is not "sparser, then denser"


def test_a_spike_at_the_minimum_or_at_the_end_is_no_rebound():
    """The JoMA caption that flipped (issue 23): its minimum sat on one snapshot of a loss spike."""
    dip = ONLY_FALLS.copy()
    dip[6] -= 1.0  # one snapshot a nat low
    raw_rebound = dip[-1] - dip.min()
    assert raw_rebound == pytest.approx(1.0)  # read raw, a 1-nat "rebound"
    d = drop_rebound(STEPS, dip)
    assert d.min_value == pytest.approx(1.9) and d.rebound == pytest.approx(0) and not d.rebounded
    jump = ONLY_FALLS.copy()
    jump[-1] += 1.0  # the newest snapshot a nat high
    assert not drop_rebound(STEPS, jump).rebounded


def test_snapshot_noise_is_the_jitter_about_the_curve():
    rng = np.random.default_rng(3)
    steps = np.arange(300)
    curve = 2.5 - np.log1p(steps / 30) / 3
    sigma = 0.05
    noisy = curve + rng.normal(0, sigma, len(steps))
    # a running median of 5 leaves residuals of SD ≈ σ·√(1 − 2/π·…) ≈ 0.9σ for normal noise: within 25 % of σ
    assert snapshot_noise(noisy) == pytest.approx(sigma, rel=0.25)
    assert snapshot_noise(curve) == pytest.approx(0, abs=1e-3)  # a smooth curve has none
    d = drop_rebound(steps, noisy)
    assert f"σ = {d.noise:.3f}" in d.confidence(0.1)


def test_across_seeds_reads_the_mean_curve_and_each_seed():
    seeds = np.stack([FALL_AND_RISE, FALL_AND_RISE + 0.1, FALL_AND_RISE - 0.1 * (STEPS > 200)])
    spread = across_seeds(STEPS, seeds)
    mean = drop_rebound(STEPS, seeds.mean(axis=0))
    assert spread.mean == mean
    mins = [drop_rebound(STEPS, row).min_value for row in seeds]
    assert spread.minimum() == f"{np.mean(mins):.3f} ± {np.std(mins, ddof=1):.3f}"
    assert spread.agreeing("rebounded") == 3 and "a rebound ≥ 0.1 on 3 of 3" in spread.sentence(0)


def test_a_live_verdict_says_too_early_then_holds_its_reading():
    early = live_verdict(STEPS[:3], FALL_AND_RISE[:3], finished=False)
    assert (early.drop, early.rebound) == ("measured", "too early")
    assert "too early" in early.sentence(0)
    done = live_verdict(STEPS, ONLY_FALLS, finished=True)
    assert (done.drop, done.rebound) == ("measured", "not measured")
    assert "no rebound of 0.1 nats at this budget" in done.sentence(0)


def test_a_live_verdict_never_flips_on_one_snapshot():
    """A rebound measured, then one snapshot that dips a nat (a loss spike), then the curve again:
    the verdict stays 'measured' at every snapshot."""
    steps = np.arange(0, 2000, 100)
    h = np.r_[2.5, 2.2, 2.0, 2.0, 2.0, 2.05, 2.1, 2.2, 2.3, 2.4, 2.4, 2.45, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5, 2.5]
    spiked = h.copy()
    spiked[14] -= 1.0
    readings = [r.rebound for r in live_readings(steps, spiked, finished=False)]
    first = readings.index("measured")
    assert all(r == "measured" for r in readings[first:]), readings
    raw = [drop_rebound(steps[:p], spiked[:p]).rebounded for p in range(1, len(h) + 1)]
    assert raw[first:] == [True] * len(raw[first:])  # the smoothing alone holds it here ...
    # ... and the hold keeps a one-snapshot change off the page even when a reading does change
    once = live_readings(steps[:6], np.r_[2.5, 2.5, 2.5, 2.5, 2.5, 1.0], finished=False)
    assert [r.drop for r in once] == ["too early"] * 6


def test_summary_states_each_layer_with_numbers():
    text = summary(STEPS, np.stack([FALL_AND_RISE, ONLY_FALLS], axis=1))
    assert text.startswith("At this budget (1,000 steps), on the curves smoothed over 5 snapshots: ")
    assert (
        "layer 0: a drop-then-rebound WAS measured (smoothed H 2.500 at step 0 → 2.000 at step 200 → 2.400 at step "
        "1000; rebound +0.400 nats = " in text
    )
    assert "layer 1: NO drop-then-rebound was measured" in text


def test_the_story_says_how_many_words_each_layer_attends_to_and_where_it_goes():
    H = np.stack([FALL_AND_RISE, ONLY_FALLS], axis=1)
    text = story(STEPS, H, uniform=np.log(14))
    # e^Ĥ: layer 0 ends at Ĥ = 2.4 → 11.0 words, rising over its last snapshots; layer 1 at 1.9 → 6.7, flat
    assert text == (
        "Step 1,000: layer 0's attention is spreading out again: each word now attends to about 11.0 earlier words "
        "(about 12.2 at the start; 14.0 if uniform); layer 1: about 6.7 words, holding steady."
    )
    assert story(STEPS[:1], H[:1], np.log(14)).startswith("Step 0: layer 0's attention is as initialised")
    assert trend(ONLY_FALLS[:6]) == "sparser"


def test_the_groups_sentence_says_what_the_theory_predicts_and_what_was_measured():
    up, down, flat = np.linspace(0.3, 0.5, 8), np.linspace(0.4, 0.2, 8), np.full(8, 0.3)
    # smoothed: the start kept, the end the median of the last three (a ramp's last-but-one value)
    assert groups_sentence(down, up, 0.35, 0.33).endswith(
        f"distinct words 0.30 → {up[-2]:.2f} of the attention (up; 0.33 if uniform), common words 0.40 → "
        f"{down[-2]:.2f} (down; 0.35 if uniform): as the theory predicts."
    )
    assert groups_sentence(up, flat, 0.35, 0.33).endswith("not what the theory predicts here.")


def test_text_metrics_have_readable_labels():
    assert metric_names("text") == [
        "train_loss",
        "attn_entropy",
        "attn_share_frequent",
        "attn_share_common",
        "attn_share_distinct",
        "val_loss",
        "val_ppl",
    ]
    assert "attn_entropy" not in metric_names("synthetic") and "train_loss" in metric_names("synthetic")
    assert all(METRICS[m].per_layer for m in ("attn_entropy", "attn_share_frequent"))
    assert label("attn_entropy") == "attention entropy (nats)" and label("val_ppl") == "validation perplexity"


def test_the_text_items_are_catalogued_with_their_work_and_quick_differences():
    assert list(ITEMS)[-2:] == ["fig7", "joma-real"] and ITEMS["fig7"].corpus and not ITEMS["fig4"].corpus
    assert ITEMS["fig7"].work(True) == 100 + 200 and ITEMS["fig7"].work(False) == 3 * 2 * 1500  # seeds 1–3
    assert ITEMS["joma-real"].work(True) == 200 and ITEMS["joma-real"].work(False) == 3 * 58_580  # seeds 1–3
    assert total_work(["fig7", "joma-real"], True) == 500
    assert sum(d.startswith(("fig7:", "joma-real:")) for d in quick_differences()) == 2


def test_run_item_hands_the_corpus_loader_to_text_items_only(monkeypatch):
    seen = {}

    def fake_run(quick, progress, corpus_loader=None, seeds=None):
        seen["loader"] = corpus_loader
        raise RuntimeError("stop here")

    monkeypatch.setattr(runner.module_of("fig7"), "run", fake_run)
    loader = object()
    with pytest.raises(RuntimeError, match="stop here"):
        runner.run_item("fig7", quick=True, corpus_loader=loader)
    assert seen["loader"] is loader
    assert configs.joma_config(True).optim.steps == 200


def test_a_curve_lowest_at_the_end_is_said_to_fall_not_to_turn():
    d = drop_rebound([0, 10, 20], [2.5, 2.0, 1.5])  # smoothed: 2.5, 2.0, 2.0 (the end: median of the last 3)
    assert d.dropped and not d.turned and not d.rebounded
    assert d.sentence(0) == (
        "layer 0: NO drop-then-rebound was measured "
        "(smoothed H 2.500 at step 0 → 2.000 at step 20, its lowest value, at the end)"
    )


# ---------------------------------------------------------------------------- recorded curves
RECORDED = json.loads((Path(__file__).parents[1] / "fixtures" / "joma_entropy_6000.json").read_text())
REC_STEPS = np.array(RECORDED["steps"])
REC_H = np.array([RECORDED["H"][s] for s in ("1", "2", "3")])  # (seeds, snapshots, layers), bench/joma_seeds.py


def test_recorded_curves_read_as_the_note_reports():
    """6,000 steps of text-joma-real (vocabulary 2,000), seeds 1–3: layer 1 falls to its minimum near
    step 2,000 (as JoMA's) and rises +0.08 by 6,000; layer 0 is still falling."""
    layer1 = across_seeds(REC_STEPS, REC_H[:, :, 1])
    assert 1500 <= layer1.mean.min_step <= 3000 and layer1.mean.dropped
    assert 0.05 < layer1.mean.rebound < MIN_REBOUND and layer1.agreeing("rebounded") == 0
    layer0 = across_seeds(REC_STEPS, REC_H[:, :, 0])
    assert layer0.mean.drop > 0.9 and layer0.mean.rebound < 0.02


def _with_spike(h: np.ndarray, at_step: int, size: float) -> np.ndarray:
    spiked = h.copy()
    spiked[int(np.searchsorted(REC_STEPS, at_step))] += size
    return spiked


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_loss_spike_on_a_recorded_curve_changes_no_verdict(seed):
    """A snapshot taken on a loss spike (issue 23: the minimum sat on one, 16.5 nats of loss) pulls
    the entropy down by 0.5 nats at step 3,000: read raw, layer 1 would show a 0.5-nat 'rebound'."""
    h = REC_H[seed, :, 1]
    spiked = _with_spike(h, 3000, -0.5)
    raw_rebound = spiked[-1] - spiked.min()
    assert raw_rebound > 0.4  # what the old reading reported
    clean, read = drop_rebound(REC_STEPS, h), drop_rebound(REC_STEPS, spiked)
    assert (read.dropped, read.rebounded) == (clean.dropped, clean.rebounded)
    assert read.min_value == pytest.approx(clean.min_value, abs=0.02) and read.rebound < MIN_REBOUND
    # live: at no snapshot does the spike turn a reading over
    readings = live_readings(REC_STEPS, spiked, finished=False)
    assert [r.rebound for r in readings] == [r.rebound for r in live_readings(REC_STEPS, h, finished=False)]
    drops = [r.drop for r in readings]
    assert drops[0] == "too early" and drops[-1] == "measured"
    assert drops == sorted(drops, key=lambda r: r == "measured")  # too early, then measured for good


def test_a_spike_upwards_at_the_newest_snapshot_is_no_live_rebound():
    h = REC_H[0, :, 1]
    for p in range(30, len(h)):  # at every point of the run, a newest snapshot 0.5 nats high
        prefix = _with_spike(h[:p], int(REC_STEPS[p - 1]), 0.5)
        assert live_verdict(REC_STEPS[:p], prefix, finished=False).rebound == "too early"
