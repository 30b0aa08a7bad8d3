"""Worker processes: every training run and every reproduction runs in a process of its own.

The server (the web process) never imports torch: it only starts workers.  They start from
:func:`worker_context`, a ``forkserver`` context whose server process has already imported the
training code (:data:`PRELOAD`, torch included), so a worker starts in milliseconds instead of the
~2 s a fresh interpreter takes to import torch.  That is also why the two entry points below import
the training code inside their bodies: this module is what the web process imports to name them.

Under Streamlit, ``sys.modules["__main__"]`` is the app script, and multiprocessing makes a child
import the parent's main module before it runs its target; ``app.py`` therefore keeps everything
under ``if __name__ == "__main__":`` (multiprocessing's "safe importing of main module" rule), so
a worker imports it as ``__mp_main__`` and nothing runs.

A worker dies with the server (:func:`die_with`): a ``kill -9`` of the server leaves no orphan
writing to the store; the run is marked ``interrupted`` when the store is next opened.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
from multiprocessing import forkserver
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from pathlib import Path

from scansnap.service.control import RunControl
from scansnap.service.run_kinds import KINDS, adopt
from scansnap.service.store import RunStore
from scansnap.service.writers import die_with

WorkerContext = ForkServerContext | SpawnContext
# torch and the trainers (each run kind's worker side), loaded once by the forkserver
PRELOAD = [
    "scansnap.service.runner",
    "torch._dynamo",  # torch.optim's first optimizer imports it: ~2 s of every text run's start otherwise
    *(k.training_module for k in KINDS.values()),
    "scansnap.service.reproduction_run",
]
_CONTEXT: WorkerContext | None = None
ROOT = str(Path(__file__).resolve().parents[2])  # the project: what a helper process imports from
CLUSTER_ENV = "SCANSNAP_CLUSTER"  # a Ray cluster's address: the dashboard's runs train there


def worker_context() -> WorkerContext:
    """``forkserver`` with the training code preloaded where the platform has it (Linux), else ``spawn``."""
    global _CONTEXT
    if _CONTEXT is None:
        if "forkserver" in mp.get_all_start_methods():
            server = mp.get_context("forkserver")
            server.set_forkserver_preload([__name__, *PRELOAD])
            _CONTEXT = server
        else:  # pragma: no cover - macOS/Windows
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def warm_up() -> None:
    """Start the fork server now (it imports torch, ~2 s) rather than on the first run.  Only a
    head start: if it fails, the first worker's start tries again and reports the error on its run."""
    if worker_context().get_start_method() == "forkserver":
        with contextlib.suppress(Exception):
            forkserver.ensure_running()


def parse_cpus(text: str) -> frozenset[int]:
    """``"0"``, ``"0,2-3"`` → the CPU numbers it names; each must exist on this machine."""
    # this machine's CPUs, not this process's affinity: the server itself may be confined elsewhere;
    # a CPU a container forbids fails the worker's start, which then reports the run 'failed' and why
    n = os.cpu_count() or 1
    allowed = f"CPU numbers from 0 to {n - 1}, comma-separated, ranges allowed (e.g. '0' or '0,2-3')"
    cpus: set[int] = set()
    try:
        for part in filter(None, (p.strip() for p in text.split(","))):
            lo, _, hi = part.partition("-")
            cpus.update(range(int(lo), int(hi or lo) + 1))
    except ValueError:
        raise ValueError(f"SCANSNAP_WORKER_CPUS={text[:40]!r} is not a CPU list: expected {allowed}") from None
    if not cpus or not all(0 <= c < n for c in cpus):
        raise ValueError(f"SCANSNAP_WORKER_CPUS={text[:40]!r} names no CPU of this machine: expected {allowed}")
    return frozenset(cpus)


def _enter(server_pid: int, torch_threads: int, cpus: frozenset[int] | None) -> None:
    """What every worker does first: die with the server, take its CPUs and torch threads.  (Not a
    lower priority: a niced worker's torch threads wait for whichever of them shares a core with a
    busier process, and a 20 s test run took over 140 s beside one busy process.)"""
    import torch  # preloaded by the fork server: already in sys.modules

    die_with(server_pid)
    if cpus:
        os.sched_setaffinity(0, cpus)
    torch.set_num_threads(torch_threads)


