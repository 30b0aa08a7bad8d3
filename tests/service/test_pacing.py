"""scansnap.service.pacing: a throttled run follows a wall-clock schedule (simulated clocks, no real time).

``simulate`` plays a run the way ``RunJob._advance_to`` drives it: a chunk of n steps trains for
``train_s`` seconds, the worker waits what :func:`pace` returns (and oversleeps by ``oversleep_s``, as a
busy machine does), and writing a snapshot costs ``write_s`` before the next chunk starts.
"""

from __future__ import annotations

import math

import pytest

from scansnap.service.pacing import MAX_LAG_S, STORY_K0, STORY_S, Anchor, pace, seconds_between, steps_per_s, story_rate


def simulate(steps: int, chunk: int, cap: float, train_s: float, write_s: float, oversleep_s: float) -> float:
    """The simulated clock's reading when a run of ``steps`` steps ends, in chunks of ``chunk``, a snapshot
    after each (no real time passes: the chunk's training, the waits and the writes are added up)."""
    now, step, anchor = 0.0, 0, None
    while step < steps:
        start = (now, step)
        n = min(chunk, steps - step)
        now, step = now + train_s * n, step + n
        anchor, wait = pace(anchor, cap, start, now, step)
        now += wait + (oversleep_s if wait > 0 else 0.0) + write_s
    return now


@pytest.mark.parametrize("write_s", [0.0, 0.015, 0.04])
@pytest.mark.parametrize("oversleep_s", [0.0, 0.003])
def test_overheads_do_not_add_up(write_s, oversleep_s):
    """The lecture preset's run (300 steps at 20 steps/s, a snapshot every 2 steps, each step 5 ms):
    however long the snapshot writes and the oversleeps, as long as they fit the 50 ms a step has, it
    ends within one chunk's time (2 / 20 s) of 300 / 20 = 15 s.  Sleeping n/cap − (training time) per
    chunk, as the worker did, gave 15 s + 150 × (write_s + oversleep_s): up to 21.5 s here."""
    cap, steps, chunk = 20.0, 300, 2
    simulated_end_s = simulate(steps, chunk, cap, train_s=0.005, write_s=write_s, oversleep_s=oversleep_s)
    assert abs(simulated_end_s - steps / cap) <= chunk / cap + write_s + oversleep_s, simulated_end_s


def test_a_run_slower_than_its_cap_is_never_made_to_wait():
    """Steps that take longer than 1/cap: no wait at all, the run goes as fast as it can."""
    anchor, waits, now = None, [], 0.0
    for k in range(50):
        start, now = (now, k), now + 0.1  # one step per 0.1 s against a cap of 20 steps/s
        anchor, wait = pace(anchor, 20.0, start, now, k + 1)
        waits.append(wait)
    assert waits == [0.0] * 50


def test_falling_far_behind_starts_a_new_schedule_instead_of_racing():
    """A stall longer than MAX_LAG_S (the machine was busy): the run goes on at its cap from where it is;
    it does not race through the steps it missed."""
    cap = 10.0
    anchor, _ = pace(None, cap, (0.0, 0), 0.01, 1)
    stalled = 1 / cap + MAX_LAG_S + 2.0  # step 2 comes 2 s later than the schedule's MAX_LAG_S allows
    anchor, wait = pace(anchor, cap, (0.1, 1), stalled, 2)
    assert anchor == Anchor(stalled, 2, cap) and wait == 0.0
    _, wait = pace(anchor, cap, (stalled, 2), stalled + 0.01, 3)
    assert wait == pytest.approx(1 / cap - 0.01)  # the next step is due one step's time later


def test_a_small_lag_is_caught_up():
    """Behind by less than MAX_LAG_S (one slow snapshot write): the next chunks wait less until the run is
    back on its schedule, so the run still ends on time."""
    cap = 10.0
    anchor, _ = pace(None, cap, (0.0, 0), 0.01, 1)
    lag = MAX_LAG_S / 2
    anchor, wait = pace(anchor, cap, (0.1 + lag, 1), 0.1 + lag + 0.01, 2)  # a write of `lag` s came before
    assert anchor == Anchor(0.0, 0, cap) and wait == 0.0
    _, wait = pace(anchor, cap, (0.11 + lag, 2), 0.12 + lag, 7)
    assert wait == pytest.approx(7 / cap - (0.12 + lag))


