"""What one job is, on the server's side: its status as the pages see it (:class:`JobStatus`) and
its controls and last report (:class:`Job`).  The manager that runs jobs is :mod:`scansnap.service.jobs`."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from multiprocessing.process import BaseProcess

from scansnap.paper.items.costs import progress
from scansnap.service.control import IDLE, RunControl, is_light
from scansnap.service.pacing import seconds_between
from scansnap.service.worker import worker_context

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}
TRAIN, REPRODUCE = "train", "reproduce"
IDLE_PAUSE_NOTE = (
    "Paused by the server: nobody had this run open (SCANSNAP_IDLE_PAUSE_S), so it gave its training slot "
    "back. ▶ Resume continues it exactly where it stopped."
)


@dataclass(frozen=True)
class JobStatus:
    """A snapshot of one job.  ``step``/``total_steps`` count optimiser steps (for a reproduction, of
    all its items); ``items``, ``items_done`` and ``current`` describe a reproduction."""

    run_id: str
    status: str  # queued, running, paused, finished, stopped, diverged, failed, interrupted
    step: int
    total_steps: int
    queue_position: int | None  # runs ahead of this one, when queued
    message: str | None
    pause_requested: bool = False  # the Pause button was pressed (the worker may not have noticed yet)
    kind: str = TRAIN
    owner: str | None = None
    items: tuple[str, ...] = ()
    items_done: int = 0
    current: str | None = None
    quick: bool = False
    elapsed_s: float = 0.0
    speed: float | None = None  # the run's throttle in steps/s (None: as fast as it goes)
    slot: bool = False  # it holds a training slot (computes at full speed)
    light: bool = False  # throttled to a sliver of a core, it computes without a slot
    waiting: str | None = None  # what a queued run waits for (scheduling.queue_sentence)
    watched_s: float = 0.0  # seconds since a page last showed it
    left_s: float | None = None  # seconds until a running training run ends, at its pace (Job.time_left)
    story: bool = False  # it plays in story time (scansnap/service/pacing.py): ``speed`` is its speed now

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]: of a training run, by optimiser steps; of a reproduction, by its estimated
        seconds (:func:`scansnap.paper.items.costs.progress`: its items differ a hundredfold in seconds per
        step, so its steps said 88 % after 20 s of 75)."""
        if self.status == "finished":
            return 1.0
        if self.kind == REPRODUCE:
            return progress(self.items, self.quick, self.items_done, self.step)
        return min(1.0, self.step / self.total_steps) if self.total_steps > 0 else 0.0


@dataclass(frozen=True)
class Schedule:
    """Who has the server's training slots now: ``holders`` (one per slot in use), ``light`` (throttled
    runs computing without a slot), ``queue`` (in order, each with what it waits for), ``paused`` (how
    many paused runs hold nothing)."""

    slots: int
    holders: tuple[JobStatus, ...]
    light: tuple[JobStatus, ...]
    queue: tuple[JobStatus, ...]
    paused: int


