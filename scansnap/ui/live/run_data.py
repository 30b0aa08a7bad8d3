"""A run's statics (P(l|n), token kinds, replicas, the mean-field twin) and its history, read once for
every session."""

from __future__ import annotations

import threading
import weakref

import numpy as np
from cachetools import LRUCache

from scansnap.paper.history import RunHistory
from scansnap.service.facade import TERMINAL
from scansnap.ui.caches import BOUNDS_MB
from scansnap.ui.resources import service

STATICS_BYTES = BOUNDS_MB["run statics"] * 2**20  # the runs' statics kept in memory, server-wide
_STATICS: LRUCache[str, dict[str, np.ndarray]] = LRUCache(
    STATICS_BYTES, getsizeof=lambda a: sum(x.nbytes for x in a.values())
)
_STATICS_LOCK = threading.Lock()


def run_statics(run_id: str) -> dict[str, np.ndarray]:
    """A run's statics, kept once complete: with Theorem 4's overlay and, unless the run has ended
    (a twin may be stored a moment after its first step, or not at all), the mean-field twin."""
    with _STATICS_LOCK:
        found = _STATICS.get(run_id)
    if found is not None:
        return found
    arrays = service().stored.statics(run_id)
    info = service().run(run_id)
    ended = info is not None and info["status"] in TERMINAL
    if "theory_step" in arrays and ("mf_steps" in arrays or ended):
        with _STATICS_LOCK:
            _STATICS[run_id] = arrays
    return arrays


# one history per run, for as long as some session holds it (in its session state): a run watched by a
# hall is read from the store once per new snapshot, not once per student
_HISTORIES: weakref.WeakValueDictionary[str, RunHistory] = weakref.WeakValueDictionary()
_HISTORIES_LOCK = threading.Lock()
# one reader per run at a time, so that a long read (a big stored run opened) holds up no other run's
# watchers; a lock dropped from here while held costs one more read of the same steps, nothing else
_READERS: LRUCache[str, threading.Lock] = LRUCache(256)


def run_history(run_id: str, stored_step: int | None) -> RunHistory:
    """Run ``run_id``'s history up to ``stored_step`` (the run's ``last_step`` as the page read it: its
    snapshot and scalars are stored together), the same object for every session showing the run.  The
    store is read only when the shared history is behind ``stored_step`` (or that is unknown), by one
    session at a time, and only for the steps the history lacks (:meth:`RunHistory.extended`)."""
    found = _shared(run_id)
    if found is not None and stored_step is not None and found.last_step >= stored_step:
        return found
    with _reader(run_id):  # the sessions behind this one find its history when it is done
        found = _shared(run_id) or RunHistory(run_id)
        if stored_step is None or found.last_step < stored_step:
            found = found.extended(service().stored)
            with _HISTORIES_LOCK:
                _HISTORIES[run_id] = found
    return found


def _shared(run_id: str) -> RunHistory | None:
    with _HISTORIES_LOCK:
        return _HISTORIES.get(run_id)


def _reader(run_id: str) -> threading.Lock:
    with _HISTORIES_LOCK:
        lock = _READERS.get(run_id)
        if lock is None:
            lock = _READERS[run_id] = threading.Lock()
        return lock
