"""Which process writes a run, and whether it still lives: a run whose writer (on this host) died
without finishing it is *interrupted* (:meth:`scansnap.service.store.RunStore.recover_interrupted`);
and a worker process that dies with the server (:func:`die_with`)."""

from __future__ import annotations

import os
import select
import signal
import threading
import time
from collections.abc import Iterable

import psutil


def pid_alive(pid: int) -> bool:
    """True while process ``pid`` runs; a zombie (exited, not yet reaped by its parent) has ended."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


Row = tuple[str, int | None, int | None]  # a live run: id, its writer's pid, its last stored step


def dead_writers(rows: Iterable[Row], host: str, keep: set[str]) -> list[tuple[str, str]]:
    """(run id, why it is interrupted) for each live run ``(id, writer pid, last step)`` of this host whose
    writer is gone; ``keep``: runs a live job manager holds (their writer is this process's worker)."""
    out = []
    for rid, pid, last in rows:
        if pid is None or pid == os.getpid() or rid in keep or pid_alive(int(pid)):
            continue
        kept = f"snapshots up to step {last} are intact" if last is not None else "it had written no snapshot"
        why = f"writer process {pid} on {host} ended without finishing the run (crash, kill or power loss); {kept}"
        out.append((rid, why))
    return out


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
