"""The one job manager: background training runs and reproductions, shared by every dashboard session.

Each job runs in a worker process of its own (:mod:`scansnap.service.worker`), never in the web server
(a run watched in a browser trained at 0.8 of its headless speed in a thread, 0.98 in a process:
bench/ui_throughput.py).  The server's side of a job is its controls (shared memory,
:class:`~scansnap.service.control.RunControl`) and a supervisor thread reading what the worker reports;
every change of a job's state notifies :attr:`JobManager.changed` (:meth:`JobManager.wait` blocks on it).

Training runs: *slots* bound the runs that compute at once, not the runs that exist
(:mod:`scansnap.service.scheduling`).  At most ``max_concurrent`` runs hold a slot (default: the number of
cores); the rest wait in a FIFO queue that tells each its position, what it waits for and for about how
long.  A paused run gives its slot back at once; its worker stores a checkpoint and ends after
``SCANSNAP_PARK_S`` (it resumes from there, bit for bit, in a new worker).  A run throttled to a
lecture's pace, computing a sliver of a core, runs without a slot.  A run no page has shown for
``SCANSNAP_IDLE_PAUSE_S`` pauses itself (the *janitor*, which also marks ``interrupted`` the runs of
this host whose writer died outside this manager, e.g. a killed command-line run).  A worker that dies
without a final status (out of memory, killed) leaves its run ``interrupted``, resumable from its last
checkpoint.  Reproductions: one at a time per manager, outside the slots; starting one while another
runs returns the running one.  ``shutdown()`` stops and joins every worker; it runs at exit.
``SCANSNAP_CLUSTER=ADDRESS``: each run's worker relays it to a Ray cluster (:mod:`scansnap.service.cluster`),
whose CPUs are the slots and whose nodes' memory the per-run budget (asked again every minute:
:mod:`scansnap.service.cluster_watch` tells them); everything else works as here.  Reproductions stay on this machine.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable
from multiprocessing.process import BaseProcess
from typing import Any

from scansnap.paper.items.catalog import check_items, total_work
from scansnap.paper.items.costs import estimated_seconds as reproduction_seconds
from scansnap.service import budget, cluster_watch
from scansnap.service.cluster_watch import Capacity, ask
from scansnap.service.job_state import IDLE_PAUSE_NOTE, REPRODUCE, TERMINAL, TRAIN, Job, JobStatus, Schedule
from scansnap.service.limits import Limits, check_visitor_disk, check_visitor_run
from scansnap.service.pacing import Speed
from scansnap.service.reproductions import new_id
from scansnap.service.run_kinds import (
    create_run,
    kind_named,
    kind_of,
    run_disk_bytes,
    run_seconds,
    stored_config,
    stored_cost,
)
from scansnap.service.scheduling import FULL, IDLE, Scheduler
from scansnap.service.store import RunStore, StoreError, stopped_message
from scansnap.service.worker import (
    CLUSTER_ENV,
    parse_cpus,
    reproduce,
    train_on_cluster,
    train_stored_run,
    warm_up,
    worker_context,
)

JANITOR_S = 1.0  # how often the janitor looks for unwatched runs
DEAD_WRITER_S = 5.0  # how often it looks for dead writers
LOG = logging.getLogger(__name__)


class JobManager:
    def __init__(
        self,
        store: RunStore,
        max_concurrent: int | None = None,
        limits: Limits | None = None,
        worker_cpus: frozenset[int] | None = None,
        cluster: str | None = None,
    ):
        """``worker_cpus``: the CPUs every worker runs on (default: any), e.g. to keep training off the
        cores that serve pages; torch threads per worker are then divided among those.  ``cluster``: a
        Ray cluster's address (every run trains there; the slots default to its CPUs)."""
        self.store = store
        self.cluster = cluster
        capacity = ask(cluster) if cluster else None
        own = len(os.sched_getaffinity(0))  # the CPUs this server may use (taskset, a container's cpuset)
        slots = max_concurrent or (capacity.cpus if capacity else own)
        self.max_concurrent = max(1, slots)  # the training slots
        self.limits = limits or Limits()
        self.worker_cpus = worker_cpus
        cpus = len(worker_cpus) if worker_cpus else own
        self.torch_threads = max(1, cpus // self.max_concurrent)
        self._jobs: dict[str, Job] = {}
        self.scheduler = Scheduler(self.max_concurrent, self._jobs, self._launch, self._drop)
        self.changed = threading.Condition(threading.RLock())  # notified on every change of a job's state
        self._closed = False
        self.stopping = threading.Event()  # set at shutdown: the janitor ends
        threading.Thread(target=warm_up, name="worker-warm-up", daemon=True).start()
        threading.Thread(target=self._janitor, name="job-janitor", daemon=True).start()
        if capacity is not None:  # the cluster's slots and memory budget, asked again now and then
            self.use_capacity(capacity, fixed_slots=True)  # asked before the scheduler was made
            fixed = max_concurrent is not None
            threading.Thread(target=self._watch_cluster, args=(fixed,), name="cluster-watch", daemon=True).start()

    # ----------------------------------------------------------------- submit
    def submit(
        self,
        cfg: Any,
        name: str | None = None,
        owner: str | None = None,
        paused: bool = False,
        limited: bool = False,
    ) -> str:
        """Create the run and queue it for a training slot (``paused``: create it paused, holding
        nothing, until :meth:`resume` or :meth:`step`); returns its id.

        Raises RuntimeError when ``owner`` already has its quota of live runs, or, when ``limited`` (a
        visitor), when the run asks for more steps than a visitor may or the server's queue would grow
        past its limit (:class:`~scansnap.service.limits.Limits`); estimated outside the lock."""
        return self.submit_grid([cfg], [name], owner, limited, paused)[0]

    def submit_grid(
        self,
        cfgs: list[Any],
        names: list[str | None],
        owner: str | None = None,
        limited: bool = False,
        paused: bool = False,
    ) -> list[str]:
        """:meth:`submit` for every run of a grid, all or nothing (each checked against the limits before
        any is stored; a visitor's grid must fit the queue limit whole); the grid counts as one of
        ``owner``'s runs.  Returns the run ids."""
        seconds = [run_seconds(self.store.data_dir, cfg) for cfg in cfgs]
        disks = [run_disk_bytes(self.store.data_dir, cfg) for cfg in cfgs]  # each checked against the limits
        with self.changed:
            self._admit(owner, limited, max(cfg.optim.steps for cfg in cfgs), sum(seconds), disk=sum(disks))
            status = "paused" if paused else "queued"
            ids = [create_run(self.store, cfg, name, owner, status) for cfg, name in zip(cfgs, names, strict=True)]
            for rid, cfg, s, disk in zip(ids, cfgs, seconds, disks, strict=True):
                job = self._jobs[rid] = Job(rid, TRAIN, cfg.optim.steps, 0, owner, (kind_of(cfg).training_module,), s)
                job.group, job.disk = ids[0], disk
                self._start_or_park(job, paused)
            return ids

    def _start_or_park(self, j: Job, paused: bool) -> None:
        if paused:
            j.control.pause()
            j.status, j.paused_at = "paused", time.monotonic()
        else:
            self.want(j, FULL)

    def queued_seconds(self) -> float:
        """Estimated slot seconds the server holds for its live jobs (:meth:`_committed`): what a new
        visitor's run is admitted against."""
        with self.changed:
            return self._committed()

    def _committed(self, without: Job | None = None) -> float:
        """Slot seconds held for every live job but ``without``: a training run's from the moment it exists
        until it ends, whatever its state (queued, training, light or paused; a dormant pause excepted:
        :meth:`Job.dormant`), and a running reproduction's (the caller holds the lock)."""
        now, idle = time.monotonic(), self.limits.idle_pause_s
        live = (j for j in self._jobs.values() if j is not without and not j.ended and j.status not in TERMINAL)
        return sum(j.claim_seconds() for j in live if not j.dormant(idle, now))

    def _admit(
        self, owner: str | None, limited: bool, steps: int, seconds: float, job: Job | None = None, disk: float = 0.0
    ) -> None:
        """The one admission rule, on every path that adds work (a new run or grid, a resume, more steps, a
        faster speed, a stored run's resume, a visitor's reproduction): the manager is open, ``owner`` is
        within its live runs (``job``'s own not counted), and a visitor's (``limited``) ``steps`` and
        ``seconds`` fit the limits beside what the server holds for the other jobs, and the ``disk`` bytes it
        will store fit beside what the owner's runs store and will store (caller holds the lock)."""
        self._check_open(owner, job)
        if limited:
            check_visitor_run(self.limits, steps, seconds, self._committed(job))
            if owner is not None:
                check_visitor_disk(self.limits, self._owner_disk(owner, job), disk)

    def _owner_disk(self, owner: str, without: Job | None = None) -> float:
        """Bytes the owner's runs store now, and what their live runs (``without`` not counted) will still
        add: each one's disk estimate times its share of steps to go."""
        live = (j for j in self._jobs.values() if j.owner == owner and j is not without and j.status not in TERMINAL)
        return self.store.owner_bytes(owner) + sum(j.disk * j.remaining_fraction() for j in live)

    def _readmit(self, j: Job, limited: bool) -> None:
        """:meth:`_admit` for a live job that asks to compute again (its owner's quota, its remaining work)."""
        if limited:
            steps = j.total_steps if j.kind == TRAIN else 0
            self._admit(j.owner, True, steps, j.claim_seconds(), j, j.disk * j.remaining_fraction())

    def resume_stored(self, run_id: str, owner: str | None = None, limited: bool = False) -> str:
        """Continue a stored run that is not live (e.g. ``interrupted``) from its last checkpoint, admitted
        like a new run for the work it has left (:meth:`_admit`)."""
        with self.changed:
            if self.is_live(run_id):
                raise RuntimeError(f"run {run_id} is already training")
            info = self.store.get_run(run_id)
            if info is None:
                raise KeyError(f"no stored run {run_id!r}")
            steps, seconds = stored_cost(self.store.data_dir, info)
            disk = run_disk_bytes(self.store.data_dir, stored_config(info))
            left = 1 - min(info["last_step"] or 0, steps) / max(steps, 1)
            self._admit(owner, limited, steps, seconds * left, disk=disk * left)
            self.store.set_status(run_id, "queued", None)
            module = kind_named(info["kind"]).training_module
            job = self._jobs[run_id] = Job(run_id, TRAIN, steps, info["last_step"] or 0, owner, (module,), seconds)
            job.disk = disk
            self._start_or_park(job, False)
            return run_id

    def start_reproduction(
        self, items: list[str] | None = None, quick: bool = False, owner: str | None = None, limited: bool = False
    ) -> str:
        """Start a reproduction of ``items`` (None/empty: all) and return its id; while one runs,
        start nothing and return the running one's id.  Its estimated seconds
        (:func:`~scansnap.paper.items.costs.estimated_seconds`) count in the queue until it ends, and a
        visitor's (``limited``) must fit it (:meth:`_admit`).  Unknown items raise ValueError."""
        names = check_items(items)
        with self.changed:
            if self._closed:
                raise RuntimeError("the job manager is shut down")
            running = self.running_reproduction()
            if running is not None:
                return running.run_id
            seconds = reproduction_seconds(names, quick)
            if limited:
                check_visitor_run(self.limits, 0, seconds, self._committed())
            job = Job(new_id(), REPRODUCE, total_work(names, quick), 0, owner, (names, quick))
            job.seconds = seconds
            self._jobs[job.id] = job
            self._launch(job)
            return job.id

    def _check_open(self, owner: str | None, job: Job | None = None) -> None:
        if self._closed:
            raise RuntimeError("the job manager is shut down")
        if owner is not None and self._owner_active(owner, job) >= self.limits.max_per_owner:
            raise RuntimeError(
                f"you already have {self.limits.max_per_owner} runs queued, training or paused: stop one or wait "
                "for it to finish (SCANSNAP_MAX_PER_OWNER)"
            )

    def _owner_active(self, owner: str, job: Job | None = None) -> int:
        """The owner's live runs, a grid's counted once (``job``'s own run or grid not counted)."""
        mine = job.group or job.id if job is not None else None
        live = (j for j in self._jobs.values() if j.kind == TRAIN and j.owner == owner and j.status not in TERMINAL)
        return len({j.group or j.id for j in live} - {mine})

    # ----------------------------------------------------------------- scheduling
    def want(self, j: Job, demand: str) -> None:
        """``j`` asks for a slot, to run light, or for nothing (:meth:`Scheduler.want`)."""
        with self.changed:
            self.scheduler.want(j, demand)
            self.changed.notify_all()

    def _launch(self, j: Job) -> None:
        self.set_job_status(j, "running", None)  # stored too: not paused or queued while its worker starts
        j.parked, j.worker_alive = False, True
        j.thread = threading.Thread(target=self._supervise, args=(j,), name=f"{j.kind}-{j.id}", daemon=True)
        j.thread.start()
        self.changed.notify_all()

    def _supervise(self, j: Job) -> None:
        """Run ``j``'s worker to its end (the body of the job's supervisor thread)."""
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
            if j.status not in TERMINAL and not j.parked:
                self.set_job_status(j, *lost(j, code))
        except Exception as e:  # e.g. no process could be started: say so on the run
            self.set_job_status(j, "failed", f"could not run the worker: {type(e).__name__}: {e}")
        finally:
            self.worker_ended(j)

    def _worker_args(self, j: Job, send: Any) -> tuple[Callable[..., None], tuple]:
        """The worker's entry function and its arguments: a run here or on the cluster, or a reproduction."""
        data_dir, me = str(self.store.data_dir.resolve()), os.getpid()
        if j.kind == TRAIN and self.cluster:
            return train_on_cluster, (data_dir, j.id, j.control, send, me, self.limits.park_after_s, self.cluster)
        if j.kind == TRAIN:  # args: the module of the run kind's worker side
            park = self.limits.park_after_s
            return train_stored_run, (
                data_dir,
                j.id,
                j.control,
                send,
                self.torch_threads,
                me,
                self.worker_cpus,
                park,
                *j.args,
            )
        names, quick = j.args
        return reproduce, (data_dir, j.id, names, quick, j.control, send, me, self.worker_cpus)

    def _mirror(self, j: Job, receive: Any) -> None:
        """What the worker reports, into the job: its status, its demand on the scheduler, parked, its item."""
        while True:
            try:
                kind, *rest = receive.recv()
            except EOFError:
                return
            with self.changed:
                if kind == "status":
                    j.status, j.message = rest
                    if rest[0] == "paused" and j.idle_paused:  # the worker stored no reason: the server's note
                        with contextlib.suppress(StoreError, KeyError):
                            self.store.set_status(j.id, "paused", IDLE_PAUSE_NOTE)
                elif kind == "demand":
                    self.want(j, rest[0])
                elif kind == "parked":
                    j.parked = True
                elif kind == "item":
                    j.current, j.items_done = rest
                self.changed.notify_all()

    def _drop(self, j: Job) -> None:
        """End a job stopped while it waited for a slot (also by a shutdown)."""
        step = j.control.step
        when = f"at step {step}" if step else "before the run started"
        why = "the server shut down" if self._closed else "stopped"
        self._end_without_worker(j, "stopped", f"{why} {when}, while it waited for a slot")

    def _end_without_worker(self, j: Job, status: str, message: str) -> None:
        """End a job that has no worker (queued, or parked): its status, stored, and nothing held."""
        self.scheduler.release(j)
        j.light = False
        self.set_job_status(j, status, message)
        j.release_control()
        j.ended, j.finished_at = True, time.monotonic()

    def worker_ended(self, j: Job) -> None:
        """A worker is gone: a terminal job frees everything; a parked one keeps its place (and, if it was
        resumed or stepped while it parked, asks for a slot again)."""
        with self.changed:
            j.worker_alive = False
            self.scheduler.release(j)
            j.light = False
            if j.status in TERMINAL:
                j.release_control()
                j.ended, j.finished_at = True, time.monotonic()
            else:  # parked: it holds nothing until it is resumed (or, resumed meanwhile, asks again)
                j.control.set_slot(False, False)
                self.scheduler.want(j, Scheduler.demand_now(j))
            self.scheduler.assign()
            self.changed.notify_all()

    def set_job_status(self, j: Job, status: str, message: str | None) -> None:
        """Set a status the server decides (not the worker's): in the store if it can, then in memory
        (so whoever sees the new status in memory finds it stored too)."""
        if j.kind == TRAIN:
            with contextlib.suppress(StoreError, KeyError):
                self.store.set_status(j.id, status, message)
        with self.changed:
            j.status, j.message = status, message
            self.changed.notify_all()

    def _janitor(self) -> None:
        """Pause the runs no page shows and mark ``interrupted`` this host's runs whose writer died, until
        the manager shuts down."""
        checked = time.monotonic()
        while not self.stopping.wait(JANITOR_S):
            for job_id in self.unwatched():
                with contextlib.suppress(KeyError):  # ended meanwhile
                    self.idle_pause(job_id)
            if time.monotonic() - checked >= DEAD_WRITER_S:
                checked = time.monotonic()
                with contextlib.suppress(StoreError):
                    self.store.recover_interrupted(keep=self.active())

    def use_capacity(self, cap: Capacity, fixed_slots: bool) -> None:
        """Use the cluster's ``cap``: the budget of the next run checked, and the slots unless the operator
        fixed them."""
        budget.CLUSTER.run_mb = cap.run_mb
        if not fixed_slots and cap.cpus != self.scheduler.slots:
            with self.changed:
                LOG.info("the Ray cluster now has %d CPUs (was %d): as many slots", cap.cpus, self.scheduler.slots)
                self.max_concurrent = cap.cpus
                self.scheduler.resize(cap.cpus)
                self.changed.notify_all()

    def _watch_cluster(self, fixed_slots: bool) -> None:
        """Ask the cluster again every :data:`~scansnap.service.cluster_watch.CHECK_S` until the manager
        shuts down; an unreachable cluster keeps the last answer."""
        assert self.cluster is not None
        while not self.stopping.wait(cluster_watch.CHECK_S):
            try:
                self.use_capacity(ask(self.cluster), fixed_slots)
            except (ValueError, json.JSONDecodeError) as e:
                LOG.warning("the Ray cluster did not say its capacity: %s (the last answer stays)", e)

    def unwatched(self) -> list[str]:
        """The live runs that want to compute and that no page has shown for the idle limit."""
        with self.changed:
            now = time.monotonic()
            return [i for i, j in self._jobs.items() if abandoned(j, self.limits.idle_pause_s, now)]

    def idle_pause(self, job_id: str) -> None:
        """Pause a run nobody watches (it gives its slot back); it says why until it is resumed."""
        j = self._get(job_id)
        with self.changed:
            j.idle_paused = True
            self.pause(job_id)
            if not j.has_worker:
                with contextlib.suppress(StoreError, KeyError):
                    self.store.set_status(job_id, "paused", IDLE_PAUSE_NOTE)

    def watch(self, job_id: str) -> None:
        """A page shows this run now (the idle pause counts from the last call)."""
        with self.changed:
            j = self._jobs.get(job_id)
            if j is not None:
                j.watched_at = time.monotonic()

    # ----------------------------------------------------------------- controls
    def _get(self, job_id: str) -> Job:
        with self.changed:
            if job_id not in self._jobs:
                raise KeyError(f"no live job {job_id!r}")
            return self._jobs[job_id]

    def pause(self, job_id: str) -> None:
        """Pause: the run gives its slot back as soon as its worker stops (at once if it has none)."""
        j = self._get(job_id)
        with self.changed:
            j.control.pause()
            if j.status in TERMINAL:
                return
            j.paused_at = time.monotonic()
            if not j.has_worker:  # queued or parked: nothing to wait for
                self.scheduler.want(j, IDLE)
                self.set_job_status(j, "paused", None)
            elif not j.control.wants_steps() and not j.slot:
                self.scheduler.release(j)  # a worker waiting for a slot stops waiting; it reports IDLE itself
            self.changed.notify_all()

    def resume(self, job_id: str, limited: bool = False) -> None:
        """Resume a paused run (a visitor's, ``limited``, admitted again: :meth:`_readmit`)."""
        j = self._get(job_id)
        with self.changed:
            self._readmit(j, limited)
            j.control.resume()
            self._woken(j)

    def step(self, job_id: str, n: int, limited: bool = False) -> None:
        """Let a paused run take ``n`` more steps (a visitor's, ``limited``, admitted again)."""
        j = self._get(job_id)
        with self.changed:
            self._readmit(j, limited)
            j.control.pause()
            j.control.grant_steps(n)
            self._woken(j)

    def _woken(self, j: Job) -> None:
        """Resumed or stepped: a run without a worker asks for a slot now; one with a worker asks itself."""
        j.idle_paused, j.watched_at, j.paused_at = False, time.monotonic(), None
        if not j.has_worker and j.status not in TERMINAL:
            self.scheduler.want(j, Scheduler.demand_now(j))
            if j.id in self.scheduler.queue and j.status != "queued":  # (a worker says it itself: runner.py)
                self.set_job_status(j, "queued", None)
        self.changed.notify_all()

    def stop(self, job_id: str) -> None:
        j = self._get(job_id)
        j.control.stop()
        with self.changed:
            if not j.has_worker and j.status not in TERMINAL:
                if j.kind == TRAIN:  # the step its row shows (a parked run's checkpoint may lie past it)
                    with contextlib.suppress(StoreError, KeyError):
                        j.control.report_step(self.store.stopped_at(j.id))
                self._end_without_worker(j, "stopped", stopped_message(j.control.step))
                self.scheduler.assign()

    def set_speed(self, job_id: str, speed: Speed, limited: bool = False) -> None:
        """Throttle the run: steps/s, story time (:data:`~scansnap.service.pacing.STORY`) or None (none); a
        visitor's (``limited``) faster speed is admitted again (:meth:`_readmit`)."""
        j = self._get(job_id)
        with self.changed:
            if not slower(j.control.pace, speed):
                self._readmit(j, limited)
            j.control.throttle(speed, j.total_steps)
            if not j.has_worker and j.demand != IDLE:
                self.scheduler.want(j, Scheduler.demand_now(j))

    # ----------------------------------------------------------------- status
    def is_live(self, job_id: str) -> bool:
        with self.changed:
            return job_id in self._jobs and self._jobs[job_id].status not in TERMINAL

    def status(self, job_id: str) -> JobStatus | None:
        with self.changed:
            j = self._jobs.get(job_id)
            return None if j is None else self.scheduler.status(j)

    def schedule(self) -> Schedule:
        """Who holds the training slots, who runs light, who waits: the operator's view."""
        with self.changed:
            return self.scheduler.view()

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
            procs = [j.process for j in self._jobs.values() if j.has_worker and j.process is not None]
        return [pid for p in procs if (pid := _pid_of(p)) is not None]

    def wait(self, job_id: str, timeout: float | None = None) -> str:
        """Block until the job has ended (or the timeout passes); returns its status."""
        j = self._get(job_id)
        with self.changed:
            self.changed.wait_for(lambda: j.status in TERMINAL and not j.has_worker, timeout)
            return j.status

    @property
    def closed(self) -> bool:
        return self._closed

    def shutdown(self, timeout: float = 10.0) -> None:
        """Stop every job and join every worker (one that does not stop within ``timeout`` is killed);
        a run queued or parked is stored ``stopped`` (a stopped run resumes from its checkpoint)."""
        with self.changed:
            self._closed = True
            self.stopping.set()
            jobs = list(self._jobs.values())
            self.changed.notify_all()
        for j in jobs:
            j.control.stop()
        for j in jobs:
            thread = j.thread
            if thread is not None:
                thread.join(timeout)
                if thread.is_alive() and j.process is not None and _pid_of(j.process) is not None:
                    with contextlib.suppress(ValueError, OSError):  # it may end (and be closed) meanwhile
                        j.process.kill()
                    thread.join(timeout)
            with self.changed:
                if not j.has_worker and j.status not in TERMINAL:
                    self._drop(j)


def abandoned(j: Job, idle_pause_s: float, now: float) -> bool:
    """A live training run that wants to compute and that no page has shown for ``idle_pause_s``."""
    if j.kind != TRAIN or j.ended or j.status in TERMINAL or not j.control.wants_steps():
        return False
    return now - j.watched_at > idle_pause_s


def lost(j: Job, code: int | None) -> tuple[str, str]:
    """The status and message of a job whose worker ended (exit ``code``) without a final status."""
    if j.kind == REPRODUCE:
        return "failed", f"the worker process ended (exit code {code}) before the reproduction was stored"
    return "interrupted", (
        f"the worker process ended (exit code {code}) without finishing the run, at step {j.control.step}; "
        "snapshots up to the last checkpoint are intact: resume or re-run it"
    )


def slower(pace: tuple[str, float | None], speed: Speed) -> bool:
    """Whether ``speed`` computes no faster than the throttle ``pace`` (``control.pace``): a steps/s cap at
    or under the present linear cap."""
    law, cap = pace
    return isinstance(speed, int | float) and speed > 0 and law == "linear" and cap is not None and speed <= cap


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
            env, cpus = os.environ.get("SCANSNAP_MAX_JOBS"), os.environ.get("SCANSNAP_WORKER_CPUS")
            _MANAGERS[key] = JobManager(
                store,
                max_concurrent or (int(env) if env else None),
                Limits.from_env(),
                worker_cpus=parse_cpus(cpus) if cpus else None,
                cluster=os.environ.get(CLUSTER_ENV) or None,
            )
        return _MANAGERS[key]


@atexit.register
def _shutdown_all() -> None:
    for m in list(_MANAGERS.values()):
        m.shutdown()
