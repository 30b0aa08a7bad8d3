"""Background training jobs, shared by every dashboard session (one process-wide manager).

Each run trains in its own worker process (:mod:`engine.service.worker`), not in a thread of the web
server.  Measured (bench/ui_throughput.py, BENCHMARKS.md): with worker threads, a run watched in
a browser trained at ~0.8 of its headless speed, because the page scripts redrawing the live
charts and the server's event loop shared the GIL with the training thread.  A process has its
own interpreter: with training on a core of its own, a watched run now trains at 0.98 of its
headless speed.  The costs, kept small: a worker
is forked from a fork server that has already imported torch (milliseconds, not the ~2 s of a
fresh interpreter; the fork server starts when the manager does), and the controls cross the
process boundary as shared memory (:class:`~engine.service.runner.RunControl` built on the worker
context) plus a pipe for status changes, read by one supervisor thread per job.

At most ``max_concurrent`` jobs train at once (default: the number of cores); the rest wait in
a FIFO queue with a visible position.  torch's intra-op threads per worker are set so that
concurrent jobs do not oversubscribe the CPU.  A worker that dies without a final status (out
of memory, killed) leaves its run ``interrupted``, resumable from its last checkpoint; the
server keeps serving.  ``shutdown()`` stops and joins every worker (a torch thread alive at
interpreter exit aborts the process), and it runs at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess

import torch

from engine.core.config import RunConfig
from engine.service.runner import RunControl, RunJob
from engine.service.store import RunStore, StoreError
from engine.service.worker import parse_cpus, start_without_main, train_stored_run, warm_up, worker_context

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}


@dataclass(frozen=True)
class JobStatus:
    run_id: str
    status: str  # queued, running, paused, finished, stopped, diverged, failed, interrupted
    step: int
    total_steps: int
    queue_position: int | None  # runs ahead of this one, when queued
    message: str | None
    pause_requested: bool = False  # the Pause button was pressed (the worker may not have noticed yet)


class _Job:
    """The server's side of one job: its controls, what its worker last reported, its supervisor."""

    def __init__(self, run_id: str, total_steps: int, step: int, owner: str | None):
        self.run_id = run_id
        self.total_steps = total_steps
        self.owner = owner
        self.control = RunControl(worker_context())
        self.control.report_step(step)
        self.status = "queued"
        self.message: str | None = None
        self.thread: threading.Thread | None = None  # the supervisor, alive while the worker lives
        self.process: BaseProcess | None = None
        self.ended = False

    def release_control(self) -> None:
        """Swap the shared control of an ended job for an in-process one with the same step: the
        shared one holds named semaphores (in /dev/shm), freed once nothing refers to it."""
        released = RunControl()
        released.report_step(self.control.step)
        self.control = released  # swapped whole: a reader sees the old control or the new one


