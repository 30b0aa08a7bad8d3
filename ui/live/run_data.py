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
    """A run's statics, kept once complete (the mean-field twin and Theorem 4's overlay are added after
    the run's first step)."""
    with _STATICS_LOCK:
        found = _STATICS.get(run_id)
    if found is not None:
        return found
    arrays = service().stored.statics(run_id)
    info = service().run(run_id)
    if {"mf_steps", "theory_step"} <= arrays.keys() or (info is not None and info["status"] in TERMINAL):
        with _STATICS_LOCK:
            _STATICS[run_id] = arrays
    return arrays
