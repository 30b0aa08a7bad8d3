"""The live story (scansnap.kinds.synthetic.paper.story): each phase begins at the first probed step where its measured
statistic holds, the phase shown is the latest begun, and the theory note names failed conditions."""

from __future__ import annotations

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper.claims import Observed
from scansnap.kinds.synthetic.paper.story import PROBES, Story, probe_indices, run_story
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT

STEPS = np.arange(0, 201)
# One query, K = 2 classes; tokens 0–1 common to both, 2–5 distinct to class 0, 6–9 to class 1.
P = np.zeros((2, 10))
P[:, :2] = 1.0
P[0, 2:6] = P[1, 6:10] = [0.1, 0.2, 0.3, 0.4]
KIND = np.where(P > 0, KIND_DISTINCT, 0)
KIND[:, :2] = KIND_COMMON
FALL_FROM, ORDER_FROM = 20, 60  # steps from which the common logits fall / distinct ones rise in P order


def trajectory(t: int) -> np.ndarray:
    """z(t) of the single query row (1, 10): commons fall after FALL_FROM; distinct tokens rise in
    reverse P order before ORDER_FROM and in P order after it."""
    z = np.zeros(10)
    z[:2] = -0.01 * max(0, t - FALL_FROM)
    weights = np.r_[P[0, 2:6], P[1, 6:10]]
    order = weights if t >= ORDER_FROM else weights[::-1]
    z[2:] = 0.001 * t * order
    return z[None]


def observed(dz_common: np.ndarray) -> Observed:
    z = np.stack([trajectory(int(t)) for t in STEPS])
    return Observed(STEPS, z, np.zeros(len(STEPS)), P, KIND, np.zeros(2, dtype=np.int64), {}, dz_common)


def first_probe_from(step: int) -> int:
    return int(min(STEPS[i] for i in probe_indices(len(STEPS)) if STEPS[i] >= step))


def test_phases_begin_where_their_statistic_first_holds():
    rising = np.log1p(STEPS.astype(float))  # never freezes: ln t keeps growing
    story = run_story(observed(rising))
    assert story.began == {"suppressing": first_probe_from(FALL_FROM + 1), "winning": first_probe_from(ORDER_FROM)}
    assert story.phase == "winning" and story.step == 200
    assert f"since step {story.began['winning']}" in story.sentence
    assert story.earlier == f"common tokens losing attention from step {story.began['suppressing']}"


def test_a_frozen_series_is_snapped_and_says_when():
    frozen = 1 - np.exp(-STEPS / 10.0)  # −Δz_common saturates: changes < 10 % per doubling after ~30
    story = run_story(observed(frozen))
    assert story.phase == "snapped" and 10 < story.began["snapped"] < 60
    assert story.sentence.startswith(f"Snapped at step {story.began['snapped']}")


def test_before_anything_moves_it_is_starting():
    obs = observed(np.zeros(len(STEPS)))
    early = Observed(STEPS[:10], obs.z[:10], obs.entropy[:10], P, KIND, obs.rows, {}, obs.dz_common[:10])
    story = run_story(early)
    assert story.phase == "starting" and story.began == {} and "decoder learns first" in story.sentence


def test_theory_note_says_the_first_failed_condition_in_words_and_counts_the_rest():
    assert Story("winning", 5).theory_note == ""
    failed = ("the theorem assumes infinitely long sequences; this run uses 128 tokens", "ten common tokens", "plain")
    note = Story("winning", 5, {"winning": 3}, failed).theory_note
    assert note == (
        "Measured, not predicted: the theorem assumes infinitely long sequences; this run uses 128 tokens "
        "(and 2 more conditions)."
    )
    one = Story("winning", 5, {"winning": 3}, failed[:1]).theory_note
    assert one.endswith("this run uses 128 tokens.")


def test_a_snap_is_told_provisional_until_it_stops_moving():
    began = {"suppressing": 2, "winning": 3, "snapped": 38}
    assert Story("snapped", 60, began).sentence.startswith("Snapped at step 38")
    said = Story("snapped", 60, began, provisional=True).sentence
    assert (
        said.startswith("Snapping: the attention is freezing (from about step 38 so far") and "may still move" in said
    )


@pytest.mark.parametrize("count", [0, 1, 2, 5, 1000])
def test_probes_are_bounded_increasing_and_end_at_the_last_step(count):
    idx = probe_indices(count)
    assert len(idx) <= PROBES and np.all(np.diff(idx) > 0)
    assert (count < 2 and len(idx) == 0) or (idx[0] == 1 and idx[-1] == count - 1)


def _still(loss_after_one: float) -> tuple[Observed, np.ndarray]:
    """A run whose attention logits never move, its loss after one step ``loss_after_one``."""
    z = np.zeros((len(STEPS), 1, 10))
    obs = Observed(STEPS, z, np.zeros(len(STEPS)), P, KIND, np.zeros(2, dtype=np.int64), {}, np.zeros(len(STEPS)))
    return obs, np.r_[3.5, np.full(len(STEPS) - 1, loss_after_one)]


def test_every_run_gets_a_story_even_when_it_went_wrong():
    """Issue 50: Adam with η_Y = 100 (and SGD at η = 10⁴) fit the data in one step and never moved the
    attention, and the Lab said "Starting: … not moved yet"; a diverged run and one that ended while still
    scanning said nothing of how they ended.  Each gets one sentence with what to change."""
    obs, zero = _still(0.0)
    said = run_story(obs, status="finished", loss=zero).sentence
    assert said.startswith("Nothing moved: the decoder fit the data at once (loss 0 after one step)")
    assert "Lower the decoder's learning rate η_Y" in said
    assert run_story(obs, status="running", loss=zero).ending == "saturated"  # it says so while it runs
    obs, high = _still(2.0)
    assert run_story(obs, status="finished", loss=high).sentence.startswith("Nothing has moved by step 200")
    assert run_story(obs, status="running", loss=high).ending is None  # it may still start
    diverged = run_story(observed(np.log1p(STEPS.astype(float))), status="diverged")
    assert diverged.sentence.startswith("Diverged at step 200") and "÷10" in diverged.sentence
    scanning = run_story(observed(np.log1p(STEPS.astype(float))), status="finished")
    assert scanning.phase == "winning" and scanning.sentence.startswith("Still scanning at the last step (200)")
    frozen = run_story(observed(1 - np.exp(-STEPS / 10.0)), status="finished")
    assert frozen.ending is None and frozen.sentence.startswith("Snapped at step")