class JobManager:
    def __init__(
        self,
        store: RunStore,
        max_concurrent: int | None = None,
        max_per_owner: int = 2,
        worker_cpus: frozenset[int] | None = None,
    ):
        """``worker_cpus``: the CPUs every worker runs on (default: any), e.g. to keep training off the
        cores that serve pages; torch threads per worker are then divided among those."""
        self.store = store
        self.max_concurrent = max(1, max_concurrent or os.cpu_count() or 1)
        self.max_per_owner = max_per_owner
        self.worker_cpus = worker_cpus
        self.torch_threads = max(1, (len(worker_cpus) if worker_cpus else os.cpu_count() or 1) // self.max_concurrent)
        self._jobs: dict[str, _Job] = {}
        self._queue: deque[str] = deque()
        self._lock = threading.RLock()
        self._closed = False
        torch.set_num_threads(self.torch_threads)  # for the server's own work (building a run's statics)
        threading.Thread(target=warm_up, name="worker-warm-up", daemon=True).start()

    # ----------------------------------------------------------------- submit
    def submit(self, cfg: RunConfig, name: str | None = None, owner: str | None = None, paused: bool = False) -> str:
        """Create the run (status ``queued``) and start it when a slot is free; returns its id.

        Raises RuntimeError when ``owner`` already has ``max_per_owner`` unfinished runs."""
        return self._enqueue(lambda: RunJob(cfg, self.store, name=name, owner=owner, status="queued"), owner, paused)

    def resume_stored(self, run_id: str, owner: str | None = None) -> str:
        """Continue a stored run that is not live (e.g. ``interrupted``) from its last checkpoint."""
        if self.is_live(run_id):
            raise RuntimeError(f"run {run_id} is already training")
        return self._enqueue(lambda: RunJob.resume(self.store, run_id, status="queued"), owner, False)

    def _enqueue(self, make: Callable[[], RunJob], owner: str | None, paused: bool) -> str:
        """``make`` validates the config and writes the run to the store (its worker continues it
        from there); the trainer it builds is dropped here."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the job manager is shut down")
            if owner is not None and self._owner_active(owner) >= self.max_per_owner:
                raise RuntimeError(
                    f"you already have {self.max_per_owner} runs queued or training: stop one or wait for it to finish"
                )
            made = make()
            j = _Job(made.run_id, made.cfg.optim.steps, made.step, owner)
            del made
            if paused:
                j.control.pause()
            self._jobs[j.run_id] = j
            self._queue.append(j.run_id)
            self._start_waiting()
            return j.run_id

    def _owner_active(self, owner: str) -> int:
        return sum(1 for j in self._jobs.values() if j.owner == owner and j.status not in TERMINAL)

    def _running_count(self) -> int:
        return sum(1 for j in self._jobs.values() if j.thread is not None and not j.ended)

    def _start_waiting(self) -> None:
        with self._lock:
            while self._queue and self._running_count() < self.max_concurrent:
                j = self._jobs[self._queue.popleft()]
                if j.control.stop_event.is_set():
                    self._set_status(j, "stopped", "stopped while queued")
                    j.release_control()
                    continue
                j.status = "running"  # what its worker reports first (the store learns it from the worker)
                j.thread = threading.Thread(target=self._supervise, args=(j,), name=f"train-{j.run_id}", daemon=True)
                j.thread.start()

    def _supervise(self, j: _Job) -> None:
        """Start the job's worker process, mirror the status changes it reports, and, when it
        ends without a final status (killed, out of memory), mark its run ``interrupted``."""
        try:
            ctx = worker_context()
            receive, send = ctx.Pipe(duplex=False)
            j.process = ctx.Process(
                target=train_stored_run,
                name=f"train-{j.run_id}",
                daemon=True,
                args=(
                    str(self.store.data_dir.resolve()),
                    j.run_id,
                    j.control,
                    send,
                    self.torch_threads,
                    os.getpid(),
                    self.worker_cpus,
                ),
            )
            start_without_main(j.process)
            send.close()  # the worker holds the only writing end: its exit reads as EOF here
            with receive:
                while True:
                    try:
                        j.status, j.message = receive.recv()
                    except EOFError:
                        break
            j.process.join()
            code = j.process.exitcode
            j.process.close()  # its pipes to the fork server (2 fds) would stay open for the server's life
            if j.status not in TERMINAL:
                self._set_status(
                    j,
                    "interrupted",
                    f"the worker process ended (exit code {code}) without finishing "
                    f"the run, at step {j.control.step}; snapshots up to the last checkpoint are "
                    "intact: resume or re-run it",
                )
        except Exception as e:  # e.g. no process could be started: say so on the run
            self._set_status(j, "failed", f"could not run the worker: {type(e).__name__}: {e}")
        finally:
            j.release_control()
            j.ended = True
            self._start_waiting()

    def _set_status(self, j: _Job, status: str, message: str | None) -> None:
        """Set a status the server decides (not the worker's): in the store if it can, then in memory
        (so whoever sees the new status in memory finds it stored too)."""
        with contextlib.suppress(StoreError):
            self.store.set_status(j.run_id, status, message)
        j.status, j.message = status, message

    # ----------------------------------------------------------------- controls
    def _get(self, run_id: str) -> _Job:
        with self._lock:
            if run_id not in self._jobs:
                raise KeyError(f"no live job {run_id!r}")
            return self._jobs[run_id]

    def pause(self, run_id: str) -> None:
        self._get(run_id).control.pause()

    def resume(self, run_id: str) -> None:
        self._get(run_id).control.resume()

    def step(self, run_id: str, n: int) -> None:
        """Let a paused run take ``n`` more steps."""
        c = self._get(run_id).control
        c.pause()
        c.grant_steps(n)

    def stop(self, run_id: str) -> None:
        self._get(run_id).control.stop()
        with self._lock:
            if run_id in self._queue:
                self._queue.remove(run_id)
                self._set_status(self._jobs[run_id], "stopped", "stopped while queued")
                self._jobs[run_id].release_control()

    def set_speed(self, run_id: str, steps_per_s: float | None) -> None:
        self._get(run_id).control.max_steps_per_s = steps_per_s

    def is_live(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._jobs and self._jobs[run_id].status not in TERMINAL

    def status(self, run_id: str) -> JobStatus | None:
        with self._lock:
            j = self._jobs.get(run_id)
            if j is None:
                return None
            pos = list(self._queue).index(run_id) if run_id in self._queue else None
            return JobStatus(run_id, j.status, j.control.step, j.total_steps, pos, j.message, j.control.paused)

    def active(self) -> list[str]:
        with self._lock:
            return [rid for rid, j in self._jobs.items() if j.status not in TERMINAL]

    def worker_pids(self) -> list[int]:
        """Process ids of the workers alive now."""
        with self._lock:
            return [
                pid
                for j in self._jobs.values()
                if not j.ended and j.process is not None and (pid := _pid_of(j.process)) is not None
            ]

    def wait(self, run_id: str, timeout: float | None = None) -> str:
        """Block until the run ends (or the timeout passes); returns its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            j = self._get(run_id)
            if j.status in TERMINAL:
                return j.status
            if deadline is not None and time.monotonic() > deadline:
                return j.status
            time.sleep(0.02)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every job and join every worker (one that does not stop within ``timeout`` is killed)."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
            self._queue.clear()
        for j in jobs:
            j.control.stop()
        for j in jobs:
            if j.thread is not None:
                j.thread.join(timeout)
                if j.thread.is_alive() and j.process is not None and _pid_of(j.process) is not None:
                    with contextlib.suppress(ValueError, OSError):  # it may end (and be closed) meanwhile
                        j.process.kill()
                    j.thread.join(timeout)
            if j.status == "queued":
                self._set_status(j, "stopped", "server shut down before the run started")
                j.release_control()


def _pid_of(process: BaseProcess) -> int | None:
    """The pid of a started, not yet closed process (None before its start or after its close)."""
    try:
        return process.pid
    except ValueError:  # closed
        return None


_MANAGERS: dict[str, JobManager] = {}
_MANAGERS_LOCK = threading.Lock()


def get_manager(data_dir: str | None = None, max_concurrent: int | None = None) -> JobManager:
    """The process-wide manager for a data directory (created once; shut down at exit)."""
    store = RunStore(data_dir)
    key = str(store.data_dir)
    with _MANAGERS_LOCK:
        if key not in _MANAGERS:
            env = os.environ.get("SCANSNAP_MAX_JOBS")
            cpus = os.environ.get("SCANSNAP_WORKER_CPUS")
            _MANAGERS[key] = JobManager(
                store, max_concurrent or (int(env) if env else None), worker_cpus=parse_cpus(cpus) if cpus else None
            )
        return _MANAGERS[key]


@atexit.register
def _shutdown_all() -> None:
    for m in list(_MANAGERS.values()):
        m.shutdown()
