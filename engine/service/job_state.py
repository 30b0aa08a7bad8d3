"""What one job is, on the server's side: its status as the pages see it (:class:`JobStatus`) and
its controls and last report (:class:`Job`).  The manager that runs jobs is :mod:`engine.service.jobs`."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from multiprocessing.process import BaseProcess

from engine.paper.items.costs import progress
from engine.service.control import RunControl
from engine.service.worker import worker_context

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}
TRAIN, REPRODUCE = "train", "reproduce"


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

    @property
    def fraction(self) -> float:
        """Progress in [0, 1]: of a training run, by optimiser steps; of a reproduction, by its estimated
        seconds (:func:`engine.paper.items.costs.progress`: its items differ a hundredfold in seconds per
        step, so its steps said 88 % after 20 s of 75)."""
        if self.status == "finished":
            return 1.0
        if self.kind == REPRODUCE:
            return progress(self.items, self.quick, self.items_done, self.step)
        return min(1.0, self.step / self.total_steps) if self.total_steps > 0 else 0.0


class Job:
    """The server's side of one job: its controls, what its worker last reported, its supervisor."""

    def __init__(
        self, job_id: str, kind: str, total_steps: int, step: int, owner: str | None, args: tuple, seconds: float = 0
    ):
        self.id, self.kind, self.owner, self.total_steps = job_id, kind, owner, total_steps
        self.seconds = seconds  # estimated training seconds of the whole job (limits.estimated_seconds)
        self.args = args  # the worker's arguments after (data_dir, id); see _worker_args
        self.control = RunControl(worker_context())
        self.control.report_step(step)
        self.status = "queued"
        self.message: str | None = None
        self.items_done, self.current = 0, None
        self.thread: threading.Thread | None = None  # the supervisor, alive while the worker lives
        self.process: BaseProcess | None = None
        self.ended = False
        self.started: float = time.monotonic()
        self.finished_at: float | None = None

    def release_control(self) -> None:
        """Swap the shared control of an ended job for an in-process one with the same step: the
        shared one holds named semaphores (in /dev/shm), freed once nothing refers to it."""
        released = RunControl()
        released.report_step(self.control.step)
        self.control = released  # swapped whole: a reader sees the old control or the new one

    def snapshot(self, position: int | None) -> JobStatus:
        names, quick = (self.args[0], self.args[1]) if self.kind == REPRODUCE else ((), False)
        end = self.finished_at if self.finished_at is not None else time.monotonic()
        c = self.control
        return JobStatus(
            self.id, self.status, c.step, self.total_steps, position, self.message, c.paused, self.kind,
            self.owner, tuple(names), self.items_done, self.current, quick, round(end - self.started, 3),
            c.max_steps_per_s,
        )  # fmt: skip