class Job:
    """The server's side of one job: its controls, what its worker last reported, its supervisor."""

    def __init__(
        self, job_id: str, kind: str, total_steps: int, step: int, owner: str | None, args: tuple, seconds: float = 0
    ):
        self.id, self.kind, self.owner, self.total_steps = job_id, kind, owner, total_steps
        self.seconds = seconds  # estimated training seconds of the whole job (run_kinds.run_seconds)
        self.disk = 0.0  # estimated bytes the whole run stores (run_kinds.run_disk_bytes)
        self.args = args  # the worker's arguments after (data_dir, id); see _worker_args
        self.control = RunControl(worker_context())
        self.control.report_step(step)
        if seconds > 0 and total_steps > 0:  # the estimate's step time, until the worker measures its own:
            self.control.report_step_s(seconds / total_steps)  # a throttled run is judged light before a slot
        self.status = "queued"
        self.message: str | None = None
        self.items_done, self.current = 0, None
        self.thread: threading.Thread | None = None  # the supervisor of its latest worker
        self.worker_alive = False  # a worker runs (from its supervisor's start until it has seen it end)
        self.process: BaseProcess | None = None
        self.ended = False  # terminal, and its last worker is gone
        self.started: float = time.monotonic()
        self.finished_at: float | None = None
        # the scheduler's view (scansnap.service.jobs): what the run asks for, what it is given
        self.demand = IDLE
        self.slot = self.light = False
        self.parked = False  # its worker ended while paused, after storing a checkpoint
        self.granted: tuple[float, int] = (self.started, step)  # (time, step) when it last got its slot
        self.watched_at = self.started  # when a page last showed it
        self.idle_paused = False  # paused by the server because nobody watched it
        self.paused_at: float | None = None  # when it was last paused (None: not paused since its last resume)
        self.group: str | None = None  # the grid it belongs to: a grid counts as one of its owner's runs

    def release_control(self) -> None:
        """Swap the shared control of an ended job for an in-process one with the same step: the
        shared one holds named semaphores (in /dev/shm), freed once nothing refers to it."""
        released = RunControl()
        released.report_step(self.control.step)
        self.control = released  # swapped whole: a reader sees the old control or the new one

    @property
    def has_worker(self) -> bool:
        return self.worker_alive

    def remaining_fraction(self) -> float:
        return 1 - min(self.control.step, self.total_steps) / max(self.total_steps, 1)

    def claim_seconds(self) -> float:
        """The slot seconds the queue holds for this job until it ends, whatever its state (queued, running,
        light, paused): its estimate times the share of its work still to do (of a reproduction, by its
        items' estimated seconds: :func:`~scansnap.paper.items.costs.progress`)."""
        if self.kind == REPRODUCE:
            names, quick = self.args
            return self.seconds * (1 - progress(names, quick, self.items_done, self.control.step))
        return self.seconds * self.remaining_fraction()

    def dormant(self, idle_s: float, now: float) -> bool:
        """Paused with no worker and neither shown by a page nor resumed for ``idle_s``: it holds no place
        in the queue (its resume is admitted again like a new run's)."""
        if self.status != "paused" or self.has_worker or self.paused_at is None:
            return False
        return now - max(self.watched_at, self.paused_at) > idle_s

    def slot_seconds(self) -> float:
        """How long the run will still hold a slot: its estimate, or, throttled, its steps at its pace;
        none if it is throttled light (:func:`~scansnap.service.control.is_light` of its step time)."""
        left, c = self.remaining_fraction(), self.control
        if is_light(c.max_steps_per_s, c.step_s, self.light):
            return 0.0
        return max(self.seconds * left, self.paced_left())

    def paced_left(self) -> float:
        """Seconds its throttle still takes to its last step (0 unthrottled)."""
        law, cap = self.control.pace
        step = min(self.control.step, self.total_steps)
        return seconds_between(law, cap, step, self.total_steps) if cap else 0.0

    def slot_left(self) -> float:
        """Seconds a slot holder still needs: from its pace since it got the slot once it has trained a
        second, else :meth:`slot_seconds`."""
        t0, step0 = self.granted
        done, elapsed = self.control.step - step0, time.monotonic() - t0
        if done > 0 and elapsed >= 1.0:
            return (self.total_steps - self.control.step) * elapsed / done
        return self.slot_seconds()

    def time_left(self) -> float | None:
        """Seconds until a running training run ends: at its throttle while it runs light (no slot),
        else at its pace since it got its slot (:meth:`slot_left`); None when it is not running."""
        if self.kind != TRAIN or self.status != "running":
            return None
        if self.light and not self.slot and self.control.max_steps_per_s:
            return self.paced_left()
        return self.slot_left()

    def snapshot(self, position: int | None, waiting: str | None = None) -> JobStatus:
        """The job as the pages see it: ``queued`` while it waits in the queue (``position``: runs
        ahead of it, ``waiting``: what it waits for), else what its worker last reported."""
        names, quick = (self.args[0], self.args[1]) if self.kind == REPRODUCE else ((), False)
        now = time.monotonic()
        end = self.finished_at if self.finished_at is not None else now
        c = self.control
        status = "queued" if position is not None else self.status
        message = waiting or (IDLE_PAUSE_NOTE if self.idle_paused and status == "paused" else self.message)
        return JobStatus(
            self.id,
            status,
            c.step,
            self.total_steps,
            position,
            message,
            c.paused,
            self.kind,
            self.owner,
            tuple(names),
            self.items_done,
            self.current,
            quick,
            round(end - self.started, 3),
            c.max_steps_per_s,
            self.slot,
            self.light and not self.slot,
            waiting,
            round(now - self.watched_at, 3),
            None if position is not None else self.time_left(),
            c.pace[0] == "story",
        )
