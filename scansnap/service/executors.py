"""Where stored runs train: an executor trains runs that are already stored (created, and checked
against the limits, by the caller, as the dashboard's job manager does) and yields each one's final
status as it comes.  ``local`` (the default) is a pool of this machine's processes, started by the
fork server as the dashboard's workers are; a Ray cluster by address (``HOST:6379``, ``auto``)
trains each run as an actor on any of its nodes and streams its rows back to this process, which
alone writes the store (:mod:`scansnap.service.cluster`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import Any, Protocol

from scansnap.service.worker import worker_context

Outcome = tuple[int, str, str, str | None]  # (index in the caller's list, run id, final status, message)


class Executor(Protocol):
    slots: int  # how many runs train at once

    def train_runs(self, data_dir: str, run_ids: Iterable[str]) -> Iterator[Outcome]:
        """Train each stored run from its last checkpoint to its end; each outcome as soon as it is known."""

    def close(self) -> None: ...


def _init_worker(threads: int) -> None:
    import torch

    torch.set_num_threads(threads)


def train_stored(index: int, data_dir: str, run_id: str) -> Outcome:
    """Worker side of one stored run: train it to its end in this process."""
    from scansnap.service.runner import RunJob
    from scansnap.service.store import RunStore

    store = RunStore(data_dir)
    try:
        job = RunJob.resume(store, run_id, status="running")
        status = job.run()
        return index, run_id, status, job.message
    finally:
        store.close()


class LocalExecutor:
    """``slots`` worker processes on this machine (default: one per CPU core this process may use),
    each with ``cores // slots`` torch threads."""

    def __init__(self, slots: int | None = None):
        cores = len(os.sched_getaffinity(0))
        self.slots = max(1, slots or cores)
        ctx = worker_context()  # the one fork server of this process, with the workers' preload
        threads = max(1, cores // self.slots)
        self._pool = ProcessPoolExecutor(self.slots, mp_context=ctx, initializer=_init_worker, initargs=(threads,))

    def train_runs(self, data_dir: str, run_ids: Iterable[str]) -> Iterator[Outcome]:
        futures = [self._pool.submit(train_stored, i, data_dir, rid) for i, rid in enumerate(run_ids)]
        for f in as_completed(futures):
            yield f.result()

    def map(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        """``fn`` over ``items`` in the pool's processes (``fn`` and the items picklable); results in order."""
        return self._pool.map(fn, items)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


def executor(where: str | None = None, slots: int | None = None) -> Executor:
    """The local pool (``where`` None or ``local``), else the Ray cluster at address ``where``."""
    if where in (None, "local"):
        return LocalExecutor(slots)
    from scansnap.service.cluster import RayExecutor, check_address

    return RayExecutor(check_address(where))
