"""The worker side of a real-text run (torch: imported where the run trains, by
:func:`engine.service.run_kinds.open_training`): a :class:`~engine.core.text.trainer.TextTrainer` on
the run's measured corpus, written in the text store layout of :mod:`engine.service.kinds.text.runs`."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.core.text.config import TextRunConfig
from engine.core.text.trainer import TextSnapshot, TextTrainer
from engine.service.corpus_access import measured_corpus
from engine.service.kinds.text.budget import check_text_budget
from engine.service.kinds.text.runs import store_rows, stored_maps, stored_statics
from engine.service.store import RunStore


class TextTraining:
    """A real-text run's trainer (its budget checked on the corpus as measured) and what it stores."""

    def __init__(self, cfg: TextRunConfig, store: RunStore):
        corpus = measured_corpus(store.data_dir, cfg.data)
        check_text_budget(cfg, len(corpus.vocab), len(corpus.train_ids))
        self.trainer = TextTrainer(cfg, corpus)

    def started(self, store: RunStore, run_id: str) -> None:
        """The statics, written by the worker (the same values again on a resume)."""
        store.add_statics(run_id, stored_statics(self.trainer.statics()))

    def stored(self, snap: TextSnapshot) -> tuple[dict[str, np.ndarray], Any]:
        return stored_maps(snap.arrays), store_rows(snap.scalar_rows())

    def after_first_snapshot(self, store: RunStore, run_id: str) -> None:
        """A text run has no mean-field theory lines."""
