"""At most a few script runs execute at once, server-wide (no streamlit here).

Many sessions share one Python process: the web server's event loop (which answers the health
check and moves every websocket message) and one script thread per session all take turns
holding the GIL (training runs in worker processes, see scansnap.service.jobs).  When twenty live areas
tick at the same moment, twenty runnable threads each get the GIL a few milliseconds at a time
and the event loop waits its turn behind all of them (measured: health answers up to 2.7 s
with 20 watchers and 2 runs).
Queued on a semaphore instead, the waiting scripts sleep without the GIL, so the event loop
only ever competes with ``size`` of them; the total work is the same.

Re-entrant per thread: a page's full run holds a slot and runs its live fragment inline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager


class RenderSlots:
    def __init__(self, size: int):
        self.size = max(1, size)
        self._sem = threading.BoundedSemaphore(self.size)
        self._held = threading.local()

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the slots for the block (immediately if this thread holds one already)."""
        if getattr(self._held, "depth", 0):
            self._held.depth += 1
            try:
                yield
            finally:
                self._held.depth -= 1
            return
        self._sem.acquire()
        self._held.depth = 1
        try:
            yield
        finally:
            self._held.depth = 0
            self._sem.release()


SLOTS = RenderSlots(int(os.environ.get("SCANSNAP_RENDER_SLOTS") or 2))
