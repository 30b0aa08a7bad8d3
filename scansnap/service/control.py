"""The controls of a running job, shared by the server and the job's worker process (no torch).

The dashboard's buttons end up here: stop, pause, step N, a speed cap; the server's scheduler grants
or takes back the job's compute slot here; the worker reports its step back.  Built on threading
primitives by default, or on a multiprocessing context's shared memory so that a worker process
started from that context sees the buttons the server presses.
"""

from __future__ import annotations

import threading
from multiprocessing.context import BaseContext
from typing import Any

from scansnap.service.pacing import STORY, Law, Speed, steps_per_s, story_rate

FULL, LIGHT, IDLE = "full", "light", "idle"  # what a run asks of the scheduler: a slot, to run light, nothing
LIGHT_DUTY = 0.1  # a throttled run that computes less than this fraction of a core needs no slot


def is_light(cap: float | None, step_s: float | None, light_now: bool = False) -> bool:
    """Whether a run throttled to ``cap`` steps/s, each taking ``step_s`` compute seconds, needs no slot:
    its duty ``cap · step_s`` < :data:`LIGHT_DUTY` (a light run stays light up to twice that, so that
    timing noise does not flip it back and forth).  Unknown step time or no cap: not light."""
    if not cap or step_s is None:
        return False
    return cap * step_s < LIGHT_DUTY * (2.0 if light_now else 1.0)


class _Cell:
    """A plain value with ``.value``: what ``multiprocessing.RawValue`` is, inside one process."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value


class RunControl:
    """The controls of a running job (the dashboard's buttons end up here), and the step it reports.

    ``paused`` blocks training; ``grant_steps(n)`` lets a paused run take n steps;
    ``max_steps_per_s`` throttles a run so a lecture can follow it; ``step`` is the last step the
    trainer reported.  ``has_slot``: the scheduler lets the run compute at full speed;
    ``light_ok``: it lets a throttled run that needs only a sliver of a core compute without a slot
    (:mod:`scansnap.service.jobs`).  Built on threading primitives by default; ``RunControl(ctx)`` builds it on
    the multiprocessing context ``ctx`` instead, so a worker process started from that context
    sees the buttons pressed in the server and the server sees its step."""

    def __init__(self, ctx: BaseContext | None = None) -> None:
        self.stop_event: Any
        self.pause_event: Any
        self._lock: Any
        if ctx is None:
            self.stop_event, self.pause_event, self._lock = threading.Event(), threading.Event(), threading.Lock()
            self.slot_event: Any = threading.Event()
            self.slot_event.set()  # no scheduler in the process: the run may always compute
            self.light_event: Any = threading.Event()
            self._step_s: Any = _Cell(0.0)
            self._speed: Any = _Cell(0.0)
            self._story: Any = _Cell(0.0)
            self._granted: Any = _Cell(0)
            self._step: Any = _Cell(0)
        else:
            self.stop_event, self.pause_event, self._lock = ctx.Event(), ctx.Event(), ctx.Lock()
            self.slot_event, self.light_event = ctx.Event(), ctx.Event()
            self._step_s = ctx.RawValue("d", 0.0)
            self._speed, self._granted, self._step = ctx.RawValue("d", 0.0), ctx.RawValue("q", 0), ctx.RawValue("q", 0)
            self._story = ctx.RawValue("d", 0.0)

    def stop(self) -> None:
        self.stop_event.set()

    @property
    def has_slot(self) -> bool:
        return self.slot_event.is_set()

    @property
    def light_ok(self) -> bool:
        return self.light_event.is_set()

    def set_slot(self, slot: bool, light_ok: bool) -> None:
        """What the scheduler lets the run do: compute at full speed (a slot), lightly, or not at all."""
        (self.slot_event.set if slot else self.slot_event.clear)()
        (self.light_event.set if light_ok else self.light_event.clear)()

    def wants_steps(self) -> bool:
        """The run has steps to take now: it is not paused, or Step N granted some."""
        if not self.paused:
            return True
        with self._lock:
            return int(self._granted.value) > 0

    def pause(self) -> None:
        self.pause_event.set()

    def resume(self) -> None:
        self.pause_event.clear()

    @property
    def paused(self) -> bool:
        return self.pause_event.is_set()

    @property
    def max_steps_per_s(self) -> float | None:
        """The throttle now, in steps/s (None: as fast as it goes); in story time, its speed at the step
        last reported (:func:`~scansnap.service.pacing.steps_per_s`)."""
        law, cap = self.pace
        return steps_per_s(law, cap, self.step) if cap else None

    @max_steps_per_s.setter
    def max_steps_per_s(self, cap: float | None) -> None:
        """A constant throttle of ``cap`` steps/s (None: none); it ends story time."""
        self._story.value = 0.0
        self._speed.value = float(cap) if cap else 0.0

    def throttle(self, speed: Speed, total_steps: int) -> None:
        """Throttle to ``speed``: steps/s, "story" (story time over ``total_steps`` steps) or None (none)."""
        if speed == STORY:
            self.set_story(story_rate(total_steps))
        else:
            self.max_steps_per_s = float(speed) if speed else None

    def set_story(self, rate: float) -> None:
        """Play the run in story time at rate ``rate`` (1/s, :func:`~scansnap.service.pacing.story_rate`)."""
        self._speed.value = 0.0
        self._story.value = float(rate)

    @property
    def pace(self) -> tuple[Law, float | None]:
        """(law, cap) of the throttle: ("story", r) in story time, else ("linear", steps/s or None)."""
        story = float(self._story.value)
        if story > 0:
            return "story", story
        cap = float(self._speed.value)
        return "linear", cap if cap > 0 else None

    @property
    def step_s(self) -> float | None:
        """Compute seconds per optimiser step, as the worker last measured them (None: not yet)."""
        v = float(self._step_s.value)
        return v if v > 0 else None

    def report_step_s(self, seconds: float) -> None:
        self._step_s.value = float(seconds)

    @property
    def step(self) -> int:
        return int(self._step.value)

    def report_step(self, step: int) -> None:
        self._step.value = int(step)

    def grant_steps(self, n: int) -> None:
        with self._lock:
            self._granted.value += max(0, int(n))

    def allowance(self, wanted: int) -> int:
        """How many of ``wanted`` steps may run now (all, unless paused)."""
        if not self.paused:
            return wanted
        with self._lock:
            take = min(wanted, int(self._granted.value))
            self._granted.value -= take
            return take


class ProgressControl(RunControl):
    """In-process controls that move a progress bar (tqdm's) with every step the run reports: the command
    line's and the notebook API's."""

    def __init__(self, bar: Any):
        super().__init__()
        self.bar = bar

    def report_step(self, step: int) -> None:
        super().report_step(step)
        self.bar.update(step - self.bar.n)
