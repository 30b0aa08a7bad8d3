"""Where training meets storage: run a config, write its snapshots to the run store.

The trainer never does I/O; :class:`RunJob` owns one trainer (of the run's kind:
:mod:`scansnap.service.run_kinds`) and one store run, advances in
short chunks (so pause/stop act within a fraction of a second), and writes every scheduled
snapshot in its own transaction.  Final statuses: finished, stopped, diverged, failed.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from contextlib import suppress
from typing import Any, Self

from scansnap.core.device import describe_device
from scansnap.core.errors import DivergedError
from scansnap.service.budget import CHECKPOINT_SECONDS  # SCANSNAP_CHECKPOINT_S
from scansnap.service.control import FULL, IDLE, LIGHT, RunControl, is_light
from scansnap.service.pacing import Anchor, pace, steps_per_s
from scansnap.service.run_kinds import create_run, kind_named, open_training
from scansnap.service.sqlite import DiskFullError, StoreError
from scansnap.service.store import RunStore, stopped_message

DISK_FULL_NOTE = "The disk filled up while this run trained: free space, then Resume from checkpoint."
CHUNK_SECONDS = 0.1  # how long the worker may train before it looks at its controls again
POLL_S = 0.05  # how often a paused run, or one waiting for a slot, looks at its controls


class RunDeletedError(Exception):
    """The run's row is gone from the store (someone deleted it while it trained)."""


class Parked(Exception):  # noqa: N818 - a state the run reaches, not an error
    """A paused run ends its worker to give the memory back; it resumes from a checkpoint at ``step``."""

    def __init__(self, step: int):
        super().__init__(step)
        self.step = step


