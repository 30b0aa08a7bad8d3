"""Where training meets storage: run a config, write its snapshots to the run store.

The trainer never does I/O; :class:`RunJob` owns one trainer and one store run, advances in
short chunks (so pause/stop act within a fraction of a second), and writes every scheduled
snapshot in its own transaction.  Final statuses: finished, stopped, diverged, failed.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from multiprocessing.context import BaseContext
from typing import Any

from engine.core.config import RunConfig
from engine.core.device import describe_device, library_versions
from engine.core.train import DivergedError, Snapshot, Trainer
from engine.service.budget import check_budget
from engine.service.store import RunStore

CHUNK_SECONDS = 0.1  # how long the worker may train before it looks at its controls again
# Training state is saved with a snapshot at most this often (and at the end of the run).
CHECKPOINT_SECONDS = float(os.environ.get("SCANSNAP_CHECKPOINT_S", "5"))


class _Cell:
    """A plain value with ``.value``: what ``multiprocessing.RawValue`` is, inside one process."""

    __slots__ = ("value",)

    def __init__(self, value: float) -> None:
        self.value = value


class RunControl:
    """The controls of a running job (the dashboard's buttons end up here), and the step it reports.

    ``paused`` blocks training; ``grant_steps(n)`` lets a paused run take n steps;
    ``max_steps_per_s`` throttles a run so a lecture can follow it; ``step`` is the last step the
    trainer reported.  Built on threading primitives by default; ``RunControl(ctx)`` builds it on
    the multiprocessing context ``ctx`` instead, so a worker process started from that context
    sees the buttons pressed in the server and the server sees its step."""

    def __init__(self, ctx: BaseContext | None = None) -> None:
        self.stop_event: Any
        self.pause_event: Any
        self._lock: Any
        if ctx is None:
            self.stop_event, self.pause_event, self._lock = threading.Event(), threading.Event(), threading.Lock()
            self._speed: Any = _Cell(0.0)
            self._granted: Any = _Cell(0)
            self._step: Any = _Cell(0)
        else:
            self.stop_event, self.pause_event, self._lock = ctx.Event(), ctx.Event(), ctx.Lock()
            self._speed, self._granted, self._step = ctx.RawValue("d", 0.0), ctx.RawValue("q", 0), ctx.RawValue("q", 0)

    def stop(self) -> None:
        self.stop_event.set()

    def pause(self) -> None:
        self.pause_event.set()

    def resume(self) -> None:
        self.pause_event.clear()

    @property
    def paused(self) -> bool:
        return self.pause_event.is_set()

    @property
    def max_steps_per_s(self) -> float | None:
        cap = float(self._speed.value)
        return cap if cap > 0 else None

    @max_steps_per_s.setter
    def max_steps_per_s(self, cap: float | None) -> None:
        self._speed.value = float(cap) if cap else 0.0

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


class RunJob:
    """One run: a trainer plus its row in the store (created in the constructor, or, with
    ``resume_id``, an existing run continued from its last checkpoint)."""

    def __init__(
        self,
        cfg: RunConfig,
        store: RunStore,
        name: str | None = None,
        owner: str | None = None,
        status: str = "running",
        resume_id: str | None = None,
    ):
        self.cfg = cfg
        self.store = store
        self.estimate = check_budget(cfg)
        self.trainer = Trainer(cfg)
        self.device = describe_device(self.trainer.device)
        self.status = status
        self.message: str | None = None
        # called after every status change is stored (a worker process tells the server this way)
        self.on_status: Callable[[str, str | None], None] | None = None
        self._last_checkpoint = time.monotonic()
        if resume_id is None:
            self.run_id = store.create_run(
                name or cfg.name or "run",
                cfg.to_json(),
                self.device,
                library_versions(),
                owner=owner,
                statics=self.trainer.statics(),
                status=status,
            )
            return
        self.run_id = resume_id
        ckpt = store.checkpoint(resume_id)
        if ckpt is not None:
            self.trainer.restore(ckpt[1], ckpt[2])
        store.truncate_after(resume_id, self.step if ckpt is not None else -1, status=status)

    @classmethod
    def resume(cls, store: RunStore, run_id: str, status: str = "running") -> RunJob:
        """Continue a stored run (e.g. ``interrupted``) from its last checkpoint; snapshots
        written after that checkpoint are dropped and recomputed identically."""
        run = store.get_run(run_id)
        if run is None:
            raise KeyError(f"no stored run {run_id!r}")
        return cls(RunConfig.from_json(run["config_json"]), store, status=status, resume_id=run_id)

    @property
    def step(self) -> int:
        return self.trainer.step_count

    def run(self, control: RunControl | None = None, on_snapshot: Callable[[Snapshot], None] | None = None) -> str:
        """Train to the end (or until stopped); returns the final status."""
        control = control or RunControl()
        control.report_step(self.step)
        self._set_status("running")
        done = set(self.store.steps(self.run_id))  # non-empty only when resumed
        try:
            for target in self.trainer.schedule:
                if target < self.step or (target == self.step and target in done):
                    continue  # resumed past it
                if not self._advance_to(int(target), control):
                    self._set_status("stopped", f"stopped at step {self.step}")
                    return self.status
                snap = self.trainer.snapshot()
                last = snap.step == self.trainer.schedule[-1]
                due = last or time.monotonic() - self._last_checkpoint > CHECKPOINT_SECONDS
                self.store.append_snapshot(
                    self.run_id,
                    snap.step,
                    snap.arrays,
                    snap.scalar_rows(),
                    checkpoint=self.trainer.checkpoint() if due else None,
                )
                if due:
                    self._last_checkpoint = time.monotonic()
                if on_snapshot:
                    on_snapshot(snap)
        except DivergedError as e:
            self._set_status("diverged", str(e))
            return self.status
        except Exception as e:
            self._set_status("failed", f"{type(e).__name__}: {e}")
            raise
        self._set_status("finished")
        return self.status

    def _advance_to(self, target: int, control: RunControl) -> bool:
        """Step until ``target``, honouring stop/pause/throttle; False when stopped."""
        chunk = 1
        while self.step < target:
            if control.stop_event.is_set():
                return False
            n = control.allowance(min(chunk, target - self.step))
            if n == 0:
                if self.status != "paused":
                    self._set_status("paused")
                control.stop_event.wait(0.05)
                continue
            if self.status != "running":
                self._set_status("running")
            t0 = time.perf_counter()
            self.trainer.advance(n)
            control.report_step(self.step)
            dt = time.perf_counter() - t0
            cap = control.max_steps_per_s  # read once: set_speed(None) may land during the sleep
            if cap:
                control.stop_event.wait(max(0.0, n / cap - dt))  # a stop cuts the throttle sleep short
                chunk = max(1, int(cap * CHUNK_SECONDS))
            else:  # size the next chunk from the n steps actually taken, not from the chunk asked for
                chunk = max(1, min(10_000, int(n * CHUNK_SECONDS / max(dt, 1e-6)))) if dt > 0 else n * 2
        return True

    def _set_status(self, status: str, message: str | None = None) -> None:
        self.status, self.message = status, message
        self.store.set_status(self.run_id, status, message)
        if self.on_status is not None:
            self.on_status(status, message)


def run_config(
    cfg: RunConfig, store: RunStore, name: str | None = None, on_snapshot: Callable[[Snapshot], None] | None = None
) -> tuple[str, str]:
    """Run ``cfg`` to completion in this thread; returns (run_id, final status)."""
    job = RunJob(cfg, store, name=name)
    status = job.run(on_snapshot=on_snapshot)
    return job.run_id, status
