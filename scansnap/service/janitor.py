"""The job manager's janitor: a thread that, once a second, pauses the runs no page has shown for
``SCANSNAP_IDLE_PAUSE_S`` (so an abandoned run gives its slot back), and every few seconds marks
``interrupted`` the live runs of this host whose writer died outside the manager (a command-line run
killed by a signal writes no final status; without this only a restart would notice)."""

from __future__ import annotations

import contextlib
import time
from typing import TYPE_CHECKING

from scansnap.service.job_state import TERMINAL, TRAIN, Job
from scansnap.service.store import StoreError

if TYPE_CHECKING:
    from scansnap.service.jobs import JobManager

JANITOR_S = 1.0  # how often it looks for unwatched runs
DEAD_WRITER_S = 5.0  # how often it looks for dead writers


def abandoned(j: Job, idle_pause_s: float, now: float) -> bool:
    """A live training run that wants to compute and that no page has shown for ``idle_pause_s``."""
    if j.kind != TRAIN or j.ended or j.status in TERMINAL or not j.control.wants_steps():
        return False
    return now - j.watched_at > idle_pause_s


def run_janitor(m: JobManager) -> None:
    """The janitor's loop; it ends when the manager shuts down."""
    checked = time.monotonic()
    while not m.stopping.wait(JANITOR_S):
        for job_id in m.unwatched():
            with contextlib.suppress(KeyError):  # ended meanwhile
                m.idle_pause(job_id)
        if time.monotonic() - checked >= DEAD_WRITER_S:
            checked = time.monotonic()
            with contextlib.suppress(StoreError):
                m.store.recover_interrupted(keep=m.active())
