"""Short full collections in a long-lived server process (no streamlit here).

A full (generation-2) pass of Python's garbage collector traverses every tracked object while it
holds the GIL, so the web server's event loop (which answers ``/_stcore/health`` and moves every
websocket message) waits for it.  Most of those objects come from imports (Streamlit, Plotly,
pandas, the app's own modules) and live as long as the process.  ``gc.freeze()`` moves every object
tracked now into a permanent generation that later passes skip: the server (server.py) calls
:func:`start` once its modules are imported, and after a script run that imported more,
:func:`freeze_imports` collects the garbage there is and freezes the rest.  The cost: what a freeze
keeps that later becomes garbage in a reference cycle is never freed (a few pages' first runs).
Processes that do not call :func:`start` (AppTest's, the CLI's) never freeze.  Measured under
the lecture-hall load test (bench/load_test.py, 150 sessions): BENCHMARKS.md, "Load: full
collections"."""

from __future__ import annotations

import gc
import sys
import threading

_lock = threading.Lock()
_enabled = False  # set by start(): only the server's process freezes
_modules_frozen = 0  # len(sys.modules) at the last freeze


def start() -> None:
    """Freeze from now on, in this process (the server's, once it imported what its pages need), and now."""
    global _enabled
    _enabled = True
    freeze_imports()


def freeze_imports() -> bool:
    """Collect, then freeze every tracked object, when modules were imported since the last freeze
    (a handful of times per process, on the first visits to its pages); whether it froze."""
    global _modules_frozen
    if not _enabled or len(sys.modules) == _modules_frozen:
        return False
    with _lock:
        if len(sys.modules) == _modules_frozen:
            return False
        _modules_frozen = len(sys.modules)
        gc.collect()
        gc.freeze()
    return True
