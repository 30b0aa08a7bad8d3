"""Background training jobs, shared by every dashboard session (one process-wide manager).

Runs train in worker threads (not processes): the web server and the workers share the run
store and the job controls directly, torch releases the GIL inside its kernels, and a
thread starts in milliseconds where a spawned process re-imports torch (~2 s).  The price,
measured (bench/ui_throughput.py, BENCHMARKS.md): a run watched in a browser trains at ~0.8 of
its headless speed, because the page scripts that redraw the live charts share the GIL with
the training thread; a worker process per job would lift that, at the cost of start-up time
and of controls crossing a process boundary.  At most
``max_concurrent`` jobs train at once (default: the number of cores); the rest wait in a
FIFO queue with a visible position.  torch's intra-op threads are set so that concurrent
jobs do not oversubscribe the CPU.  ``shutdown()`` stops and joins every worker (a torch
thread alive at interpreter exit aborts the process), and it runs at exit.
"""

from __future__ import annotations

import atexit
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import torch

from .config import RunConfig
from .runner import RunControl, RunJob
from .store import RunStore

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}


@dataclass(frozen=True)
class JobStatus:
    run_id: str
    status: str  # queued, running, paused, finished, stopped, diverged, failed
    step: int
    total_steps: int
    queue_position: int | None  # runs ahead of this one, when queued
    message: str | None
    pause_requested: bool = False  # the Pause button was pressed (the worker may not have noticed yet)


class _Job:
    def __init__(self, job: RunJob, control: RunControl, owner: str | None):
        self.job = job
        self.control = control
        self.owner = owner
        self.thread: threading.Thread | None = None


class JobManager:
    def __init__(self, store: RunStore, max_concurrent: int | None = None, max_per_owner: int = 2):
        self.store = store
        self.max_concurrent = max(1, max_concurrent or os.cpu_count() or 1)
        self.max_per_owner = max_per_owner
        self._jobs: dict[str, _Job] = {}
        self._queue: deque[str] = deque()
        self._lock = threading.RLock()
        self._closed = False
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // self.max_concurrent))

    # ----------------------------------------------------------------- submit
    def submit(self, cfg: RunConfig, name: str | None = None, owner: str | None = None,
               paused: bool = False) -> str:
        """Create the run (status ``queued``) and start it when a slot is free; returns its id.

        Raises RuntimeError when ``owner`` already has ``max_per_owner`` unfinished runs."""
        return self._enqueue(lambda: RunJob(cfg, self.store, name=name, owner=owner, status="queued"), owner, paused)

    def resume_stored(self, run_id: str, owner: str | None = None) -> str:
        """Continue a stored run that is not live (e.g. ``interrupted``) from its last checkpoint."""
        if self.is_live(run_id):
            raise RuntimeError(f"run {run_id} is already training")
        return self._enqueue(lambda: RunJob.resume(self.store, run_id, status="queued"), owner, False)

    def _enqueue(self, make: Callable[[], RunJob], owner: str | None, paused: bool) -> str:
        with self._lock:
            if self._closed:
                raise RuntimeError("the job manager is shut down")
            if owner is not None and self._owner_active(owner) >= self.max_per_owner:
                raise RuntimeError(f"you already have {self.max_per_owner} runs queued or training: "
                                   "stop one or wait for it to finish")
            job = make()
            control = RunControl()
            if paused:
                control.pause()
            self._jobs[job.run_id] = _Job(job, control, owner)
            self._queue.append(job.run_id)
            self._start_waiting()
            return job.run_id

    def _owner_active(self, owner: str) -> int:
        return sum(1 for j in self._jobs.values() if j.owner == owner and j.job.status not in TERMINAL)

    def _running_count(self) -> int:
        me = threading.current_thread()
        # the worker that calls this from its `finally` is still alive but no longer training
        return sum(1 for j in self._jobs.values()
                   if j.thread is not None and j.thread.is_alive() and j.thread is not me)

    def _start_waiting(self) -> None:
        with self._lock:
            while self._queue and self._running_count() < self.max_concurrent:
                run_id = self._queue.popleft()
                j = self._jobs[run_id]
                if j.control.stop_event.is_set():
                    j.job._set_status("stopped", "stopped while queued")
                    continue
                j.thread = threading.Thread(target=self._work, args=(j,), name=f"train-{run_id}", daemon=True)
                j.thread.start()

    def _work(self, j: _Job) -> None:
        try:
            j.job.run(j.control)
        except Exception:  # status 'failed' and its message are already stored by the runner
            pass
        finally:
            self._start_waiting()

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
                self._jobs[run_id].job._set_status("stopped", "stopped while queued")

    def set_speed(self, run_id: str, steps_per_s: float | None) -> None:
        self._get(run_id).control.max_steps_per_s = steps_per_s

    def is_live(self, run_id: str) -> bool:
        with self._lock:
            return run_id in self._jobs and self._jobs[run_id].job.status not in TERMINAL

    def status(self, run_id: str) -> JobStatus | None:
        with self._lock:
            j = self._jobs.get(run_id)
            if j is None:
                return None
            pos = list(self._queue).index(run_id) if run_id in self._queue else None
            return JobStatus(run_id, j.job.status, j.job.step, j.job.cfg.optim.steps, pos, j.job.message,
                             j.control.paused)

    def active(self) -> list[str]:
        with self._lock:
            return [rid for rid, j in self._jobs.items() if j.job.status not in TERMINAL]

    def wait(self, run_id: str, timeout: float | None = None) -> str:
        """Block until the run ends (or the timeout passes); returns its status."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            j = self._get(run_id)
            if j.job.status in TERMINAL:
                return j.job.status
            if deadline is not None and time.monotonic() > deadline:
                return j.job.status
            time.sleep(0.02)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every job and join every worker thread."""
        with self._lock:
            self._closed = True
            jobs = list(self._jobs.values())
            self._queue.clear()
        for j in jobs:
            j.control.stop()
        for j in jobs:
            if j.thread is not None:
                j.thread.join(timeout)
            if j.job.status == "queued":
                j.job._set_status("stopped", "server shut down before the run started")


_MANAGERS: dict[str, JobManager] = {}
_MANAGERS_LOCK = threading.Lock()


def get_manager(data_dir: str | None = None, max_concurrent: int | None = None) -> JobManager:
    """The process-wide manager for a data directory (created once; shut down at exit)."""
    store = RunStore(data_dir)
    key = str(store.data_dir)
    with _MANAGERS_LOCK:
        if key not in _MANAGERS:
            env = os.environ.get("SCANSNAP_MAX_JOBS")
            _MANAGERS[key] = JobManager(store, max_concurrent or (int(env) if env else None))
        return _MANAGERS[key]


@atexit.register
def _shutdown_all() -> None:
    for m in list(_MANAGERS.values()):
        m.shutdown()
