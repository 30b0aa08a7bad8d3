"""Server-wide caches bounded in bytes, shared by every session (thread-safe).

Each cache is a cachetools LRU whose size is the bytes of what it holds, so memory after load stays
under the sum of these bounds however many different things students ask for (docs/operate.md,
Memory).  Sizes are estimated from numpy buffers, JSON text and plotly figures' JSON."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import plotly.graph_objects as go
from cachetools import LRUCache, cached
from cachetools.keys import hashkey

F = TypeVar("F", bound=Callable[..., Any])
BOUNDS_MB = {  # one cache per cached function (two share "theory curves": 2 × 8 MB)
    "live charts": 32,  # scansnap.kinds.synthetic.ui.live: built chart payloads (shared by a run's watchers)
    "run statics": 64,  # scansnap.kinds.synthetic.ui.live: P(l|n), token kinds, the mean-field twin
    "P previews": 16,  # scansnap.ui.page_data: the data designer's figure
    "theory curves": 8,  # scansnap.ui.page_data: the Theory page's curves (Theorem 4; JoMA)
    "compare series": 16,  # scansnap.ui.page_data: the Compare page's lines
    "reproductions": 32,  # scansnap.ui.page_data: stored reports read back
    "text charts": 32,  # scansnap.kinds.text.ui.live: the Real text page's charts and maps (shared by its watchers)
    "text statics": 4,  # scansnap.kinds.text.ui.live: a text run's probe words and reference levels
}


def nbytes(obj: Any) -> int:
    """Approximate bytes of a cached value: numpy buffers, text, plotly figures (as JSON), containers."""
    if isinstance(obj, np.ndarray):
        return int(obj.nbytes)
    if isinstance(obj, str | bytes):
        return len(obj)
    if isinstance(obj, go.Figure):
        return len(obj.to_json())
    if isinstance(obj, dict):
        return sum(nbytes(v) for v in obj.values()) + 64 * len(obj)
    if isinstance(obj, list | tuple):
        return sum(nbytes(v) for v in obj) + 8 * len(obj)
    if hasattr(obj, "__dict__"):
        return nbytes(vars(obj))
    try:
        return len(json.dumps(obj, default=str))
    except (TypeError, ValueError):
        return 64


def byte_lru(name: str, key: Callable[..., Any] = hashkey) -> Callable[[F], F]:
    """Decorate a function: its results are kept in an LRU of at most ``BOUNDS_MB[name]`` megabytes,
    one for the whole server, keyed by its (hashable) arguments or by ``key(*args)``."""
    cache: LRUCache[Any, Any] = LRUCache(BOUNDS_MB[name] * 2**20, getsizeof=nbytes)
    return cached(cache, key=key, lock=threading.Lock())  # type: ignore[return-value]
