"""A run's statics (P(l|n), token kinds, replicas, the mean-field twin), read once for every session."""

from __future__ import annotations

import threading

import numpy as np
from cachetools import LRUCache

from engine.service.facade import TERMINAL
from ui.caches import BOUNDS_MB
from ui.resources import service

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
