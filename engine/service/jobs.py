"""The one job manager: background training runs and reproductions, shared by every dashboard session.

Each job runs in a worker process of its own (:mod:`engine.service.worker`), never in the web
server: measured (bench/ui_throughput.py, BENCHMARKS.md), a run watched in a browser trained at
~0.8 of its headless speed with worker threads (the page scripts shared the GIL with training)
and at 0.98 in a process of its own.  The server's side of a job is its controls (shared memory,
:class:`~engine.service.control.RunControl`) and one supervisor thread that reads what the worker
reports through a pipe; every change of a job's state notifies :attr:`JobManager.changed`, a
condition variable that :meth:`JobManager.wait` blocks on (no polling).

Training runs: at most ``max_concurrent`` train at once (default: the number of cores); the rest
wait in a FIFO queue with a visible position.  A worker that dies without a final status (out of
memory, killed) leaves its run ``interrupted``, resumable from its last checkpoint.
Reproductions: one at a time per manager; starting one while another runs returns the running one.
``shutdown()`` stops and joins every worker; it runs at exit.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time
from collections import deque
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from typing import Any

from engine.core.config import RunConfig
from engine.core.text.config import TextRunConfig
from engine.paper.items.catalog import check_items, total_work
from engine.service.job_state import REPRODUCE, TERMINAL, TRAIN, Job, JobStatus
from engine.service.limits import Limits
from engine.service.reproductions import new_id
from engine.service.runs import create_run
from engine.service.store import RunStore, StoreError
from engine.service.text_runs import create_text_run, run_seconds, stored_cost
from engine.service.worker import parse_cpus, reproduce, train_stored_run, warm_up, worker_context


class JobManager:
    def __init__(
        self,
        store: RunStore,
        max_concurrent: int | None = None,
        limits: Limits | None = None,
        worker_cpus: frozenset[int] | None = None,
    ):
        """``worker_cpus``: the CPUs every worker runs on (default: any), e.g. to keep training off the
        cores that serve pages; torch threads per worker are then divided among those."""
        self.store = store
        self.max_concurrent = max(1, max_concurrent or os.cpu_count() or 1)
        self.limits = limits or Limits()
        self.worker_cpus = worker_cpus
        cpus = len(worker_cpus) if worker_cpus else os.cpu_count() or 1
        self.torch_threads = max(1, cpus // self.max_concurrent)
        self._jobs: dict[str, Job] = {}
        self._queue: deque[str] = deque()
        self.changed = threading.Condition(threading.RLock())  # notified on every change of a job's state
        self._closed = False
        threading.Thread(target=warm_up, name="worker-warm-up", daemon=True).start()

    # ----------------------------------------------------------------- submit
    def submit(
        self, cfg: RunConfig | TextRunConfig, name: str | None = None, owner: str | None = None,
        paused: bool = False, limited: bool = False,
    ) -> str:  # fmt: skip
        """Create the run (status ``queued``) and start it when a slot is free; returns its id.

        Raises RuntimeError when ``owner`` already has its quota of unfinished runs, or, when
        ``limited`` (a visitor, not the operator), when the run asks for more steps than a visitor may
        or the server's queue of training would grow past its limit (:class:`~engine.service.limits.Limits`).
        A real-text run (TextRunConfig) has its corpus measured and its budget checked first, outside
        the lock (the first measurement of a corpus takes about a second)."""
        seconds = run_seconds(self.store.data_dir, cfg)
        with self.changed:
            self._check_open(owner)
            if limited:
                self._check_limits(cfg.optim.steps, seconds)
            create = create_text_run if isinstance(cfg, TextRunConfig) else create_run
            run_id = create(self.store, cfg, name, owner, status="queued")  # type: ignore[arg-type]
            return self._enqueue(Job(run_id, TRAIN, cfg.optim.steps, 0, owner, (), seconds), paused)

    def queued_seconds(self) -> float:
        """Estimated training seconds still to do by the runs queued or training now."""
        with self.changed:
            live = [j for j in self._jobs.values() if j.kind == TRAIN and j.status not in TERMINAL]
            return sum(j.seconds * (1 - min(j.control.step, j.total_steps) / max(j.total_steps, 1)) for j in live)

    def _check_limits(self, steps: int, seconds: float) -> None:
        lim = self.limits
        if steps > lim.max_steps:
            raise RuntimeError(
                f"a run started from the dashboard may take at most {lim.max_steps:,} steps (SCANSNAP_MAX_STEPS); "
                f"this one asks for {steps:,}: use fewer steps"
            )
        queued = self.queued_seconds()
        if queued + seconds > lim.max_queue_s:
            raise RuntimeError(
                f"the server has about {queued / 60:.1f} min of training queued or running and this run adds "
                f"about {seconds / 60:.1f} min, over the limit of {lim.max_queue_s / 60:.0f} min "
                "(SCANSNAP_MAX_QUEUE_S): try a shorter run, or again when the queue has moved on"
            )

    def resume_stored(self, run_id: str, owner: str | None = None) -> str:
        """Continue a stored run that is not live (e.g. ``interrupted``) from its last checkpoint."""
        with self.changed:
            if self.is_live(run_id):
                raise RuntimeError(f"run {run_id} is already training")
            self._check_open(owner)
            info = self.store.get_run(run_id)
            if info is None:
                raise KeyError(f"no stored run {run_id!r}")
            steps, seconds = stored_cost(self.store.data_dir, info)
            self.store.set_status(run_id, "queued", None)
            job = Job(run_id, TRAIN, steps, info["last_step"] or 0, owner, (), seconds)
            return self._enqueue(job, False)

    def start_reproduction(self, items: list[str] | None = None, quick: bool = False, owner: str | None = None) -> str:
        """Start a reproduction of ``items`` (None/empty: all) and return its id; while one runs,
        start nothing and return the running one's id.  Unknown items raise ValueError."""
        names = check_items(items)
        with self.changed:
            if self._closed:
                raise RuntimeError("the job manager is shut down")
            running = self.running_reproduction()
            if running is not None:
                return running.run_id
            job = Job(new_id(), REPRODUCE, total_work(names, quick), 0, owner, (names, quick))
            self._jobs[job.id] = job
            self._launch(job)
            return job.id

    def _check_open(self, owner: str | None) -> None:
        if self._closed:
            raise RuntimeError("the job manager is shut down")
        if owner is not None and self._owner_active(owner) >= self.limits.max_per_owner:
            raise RuntimeError(
                f"you already have {self.limits.max_per_owner} runs queued or training: stop one or wait for it to "
                "finish (SCANSNAP_MAX_PER_OWNER)"
            )

    def _enqueue(self, job: Job, paused: bool) -> str:
        if paused:
            job.control.pause()
        self._jobs[job.id] = job
        self._queue.append(job.id)
        self._start_waiting()
        return job.id

    def _owner_active(self, owner: str) -> int:
        return sum(1 for j in self._jobs.values() if j.kind == TRAIN and j.owner == owner and j.status not in TERMINAL)

    def _running_count(self) -> int:
        return sum(1 for j in self._jobs.values() if j.kind == TRAIN and j.thread is not None and not j.ended)

    def _start_waiting(self) -> None:
        with self.changed:
            while self._queue and self._running_count() < self.max_concurrent:
                j = self._jobs[self._queue.popleft()]
                if j.control.stop_event.is_set():
                    self._set_status(j, "stopped", "stopped while queued")
                    j.release_control()
                    continue
                self._launch(j)

    def _launch(self, j: Job) -> None:
        j.status = "running"  # what its worker reports first (the store learns it from the worker)
        j.thread = threading.Thread(target=self._supervise, args=(j,), name=f"{j.kind}-{j.id}", daemon=True)
        j.thread.start()
        self.changed.notify_all()

    # ----------------------------------------------------------------- supervision
    def _worker_args(self, j: Job, send: Any) -> tuple[Callable[..., None], tuple]:
        data_dir, me = str(self.store.data_dir.resolve()), os.getpid()
        if j.kind == TRAIN:
            return train_stored_run, (data_dir, j.id, j.control, send, self.torch_threads, me, self.worker_cpus)
        names, quick = j.args
        return reproduce, (data_dir, j.id, names, quick, j.control, send, me, self.worker_cpus)

    def _supervise(self, j: Job) -> None:
        """Start the job's worker process, mirror what it reports, and, when it ends without a final
        status (killed, out of memory), mark its run ``interrupted`` (a reproduction ``failed``)."""
        try:
            ctx = worker_context()
            receive, send = ctx.Pipe(duplex=False)
            target, args = self._worker_args(j, send)
            j.process = ctx.Process(target=target, args=args, name=f"{j.kind}-{j.id}", daemon=True)
            j.process.start()
            send.close()  # the worker holds the only writing end: its exit reads as EOF here
            with receive:
                self._mirror(j, receive)
            j.process.join()
            code = j.process.exitcode
            j.process.close()  # its pipes to the fork server (2 fds) would stay open for the server's life
            if j.status not in TERMINAL:
                self._set_status(j, *self._lost(j, code))
        except Exception as e:  # e.g. no process could be started: say so on the run
            self._set_status(j, "failed", f"could not run the worker: {type(e).__name__}: {e}")
        finally:
            with self.changed:
                j.release_control()
                j.ended = True
                j.finished_at = time.monotonic()
                self.changed.notify_all()
            self._start_waiting()

    def _mirror(self, j: Job, receive: Any) -> None:
        while True:
            try:
                kind, *rest = receive.recv()
            except EOFError:
                return
            with self.changed:
                if kind == "status":
                    j.status, j.message = rest
                elif kind == "item":
                    j.current, j.items_done = rest
                self.changed.notify_all()

    def _lost(self, j: Job, code: int | None) -> tuple[str, str]:
        if j.kind == REPRODUCE:
            return "failed", f"the worker process ended (exit code {code}) before the reproduction was stored"
        return "interrupted", (
            f"the worker process ended (exit code {code}) without finishing the run, at step {j.control.step}; "
            "snapshots up to the last checkpoint are intact: resume or re-run it"
        )

    def _set_status(self, j: Job, status: str, message: str | None) -> None:
        """Set a status the server decides (not the worker's): in the store if it can, then in memory
        (so whoever sees the new status in memory finds it stored too)."""
        if j.kind == TRAIN:
            with contextlib.suppress(StoreError, KeyError):
                self.store.set_status(j.id, status, message)
        with self.changed:
            j.status, j.message = status, message
            self.changed.notify_all()

    # ----------------------------------------------------------------- controls
    def _get(self, job_id: str) -> Job:
        with self.changed:
            if job_id not in self._jobs:
                raise KeyError(f"no live job {job_id!r}")
            return self._jobs[job_id]

    def pause(self, job_id: str) -> None:
        self._get(job_id).control.pause()

    def resume(self, job_id: str) -> None:
        self._get(job_id).control.resume()

    def step(self, job_id: str, n: int) -> None:
        """Let a paused run take ``n`` more steps."""
        c = self._get(job_id).control
        c.pause()
        c.grant_steps(n)

    def stop(self, job_id: str) -> None:
        j = self._get(job_id)
        j.control.stop()
        with self.changed:
            if job_id in self._queue:
                self._queue.remove(job_id)
                self._set_status(j, "stopped", "stopped while queued")
                j.release_control()

    def set_speed(self, job_id: str, steps_per_s: float | None) -> None:
        self._get(job_id).control.max_steps_per_s = steps_per_s

    # ----------------------------------------------------------------- status
    def is_live(self, job_id: str) -> bool:
        with self.changed:
            return job_id in self._jobs and self._jobs[job_id].status not in TERMINAL

    def status(self, job_id: str) -> JobStatus | None:
        with self.changed:
            j = self._jobs.get(job_id)
            if j is None:
                return None
            return j.snapshot(list(self._queue).index(job_id) if job_id in self._queue else None)

    def running_reproduction(self) -> JobStatus | None:
        """The reproduction running now, if any."""
        with self.changed:
            j = next((j for j in self._jobs.values() if j.kind == REPRODUCE and j.status not in TERMINAL), None)
            return j.snapshot(None) if j is not None else None

    def active(self) -> list[str]:
        """Training runs queued, running or paused."""
        with self.changed:
            return [i for i, j in self._jobs.items() if j.kind == TRAIN and j.status not in TERMINAL]

    def worker_pids(self) -> list[int]:
        """Process ids of the workers alive now."""
        with self.changed:
            procs = [j.process for j in self._jobs.values() if not j.ended and j.process is not None]
        return [pid for p in procs if (pid := _pid_of(p)) is not None]

    def wait(self, job_id: str, timeout: float | None = None) -> str:
        """Block until the job has ended (or the timeout passes); returns its status."""
        j = self._get(job_id)
        with self.changed:
            self.changed.wait_for(lambda: j.status in TERMINAL and (j.ended or j.thread is None), timeout)
            return j.status

    @property
    def closed(self) -> bool:
        return self._closed

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every job and join every worker (one that does not stop within ``timeout`` is killed)."""
        with self.changed:
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
    """The process-wide manager for a data directory (created once, again after a shutdown)."""
    store = RunStore(data_dir)
    key = str(store.data_dir.resolve())
    with _MANAGERS_LOCK:
        if key not in _MANAGERS or _MANAGERS[key].closed:
            env = os.environ.get("SCANSNAP_MAX_JOBS")
            cpus = os.environ.get("SCANSNAP_WORKER_CPUS")
            _MANAGERS[key] = JobManager(
                store,
                max_concurrent or (int(env) if env else None),
                Limits.from_env(),
                worker_cpus=parse_cpus(cpus) if cpus else None,
            )
        return _MANAGERS[key]


@atexit.register
def _shutdown_all() -> None:
    for m in list(_MANAGERS.values()):
        m.shutdown()
