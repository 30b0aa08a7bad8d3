"""The run's mean-field twin (the theory lines of the token charts), computed beside the training.

Training the T → ∞ twin takes 1–3 s on 2 cores (the lecture preset's 300 steps, more under load).
Computed before the first step, as it was, it held every run back by that much: the lecture preset,
stated as 15 s at 20 steps/s, took 17 s from ▶ Start to finished.  :class:`BackgroundTwin` computes it
in a thread of the worker instead and stores it with the run's statics when done; the live charts
draw it from their next tick on.  The runner stores a final status only after :meth:`finish`.
"""

from __future__ import annotations

import logging
import threading

from engine.core.config import RunConfig
from engine.paper.meanfield import meanfield_twin
from engine.service.store import RunStore

log = logging.getLogger(__name__)


class BackgroundTwin:
    """Compute and store run ``run_id``'s mean-field twin in a thread, started at once."""

    def __init__(self, cfg: RunConfig, store: RunStore, run_id: str) -> None:
        self.cfg, self.store, self.run_id = cfg, store, run_id
        self._cancel = threading.Event()
        self._thread = threading.Thread(target=self._work, name=f"twin-{run_id}", daemon=True)
        self._thread.start()

    def _work(self) -> None:
        try:
            twin = meanfield_twin(self.cfg, cancelled=self._cancel.is_set)
            if twin is not None and not self._cancel.is_set():
                self.store.add_statics(self.run_id, twin)
        except KeyError:  # the run was deleted meanwhile: its training loop finds out by itself
            pass
        except Exception:  # only a theory line is missing: the run itself goes on
            log.exception("the mean-field twin of run %s was not stored", self.run_id)

    def finish(self, cancel: bool = False) -> None:
        """Wait until the twin is stored (``cancel``: stop computing it first; nothing is stored)."""
        if cancel:
            self._cancel.set()
        self._thread.join()