class RunJob:
    """One run of any kind (:mod:`scansnap.service.run_kinds`): its kind's trainer plus its row in the
    store (created in the constructor, or, with ``resume_id``, an existing run continued from its last
    checkpoint)."""

    # Set by a worker process: its scheduler hears what the run needs (FULL, LIGHT, IDLE), and a run
    # paused this long ends its worker (:class:`Parked`).  Without them (the command line) it never parks.
    on_demand: Callable[[str], None] | None = None
    park_after_s: float | None = None
    writer_pid: int | None = None  # the process that keeps the run once its worker parks it (the server)
    _demand: str | None = None
    _paused_since: float | None = None
    _pace: Anchor | None = None  # the wall-clock schedule of a throttled run (scansnap/service/pacing.py)
    _twin: Any = None  # what the kind computes beside the training (the mean-field twin), until stored

    def __init__(
        self,
        cfg: Any,
        store: RunStore,
        name: str | None = None,
        owner: str | None = None,
        status: str = "running",
        resume_id: str | None = None,
    ):
        self.cfg = cfg
        self.store = store
        self.training = open_training(cfg, store)
        self.trainer = self.training.trainer
        self.device = describe_device(self.trainer.device)
        self.status = status
        self.message: str | None = None
        # called after every status change is stored (a worker process tells the server this way)
        self.on_status: Callable[[str, str | None], None] | None = None
        self._last_checkpoint = time.monotonic()
        self.run_id = resume_id or create_run(store, cfg, name, owner, status)
        store.set_device(self.run_id, self.device)
        self.training.started(store, self.run_id)
        if resume_id is not None:
            self._restore(resume_id, status)

    def _restore(self, run_id: str, status: str) -> None:
        """A resumed run: the trainer as at the last checkpoint; the snapshots after it dropped."""
        ckpt = self.store.checkpoint(run_id)
        if ckpt is not None:
            self.trainer.restore(ckpt[1], ckpt[2])
        self.store.truncate_after(run_id, self.step if ckpt is not None else -1, status=status)
        if self.step > 0:  # stopped before its twin was stored: it is computed now (at step 0, by run())
            self._store_meanfield_twin()

    @classmethod
    def resume(cls, store: RunStore, run_id: str, status: str = "running") -> Self:
        """Continue a stored run (e.g. ``interrupted``) from its last checkpoint; snapshots
        written after that checkpoint are dropped and recomputed identically."""
        run = store.get_run(run_id)
        if run is None:
            raise KeyError(f"no stored run {run_id!r}")
        return cls(kind_named(run["kind"]).config.from_json(run["config_json"]), store, status=status, resume_id=run_id)

    @property
    def step(self) -> int:
        return self.trainer.step_count

    def run(self, control: RunControl | None = None, on_snapshot: Callable[[Any], None] | None = None) -> str:
        """Train to the end (or until stopped); returns the final status, or ``"parked"`` when a paused
        run ended its worker (its checkpoint stored: it resumes exactly where it paused)."""
        control = control or RunControl()
        control.report_step(self.step)
        self._set_status("running")
        done = set(self.store.steps(self.run_id))  # non-empty only when resumed
        try:
            for target in self.trainer.schedule:
                if target < self.step or (target == self.step and target in done):
                    continue  # resumed past it
                if not self._advance_to(int(target), control):
                    self._stopped(control)
                    return self.status
                snap = self.trainer.snapshot()
                last = snap.step == self.trainer.schedule[-1]  # a finished run is never resumed: no checkpoint
                due = not last and time.monotonic() - self._last_checkpoint > CHECKPOINT_SECONDS
                self._append(snap, due)
                if due:
                    self._last_checkpoint = time.monotonic()
                if on_snapshot:
                    on_snapshot(snap)
                if snap.step == 0:
                    self._store_meanfield_twin()
        except Parked as p:
            if self._twin is not None:  # not stored yet: the resumed run computes it again
                self._twin.finish(cancel=True)
                self._twin = None
            self.store.park(self.run_id, p.step, self.trainer.checkpoint(), self.writer_pid or os.getpid())
            self.status = "paused"
            return "parked"
        except DivergedError as e:
            self._set_status("diverged", str(e))
            return self.status
        except RunDeletedError:  # someone deleted the run while it trained: nothing more to write
            self._set_status("stopped", "the run was deleted while it trained")
            return self.status
        except DiskFullError as e:  # nothing is lost: it resumes from its last checkpoint once there is space
            with suppress(StoreError):  # a full disk may refuse the row's update too: the server is told
                self._set_status("interrupted", f"{DISK_FULL_NOTE} {e}")
            return self.status
        except Exception as e:
            self._set_status("failed", f"{type(e).__name__}: {e}")
            raise
        self._set_status("finished")
        return self.status

    def _stopped(self, control: RunControl) -> None:
        """Stopped (between two snapshots, or at one): the step it reached is its row's
        (:meth:`RunStore.stopped_at`: the steps after its last snapshot are not kept), and its control
        (its job's status) and its message say that step too."""
        step = self.step
        with suppress(KeyError):  # deleted meanwhile: the step trained is all there is to say
            step = self.store.stopped_at(self.run_id)
        control.report_step(step)
        self._set_status("stopped", stopped_message(step))

    def _append(self, snap: Any, checkpoint: bool) -> None:
        """One snapshot (and, if due, the training state) in one transaction; a run that vanished from
        the store (deleted while it trained) raises :class:`RunDeletedError`."""
        arrays, scalars = self.training.stored(snap)
        try:
            self.store.append_snapshot(
                self.run_id, snap.step, arrays, scalars, checkpoint=self.trainer.checkpoint() if checkpoint else None
            )
        except KeyError as e:
            raise RunDeletedError(self.run_id) from e

    def _store_meanfield_twin(self) -> None:
        """Once per run, after its first snapshot is stored (so the first chart does not wait for it):
        what the kind computes beside the training; ``finished`` is stored once it is stored."""
        if self._twin is None:
            self._twin = self.training.after_first_snapshot(self.store, self.run_id)

    def _advance_to(self, target: int, control: RunControl) -> bool:
        """Step until ``target``, honouring stop/pause/throttle and the scheduler's slot; False when stopped.
        A paused run gives its slot back at once, and its worker after :attr:`park_after_s` (:class:`Parked`)."""
        chunk = 1
        while self.step < target:
            if control.stop_event.is_set():
                return False
            if not control.wants_steps():
                self._idle(control)
                continue
            self._paused_since = None
            if not self._may_compute(control, control.max_steps_per_s):
                self._pace = None  # waiting for a slot ends the schedule: the next chunk begins a new one
                if self.status != "queued":
                    self._set_status("queued")  # the store says so too (the Runs list, other processes)
                control.stop_event.wait(POLL_S)  # a stop ends the wait; a slot is looked for again after it
                continue
            n = control.allowance(min(chunk, target - self.step))
            if n == 0:
                continue
            if self.status != "running":
                self._set_status("running")
            t0 = time.perf_counter()
            self.trainer.advance(n)
            control.report_step(self.step)
            dt = time.perf_counter() - t0
            self._measure(control, dt / n)
            law, cap = control.pace  # read once: set_speed(None) may land during the sleep
            # throttled: wait until the step reached is due on the wall-clock schedule (snapshot writes included)
            self._pace, wait = pace(self._pace, cap, (t0, self.step - n), time.perf_counter(), self.step, law)
            if cap:
                control.stop_event.wait(wait)  # a stop cuts the throttle sleep short
                chunk = max(1, int(steps_per_s(law, cap, self.step) * CHUNK_SECONDS))
            else:  # size the next chunk from the n steps actually taken, not from the chunk asked for
                chunk = max(1, min(10_000, int(n * CHUNK_SECONDS / max(dt, 1e-6)))) if dt > 0 else n * 2
        return True

    def _idle(self, control: RunControl) -> None:
        """Paused with no step to take: say so once (the scheduler takes the slot back) and, after
        :attr:`park_after_s` of it, end the worker (:class:`Parked`)."""
        self._pace = None  # a pause ends the schedule: the next chunk begins a new one
        if self.status != "paused":
            self._set_status("paused")
        self._tell_demand(IDLE)
        now = time.monotonic()
        self._paused_since = self._paused_since or now
        if self.park_after_s is not None and now - self._paused_since >= self.park_after_s:
            raise Parked(self.step)
        control.stop_event.wait(POLL_S)

    def _may_compute(self, control: RunControl, cap: float | None) -> bool:
        """A run computes while it holds a slot, or, throttled to a sliver of a core, while the
        scheduler lets it run light; otherwise it tells the scheduler what it needs and waits."""
        light = is_light(cap, control.step_s, self._demand == LIGHT)
        self._tell_demand(LIGHT if light else FULL)
        return control.has_slot or (light and control.light_ok)

    def _measure(self, control: RunControl, step_s: float) -> None:
        """Compute seconds per step, smoothed (what decides whether a throttled run is light)."""
        prev = control.step_s
        control.report_step_s(step_s if prev is None else 0.8 * prev + 0.2 * step_s)

    def _tell_demand(self, demand: str) -> None:
        """Tell the scheduler (once per change) whether the run needs a slot, runs light or idles."""
        if demand != self._demand:
            self._demand = demand
            if self.on_demand is not None:
                self.on_demand(demand)

    def _set_status(self, status: str, message: str | None = None) -> None:
        """Store the status (unless the run was deleted), then report it (a worker tells the server).
        A final status first ends the mean-field twin: a finished run waits until it is stored; any other
        stops computing it, so Stop acts at once (a resumed run computes it again)."""
        if self._twin is not None and status in ("finished", "stopped", "diverged", "failed", "interrupted"):
            self._twin.finish(cancel=status != "finished")
            self._twin = None
        self.status, self.message = status, message
        try:
            with suppress(KeyError):  # a deleted run has no row left to update; the report still goes out
                self.store.set_status(self.run_id, status, message)
        finally:  # (a full disk may refuse the row's update: the server still hears it)
            if self.on_status is not None:
                self.on_status(status, message)
