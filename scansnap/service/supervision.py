"""One job's worker process, seen from the server: start it, mirror what it reports into the job, and
tell the manager when it ends (:mod:`scansnap.service.jobs` owns the jobs; this is one supervisor thread's
work).

A worker reports ``("status", status, message)`` after each status change, ``("demand", d)`` when
what it asks of the scheduler changes (:data:`~scansnap.service.scheduling.FULL`, ``LIGHT``, ``IDLE``),
``("parked", step)`` before it ends as a paused run with its checkpoint stored, and, for a
reproduction, ``("item", name, items_done)``.  A worker that ends without a final status and
without parking (killed, out of memory) leaves its run ``interrupted`` (a reproduction ``failed``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scansnap.service.job_state import IDLE_PAUSE_NOTE, REPRODUCE, TERMINAL, TRAIN, Job
from scansnap.service.store import StoreError
from scansnap.service.worker import reproduce, train_on_cluster, train_stored_run, worker_context

if TYPE_CHECKING:
    from scansnap.service.jobs import JobManager


def supervise(m: JobManager, j: Job) -> None:
    """Run ``j``'s worker to its end (the body of the job's supervisor thread)."""
    try:
        ctx = worker_context()
        receive, send = ctx.Pipe(duplex=False)
        target, args = _worker_args(m, j, send)
        j.process = ctx.Process(target=target, args=args, name=f"{j.kind}-{j.id}", daemon=True)
        j.process.start()
        send.close()  # the worker holds the only writing end: its exit reads as EOF here
        with receive:
            _mirror(m, j, receive)
        j.process.join()
        code = j.process.exitcode
        j.process.close()  # its pipes to the fork server (2 fds) would stay open for the server's life
        if j.status not in TERMINAL and not j.parked:
            m.set_job_status(j, *_lost(j, code))
    except Exception as e:  # e.g. no process could be started: say so on the run
        m.set_job_status(j, "failed", f"could not run the worker: {type(e).__name__}: {e}")
    finally:
        m.worker_ended(j)


def _worker_args(m: JobManager, j: Job, send: Any) -> tuple[Callable[..., None], tuple]:
    data_dir, me = str(m.store.data_dir.resolve()), os.getpid()
    if j.kind == TRAIN and m.cluster:
        return train_on_cluster, (data_dir, j.id, j.control, send, me, m.limits.park_after_s, m.cluster)
    if j.kind == TRAIN:  # args: the module of the run kind's worker side
        return train_stored_run, (
            data_dir,
            j.id,
            j.control,
            send,
            m.torch_threads,
            me,
            m.worker_cpus,
            m.limits.park_after_s,
            *j.args,
        )
    names, quick = j.args
    return reproduce, (data_dir, j.id, names, quick, j.control, send, me, m.worker_cpus)


def _mirror(m: JobManager, j: Job, receive: Any) -> None:
    while True:
        try:
            kind, *rest = receive.recv()
        except EOFError:
            return
        with m.changed:
            if kind == "status":
                j.status, j.message = rest
                if rest[0] == "paused" and j.idle_paused:  # the worker stored no reason: the server's note
                    with contextlib.suppress(StoreError, KeyError):
                        m.store.set_status(j.id, "paused", IDLE_PAUSE_NOTE)
            elif kind == "demand":
                m.want(j, rest[0])
            elif kind == "parked":
                j.parked = True
            elif kind == "item":
                j.current, j.items_done = rest
            m.changed.notify_all()


def _lost(j: Job, code: int | None) -> tuple[str, str]:
    if j.kind == REPRODUCE:
        return "failed", f"the worker process ended (exit code {code}) before the reproduction was stored"
    return "interrupted", (
        f"the worker process ended (exit code {code}) without finishing the run, at step {j.control.step}; "
        "snapshots up to the last checkpoint are intact: resume or re-run it"
    )
