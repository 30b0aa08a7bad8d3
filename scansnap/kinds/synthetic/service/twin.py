"""The run's mean-field twin (the theory lines of the token charts), computed beside the training.

Training the T → ∞ twin takes 0.5–3 s on 2 cores (the lecture preset's, more under load).  Computed
before the first step, as it was, it held every run back by that much: the lecture preset, stated as
15 s at 20 steps/s, took 17 s from ▶ Start to finished.  :class:`BackgroundTwin` takes it from the
twin cache (:mod:`scansnap.service.twin_cache`: every run of a preset shares one) or trains it in a thread
of the worker and stores it with the run's statics when done; the live charts draw it from their next
tick on.  The runner stores ``finished`` only after :meth:`BackgroundTwin.finish`.

The twin trains on one torch thread (``torch_threads(1)``), and torch's thread count is the process's:
a worker that trains on one thread (the dashboard's default, one slot per core) loses nothing to it, so
the twin runs beside the training; a worker on more threads trains it first, so that no step of the run
ever runs on another thread count than its uninterrupted twin's (bit for bit, docs/reproduce.md).
"""

from __future__ import annotations

import logging
import threading

import torch

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.meanfield import train_twin, twin_plan
from scansnap.service.store import RunStore
from scansnap.service.twin_cache import TwinCache, twin_key

log = logging.getLogger(__name__)


class BackgroundTwin:
    """Find or compute, then store, run ``run_id``'s mean-field twin: started at once, in a thread when
    the worker trains on one torch thread, else before the constructor returns."""

    def __init__(self, cfg: RunConfig, store: RunStore, run_id: str) -> None:
        self.cfg, self.store, self.run_id = cfg, store, run_id
        self._cancel = threading.Event()
        self._thread: threading.Thread | None = None
        if torch.get_num_threads() == 1:
            self._thread = threading.Thread(target=self._work, name=f"twin-{run_id}", daemon=True)
            self._thread.start()
        else:
            self._work()

    def _work(self) -> None:
        plan = twin_plan(self.cfg)
        if plan is None:
            return
        cache = TwinCache(self.store.data_dir)
        try:
            key = twin_key(plan.model_copy(update={"name": ""}).to_json())
            twin = cache.get(key)
            if twin is None and (twin := train_twin(plan, cancelled=self._cancel.is_set)) is not None:
                cache.put(key, twin)
            if twin is not None and not self._cancel.is_set():
                self.store.add_statics(self.run_id, twin)
        except KeyError:  # the run was deleted meanwhile: its training loop finds out by itself
            pass
        except Exception:  # only a theory line is missing: the run itself goes on
            log.exception("the mean-field twin of run %s was not stored", self.run_id)
        finally:
            cache.close()

    def finish(self, cancel: bool = False) -> None:
        """Wait until the twin is stored (``cancel``: stop computing it first; nothing is stored)."""
        if cancel:
            self._cancel.set()
        if self._thread is not None:
            self._thread.join()