def train_stored_run(
    data_dir: str,
    run_id: str,
    control: RunControl,
    report: Connection,
    torch_threads: int,
    server_pid: int,
    cpus: frozenset[int] | None = None,
    park_after_s: float | None = None,
    kind_module: str | None = None,
) -> None:
    """Worker entry point: train stored run ``run_id`` (of any registered kind: ``kind_module``, the
    module of its worker side, is imported first, and its ``KIND`` registered if this process lacks it) from its
    last checkpoint, sending ``("status", status, message)`` on ``report`` after every status change
    and ``("demand", d)`` when what it asks of the scheduler changes (FULL, LIGHT, IDLE); it ends at a
    terminal status, or, paused for ``park_after_s``, after storing a checkpoint and sending
    ``("parked", step)``."""
    from scansnap.service.runner import RunJob

    try:
        _enter(server_pid, torch_threads, cpus)
        if kind_module is not None:
            adopt(kind_module)
        store = RunStore(data_dir)
        job = RunJob.resume(store, run_id, status="running")
    except Exception as e:  # nothing trained: say why, in the store if it can be reached
        message = f"the worker could not start the run: {type(e).__name__}: {e}"
        with contextlib.suppress(Exception):
            RunStore(data_dir).set_status(run_id, "failed", message)
        report.send(("status", "failed", message))
        return
    job.on_status = lambda status, message: report.send(("status", status, message))
    job.on_demand = lambda demand: report.send(("demand", demand))
    job.park_after_s, job.writer_pid = park_after_s, server_pid
    try:
        if job.run(control) == "parked":
            report.send(("parked", job.step))
    except Exception:  # the runner stored and reported 'failed' with the error
        pass
    finally:
        store.close()
        report.close()


def train_on_cluster(
    data_dir: str,
    run_id: str,
    control: RunControl,
    report: Connection,
    server_pid: int,
    park_after_s: float | None,
    address: str,
) -> None:
    """Worker entry point on a cluster: relay stored run ``run_id`` to an actor on the Ray cluster at
    ``address`` (:func:`scansnap.service.cluster.drive`): the controls to it, its rows into the store,
    its reports (as :func:`train_stored_run` sends them) to the server.  A node lost mid-run leaves the
    run ``interrupted``, resumable from its last checkpoint."""
    from scansnap.service.cluster import LOST, connect, drive

    def relay(msg: tuple) -> None:
        if msg[0] in ("status", "demand", "parked"):
            report.send(msg)

    try:
        die_with(server_pid)
        connect(address)
        with RunStore(data_dir) as store:
            status, message = drive(store, run_id, control, relay, park_after_s, writer_pid=server_pid)
        if status != "parked":  # the final status (again, where the node said it: the same values)
            report.send(("status", "interrupted" if status == LOST else status, message))
    except Exception as e:  # nothing more can train: say why, in the store if it can be reached
        message = f"the cluster at {address} could not train the run: {type(e).__name__}: {e}"
        with contextlib.suppress(Exception), RunStore(data_dir) as store:
            store.set_status(run_id, "failed", message)
        report.send(("status", "failed", message))
    finally:
        report.close()


def reproduce(
    data_dir: str,
    rid: str,
    names: list[str],
    quick: bool,
    control: RunControl,
    report: Connection,
    server_pid: int,
    cpus: frozenset[int] | None = None,
) -> None:
    """Worker entry point: run the reproduce items ``names`` and store the reproduction ``rid``,
    sending ``("item", name, items_done)`` as each item starts and ``("status", state, error)`` at
    the end (finished, stopped or failed); optimiser steps are reported through ``control``."""
    from scansnap.service.reproduction_run import run_and_store

    try:
        _enter(server_pid, 1, cpus)
        state, error = run_and_store(data_dir, rid, names, quick, control, lambda *m: report.send(("item", *m)))
    except Exception as e:  # pragma: no cover - run_and_store reports its own failures
        state, error = "failed", f"{type(e).__name__}: {e}"
    report.send(("status", state, error))
    report.close()