def test_a_new_cap_starts_a_new_schedule_at_the_chunk_start():
    """Changing the speed: the new cap counts from the chunk it applies to, not from the run's start."""
    anchor, _ = pace(None, 10.0, (0.0, 0), 0.01, 1)
    anchor, wait = pace(anchor, 2.0, (5.0, 50), 5.01, 51)
    assert anchor == Anchor(5.0, 50, 2.0) and wait == pytest.approx(0.5 - 0.01)


def test_a_paused_run_starts_a_new_schedule_and_does_not_race():
    """After a pause the caller drops the anchor: the first chunk after it is paced from its own start,
    not from the run's start (which would let the whole paused time be caught up at full speed)."""
    cap = 20.0
    before, _ = pace(None, cap, (0.0, 0), 0.01, 2)
    assert before.due(2) == pytest.approx(0.1)
    _, wait = pace(None, cap, (60.0, 2), 60.01, 4)  # resumed after a minute's pause
    assert wait == pytest.approx(2 / cap - 0.01)


def test_unthrottled_has_no_schedule():
    """No cap (max speed): no wait, and the schedule is dropped, so a cap set later starts a new one
    (a kept one would make the run wait for the steps it ran ahead at full speed)."""
    anchor, _ = pace(None, 20.0, (0.0, 0), 0.01, 2)
    assert pace(anchor, None, (0.1, 2), 0.2, 1000) == (None, 0.0)


def _story_times(steps: int, seconds: float, train_s: float, write_s: float) -> dict[int, float]:
    """A run of ``steps`` played in story time as the worker plays it (each chunk sized to ~0.1 s at the
    speed it has reached, a snapshot after each): the simulated clock when each step was reached."""
    cap, now, step, anchor, reached = story_rate(steps, seconds), 0.0, 0, None, {0: 0.0}
    while step < steps:
        start = (now, step)
        n = min(max(1, int(steps_per_s("story", cap, step) * 0.1)), steps - step)
        now, step = now + train_s * n, step + n
        anchor, wait = pace(anchor, cap, start, now, step, "story")
        now += wait
        reached[step] = now
        now += write_s
    return reached


def _when(reached: dict[int, float], step: int) -> float:
    return reached[min(s for s in reached if s >= step)]


def test_story_time_gives_each_tenfold_of_steps_the_same_wall_time():
    """3,000 steps in story time (20 s): step k is reached at 20 · ln((k + K0)/K0) / ln((3000 + K0)/K0) s, so
    steps 9 → 99 take as long as 99 → 999 (about 4.5 s each), and the run ends at 20 s; a linear pace of
    20 steps/s gave the first 10 steps of the 300-step Lecture half a second (its scan was on screen 2 s)."""
    reached = _story_times(3000, 20.0, train_s=0.0003, write_s=0.005)
    assert abs(reached[3000] - 20.0) < 0.2
    for k in (1, 9, 99, 999):
        due = 20.0 * math.log((k + STORY_K0) / STORY_K0) / math.log((3000 + STORY_K0) / STORY_K0)
        assert abs(_when(reached, k) - due) < 0.3, (k, _when(reached, k), due)
    early, late = _when(reached, 99) - _when(reached, 9), _when(reached, 999) - _when(reached, 99)
    assert abs(early - late) < 0.3 and early > 4.0


def test_story_time_speeds_up_with_the_step_and_a_changed_law_starts_a_new_schedule():
    cap = story_rate(300)
    assert steps_per_s("story", cap, 99) == pytest.approx((99 + STORY_K0) * cap)  # dk/dt = r (k + K0)
    assert seconds_between("story", cap, 0, 300) == pytest.approx(STORY_S)
    assert seconds_between("linear", 20.0, 0, 300) == pytest.approx(15.0)
    anchor, _ = pace(None, 20.0, (0.0, 0), 0.01, 2)
    anchor, _ = pace(anchor, cap, (1.0, 20), 1.01, 22, "story")
    assert anchor == Anchor(1.0, 20, cap, "story")
