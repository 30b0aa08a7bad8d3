"""The scheduler: which run may compute, and the queue of those waiting for a compute slot; its rules
are pure functions (which run needs a slot, how long a queued run waits, the sentence that tells it).

A *slot* is one run computing at full speed (``SCANSNAP_MAX_JOBS`` of them, default: the cores).
Slots bound the runs that compute at once, not the runs that exist: a paused run holds none, and a
run throttled to a lecture's pace, which computes ``cap · step_s`` of a core (``cap`` steps a second
of ``step_s`` compute seconds each, e.g. 20 × 0.7 ms = 1.4 %), holds none either while that is under
``control.LIGHT_DUTY``.  The job manager (:mod:`scansnap.service.jobs`) applies these rules.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from collections.abc import Callable, Sequence

from scansnap.service.control import FULL, IDLE, LIGHT, is_light
from scansnap.service.job_state import TERMINAL, TRAIN, Job, JobStatus, Schedule

LIGHT_PER_SLOT = 8  # light runs allowed per slot (they share about one core's worth at most)


def expected_wait(slots: int, busy_remaining: Sequence[float], ahead: Sequence[float]) -> float:
    """Seconds until the run behind ``ahead`` gets one of ``slots`` slots.

    The slots in use free up after ``busy_remaining`` seconds (the others are free now); each run
    ahead, in queue order, takes the first slot that frees and holds it for its duration."""
    free_at = [0.0] * max(0, slots - len(busy_remaining)) + [max(0.0, r) for r in busy_remaining]
    heapq.heapify(free_at)
    for duration in ahead:
        heapq.heappush(free_at, heapq.heappop(free_at) + max(0.0, duration))
    return free_at[0] if free_at else 0.0


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _slots_phrase(slots: int, busy: int) -> str:
    if busy >= slots:
        state = "training" if slots == 1 else "both training" if slots == 2 else "all training"
    else:
        state = f"{busy} training, {slots - busy} free"
    return f"slots: {slots}, {state}"


def duration(seconds: float) -> str:
    """``seconds`` rounded up (a visitor is never told a wait shorter than the estimate): to 5 s, a
    minute or a tenth of an hour."""
    if seconds <= 55:
        return f"{5 * max(1, math.ceil(seconds / 5)):.0f} s"
    if seconds <= 3540:
        return f"{math.ceil(seconds / 60):.0f} min"
    return f"{math.ceil(seconds / 360) / 10:.1f} h"


def queue_sentence(ahead: int, slots: int, busy: int, wait_s: float) -> str:
    """What a queued run waits for, e.g. "2 runs ahead of you; slots: 2, both training; starts in
    about 1 min" (``busy``: slots held now, ``wait_s``: :func:`expected_wait`)."""
    first = "next in line" if ahead == 0 else _count(ahead, "run", "runs") + " ahead of you"
    return f"Waiting for a training slot: {first}; {_slots_phrase(slots, busy)}; starts in about {duration(wait_s)}"


class Scheduler:
    """The slots and the queue of one job manager (:mod:`scansnap.service.jobs`), over its ``jobs``; the
    caller holds the manager's lock.  ``launch(job)`` starts a worker for a job that has none;
    ``drop(job)`` ends a job stopped while it waited."""

    def __init__(self, slots: int, jobs: dict[str, Job], launch: Callable[[Job], None], drop: Callable[[Job], None]):
        self.slots, self.max_light = slots, LIGHT_PER_SLOT * slots
        self._jobs, self._launch, self._drop = jobs, launch, drop
        self.queue: deque[str] = deque()  # runs waiting for a slot, first come first served

    def resize(self, slots: int) -> None:
        """Now ``slots`` slots (a cluster grew or shrank): runs holding one keep it; the free ones are handed out."""
        self.slots, self.max_light = slots, LIGHT_PER_SLOT * slots
        self.assign()

    def want(self, j: Job, demand: str) -> None:
        """``j`` asks for a slot (FULL), to run light without one (LIGHT) or for nothing (IDLE, paused):
        give it what the rules allow, then hand out the free slots."""
        if j.ended or j.status in TERMINAL:
            return
        lights = sum(1 for o in self._jobs.values() if o.light and o is not j and not o.ended)
        if demand == LIGHT and lights >= self.max_light:
            demand = FULL  # too many light runs already: this one waits for a slot like any other
        j.demand, j.light = demand, demand == LIGHT
        if demand == FULL:
            if not j.slot and j.id not in self.queue:
                self.queue.append(j.id)
        else:
            self.release(j)
        j.control.set_slot(j.slot, j.light)
        if j.light and not j.has_worker:
            self._launch(j)
        self.assign()

    @staticmethod
    def demand_now(j: Job) -> str:
        """What a run asks for when it has no worker to say it (resumed, stepped, or parked)."""
        c = j.control
        if not c.wants_steps():
            return IDLE
        return LIGHT if is_light(c.max_steps_per_s, c.step_s) else FULL

    def release(self, j: Job) -> None:
        """``j`` holds nothing and waits for nothing (until it asks again)."""
        if j.id in self.queue:
            self.queue.remove(j.id)
        j.slot = False

    def assign(self) -> None:
        """Give the free slots to the queue, first come first served; start a worker where none runs."""
        while self.queue and sum(1 for j in self._jobs.values() if j.slot) < self.slots:
            j = self._jobs[self.queue.popleft()]
            if j.control.stop_event.is_set():
                self._drop(j)
                continue
            j.slot, j.granted = True, (time.monotonic(), j.control.step)
            j.control.set_slot(True, j.light)
            if not j.has_worker:
                self._launch(j)

    def queued_seconds(self) -> float:
        """Estimated slot-seconds still to do by the runs that hold or wait for a slot."""
        return sum(j.slot_seconds() for j in self._jobs.values() if j.slot or j.id in self.queue)

    def status(self, j: Job) -> JobStatus:
        """``j`` as the pages see it; a queued run with what it waits for."""
        if j.id not in self.queue:
            return j.snapshot(None)
        ahead = list(self.queue).index(j.id)
        holders = [o for o in self._jobs.values() if o.slot]
        before = [self._jobs[i].slot_seconds() for i in list(self.queue)[:ahead]]
        wait = expected_wait(self.slots, [o.slot_left() for o in holders], before)
        return j.snapshot(ahead, queue_sentence(ahead, self.slots, len(holders), wait))

    def view(self) -> Schedule:
        """Who holds the slots, who runs light, who waits, and how many paused runs hold nothing."""
        train = [j for j in self._jobs.values() if j.kind == TRAIN and not j.ended]
        return Schedule(
            self.slots,
            tuple(j.snapshot(None) for j in train if j.slot),
            tuple(j.snapshot(None) for j in train if j.light and not j.slot),
            tuple(self.status(self._jobs[i]) for i in self.queue),
            sum(1 for j in train if j.status == "paused" and j.id not in self.queue),
        )
