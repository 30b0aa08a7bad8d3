"""Pacing a throttled run by the wall clock (pure: the caller passes the clock's readings).

A run capped at ``cap`` steps/s follows a schedule: step k is due at ``t0 + (k − k0) / cap``, where
(t0, k0) is the anchor, the time and step at which the schedule began.  After each chunk of training
the worker waits until the step it reached is due.  Time spent outside the chunk (writing snapshots,
sleeping longer than asked) is therefore absorbed by the next waits instead of adding up, as it did
when each chunk slept ``n / cap − (its own training time)``: 300 steps at 20 steps/s took ~21 s, not
15.  The schedule is re-anchored when the cap changes, after a pause (the caller drops the anchor),
and when the run has fallen more than :data:`MAX_LAG_S` behind it (a busy machine): it then goes on
at the cap from where it is rather than racing to catch up.

*Story time* (``law = "story"``, the Lecture preset's pace): the speed grows with the step, step k due
at ``t0 + (ln(k + K0) − ln(k0 + K0)) / r``, so that each tenfold of k + K0 takes the same wall time, as the
log-step charts draw it: the few first steps, where the decoder learns and the scan begins, are on screen
about as long as the hundreds after the snap (K0 = 0.1: each phase of both lecture presets ≥ 20 % of the
lesson, bench/lecture_pace.py; K0 = 1 gave the first two steps of the mean-field lecture 14 %).  ``r``
(1/s) is set by the run's length and how long the whole story should take (:func:`story_rate`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

MAX_LAG_S = 1.0  # behind the schedule by more than this: start a new schedule instead of catching up
Law = Literal["linear", "story"]
Speed = float | Literal["story"] | None  # what a run is throttled to: steps/s, story time, or nothing
STORY = "story"  # the speed option that plays a run in story time
STORY_S = 20.0  # a run in story time takes this long, whatever its length
STORY_K0 = 0.1  # the step scale of story time: step k is at ln(k + K0) (bench/lecture_pace.py)


@dataclass(frozen=True)
class Anchor:
    """Where a schedule began: step ``step`` at time ``t`` (seconds, any monotonic clock), at ``cap``:
    steps/s (linear law) or the story rate r in 1/s (story law)."""

    t: float
    step: int
    cap: float
    law: Law = "linear"

    def due(self, step: int) -> float:
        """The time at which ``step`` is due."""
        if self.law == "story":
            return self.t + (math.log(step + STORY_K0) - math.log(self.step + STORY_K0)) / self.cap
        return self.t + (step - self.step) / self.cap


def story_rate(total_steps: int, seconds: float = STORY_S) -> float:
    """The story rate r (1/s) that plays ``total_steps`` steps in ``seconds``: ln((S + K0)/K0) / seconds."""
    return math.log((max(total_steps, 1) + STORY_K0) / STORY_K0) / seconds


def steps_per_s(law: Law, cap: float, step: int) -> float:
    """The speed at ``step``: ``cap`` (linear), or dk/dt = r·(k + K0) (story)."""
    return cap * (step + STORY_K0) if law == "story" else cap


def seconds_between(law: Law, cap: float, start: int, end: int) -> float:
    """Wall seconds a paced run takes from step ``start`` to ``end``."""
    if law == "story":
        return (math.log(end + STORY_K0) - math.log(start + STORY_K0)) / cap
    return (end - start) / cap


def pace(
    anchor: Anchor | None, cap: float | None, start: tuple[float, int], now: float, step: int, law: Law = "linear"
) -> tuple[Anchor | None, float]:
    """The schedule to keep and the seconds to wait, after a chunk that began at ``start`` = (time,
    step) and reached ``step`` at time ``now``, at ``cap`` under ``law`` (None: unthrottled, no schedule,
    no wait).  A new schedule begins at the chunk's start when there is none (``anchor`` None: the
    first chunk, after a pause or an unthrottled stretch) or the cap or the law changed; a run more than
    :data:`MAX_LAG_S` behind its schedule begins a new one where it is."""
    if not cap:
        return None, 0.0
    if anchor is None or anchor.cap != cap or anchor.law != law:
        anchor = Anchor(start[0], start[1], cap, law)
    if now - anchor.due(step) > MAX_LAG_S:
        anchor = Anchor(now, step, cap, law)
    return anchor, max(0.0, anchor.due(step) - now)
