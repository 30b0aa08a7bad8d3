"""One training job in its own process (the dashboard's workers; see :mod:`engine.service.jobs`).

The server creates the run in the store, then starts :func:`train_stored_run` in a process
from :func:`worker_context`: a ``forkserver`` context whose server process has already
imported this module (torch included), so a worker starts in milliseconds instead of the
~2 s a ``spawn`` re-import takes.  The worker opens the store itself, continues the run
from the store (a new run has no checkpoint: it starts at step 0), and trains it with the
:class:`~engine.service.runner.RunControl` the server shares with it.  It reports its status
changes through a pipe and its step through the control; the run store stays the record.

A worker dies with the server (:func:`die_with`): a ``kill -9`` of the server leaves no
orphan writing to the store, the run is marked ``interrupted`` when the store is next
opened, and the fork server, once its last worker is gone, exits too.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import select
import signal
import threading
import time
from multiprocessing import spawn
from multiprocessing.connection import Connection
from multiprocessing.context import ForkServerContext, SpawnContext
from multiprocessing.process import BaseProcess
from typing import Any

import torch

from engine.service.runner import RunControl, RunJob
from engine.service.store import RunStore, pid_alive

WorkerContext = ForkServerContext | SpawnContext
_CONTEXT: WorkerContext | None = None


def worker_context() -> WorkerContext:
    """The multiprocessing context workers start from: ``forkserver`` with this module
    preloaded where the platform has it (Linux), else ``spawn``."""
    global _CONTEXT
    if _CONTEXT is None:
        if "forkserver" in mp.get_all_start_methods():
            server = mp.get_context("forkserver")
            server.set_forkserver_preload([__name__])
            _CONTEXT = server
        else:  # pragma: no cover - macOS/Windows
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


_START_LOCK = threading.Lock()


def start_without_main(process: BaseProcess) -> None:
    """``process.start()``, without the child re-running the parent's ``__main__``.

    multiprocessing tells a child to re-import the parent's main module before it unpickles its
    target.  Under Streamlit ``sys.modules["__main__"]`` is the app script itself (the script
    runner installs it so), so every worker would run ``app.py`` (Streamlit, the UI, a second job
    manager) before training.  A worker's target lives in this module, which the fork server has
    preloaded: the main module is left out of what the child is told to prepare."""
    with _START_LOCK:  # the stdlib's function is swapped for the duration of one start
        real = spawn.get_preparation_data

        def without_main(name: str) -> dict[str, Any]:
            data = real(name)
            data.pop("init_main_from_path", None)
            data.pop("init_main_from_name", None)
            return data

        spawn.get_preparation_data = without_main
        try:
            process.start()
        finally:
            spawn.get_preparation_data = real


def warm_up() -> None:
    """Start the fork server now (it imports torch, ~2 s) rather than on the first run.  Only a
    head start: if it fails, the first worker's start tries again and reports the error on its run."""
    if worker_context().get_start_method() == "forkserver":
        from multiprocessing import forkserver

        with contextlib.suppress(Exception):
            forkserver.ensure_running()


def die_with(server_pid: int) -> None:
    """SIGKILL this process as soon as process ``server_pid`` ends (a daemon thread waits on a
    pidfd, which a reused pid cannot fool; where there is none, it polls the pid every 0.5 s)."""

    def watch() -> None:
        try:
            fd = os.pidfd_open(server_pid)
        except (AttributeError, OSError):  # pragma: no cover - not Linux ≥ 5.3
            while pid_alive(server_pid):
                time.sleep(0.5)
        else:
            select.select([fd], [], [])
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="die-with-server", daemon=True).start()


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
        raise ValueError(f"SCANSNAP_WORKER_CPUS={text!r} is not a CPU list: expected {allowed}") from None
    if not cpus or not all(0 <= c < n for c in cpus):
        raise ValueError(f"SCANSNAP_WORKER_CPUS={text!r} names no CPU of this machine: expected {allowed}")
    return frozenset(cpus)


def train_stored_run(
    data_dir: str,
    run_id: str,
    control: RunControl,
    report: Connection,
    torch_threads: int,
    server_pid: int,
    cpus: frozenset[int] | None = None,
) -> None:
    """Worker entry point: train stored run ``run_id`` to its end, sending ``(status, message)``
    on ``report`` after every status change (the last one is terminal); die with ``server_pid``;
    run on ``cpus`` when given (threads started later, torch's included, inherit it)."""
    die_with(server_pid)
    try:
        if cpus:
            os.sched_setaffinity(0, cpus)
        torch.set_num_threads(torch_threads)
        store = RunStore(data_dir)
        job = RunJob.resume(store, run_id, status="running")
    except Exception as e:  # nothing trained: say why, in the store if it can be reached
        message = f"the worker could not start the run: {type(e).__name__}: {e}"
        with contextlib.suppress(Exception):
            RunStore(data_dir).set_status(run_id, "failed", message)
        report.send(("failed", message))
        return
    job.on_status = lambda status, message: report.send((status, message))
    try:
        job.run(control)
    except Exception:  # the runner stored and reported 'failed' with the error
        pass
    finally:
        store.close()
        report.close()
