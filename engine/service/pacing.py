"""Pacing a throttled run by the wall clock (pure: the caller passes the clock's readings).

A run capped at ``cap`` steps/s follows a schedule: step k is due at ``t0 + (k − k0) / cap``, where
(t0, k0) is the anchor, the time and step at which the schedule began.  After each chunk of training
the worker waits until the step it reached is due.  Time spent outside the chunk (writing snapshots,
sleeping longer than asked) is therefore absorbed by the next waits instead of adding up, as it did
when each chunk slept ``n / cap − (its own training time)``: 300 steps at 20 steps/s took ~21 s, not
15.  The schedule is re-anchored when the cap changes, after a pause (the caller drops the anchor),
and when the run has fallen more than :data:`MAX_LAG_S` behind it (a busy machine): it then goes on
at the cap from where it is rather than racing to catch up.
"""

from __future__ import annotations

from dataclasses import dataclass

MAX_LAG_S = 1.0  # behind the schedule by more than this: start a new schedule instead of catching up


@dataclass(frozen=True)
class Anchor:
    """Where a schedule began: step ``step`` at time ``t`` (seconds, any monotonic clock), at ``cap`` steps/s."""

    t: float
    step: int
    cap: float

    def due(self, step: int) -> float:
        """The time at which ``step`` is due."""
        return self.t + (step - self.step) / self.cap


def pace(
    anchor: Anchor | None, cap: float | None, start: tuple[float, int], now: float, step: int
) -> tuple[Anchor | None, float]:
    """The schedule to keep and the seconds to wait, after a chunk that began at ``start`` = (time,
    step) and reached ``step`` at time ``now``, at ``cap`` steps/s (None: unthrottled, no schedule,
    no wait).  A new schedule begins at the chunk's start when there is none (``anchor`` None: the
    first chunk, after a pause or an unthrottled stretch) or the cap changed; a run more than
    :data:`MAX_LAG_S` behind its schedule begins a new one where it is."""
    if not cap:
        return None, 0.0
    if anchor is None or anchor.cap != cap:
        anchor = Anchor(start[0], start[1], cap)
    if now - anchor.due(step) > MAX_LAG_S:
        anchor = Anchor(now, step, cap)
    return anchor, max(0.0, anchor.due(step) - now)
