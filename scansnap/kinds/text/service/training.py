"""The worker side of a real-text run (torch: imported where the run trains, by
:func:`scansnap.service.run_kinds.open_training`): a :class:`~scansnap.kinds.text.science.trainer.TextTrainer` on
the run's measured corpus, written in the text store layout of :mod:`scansnap.kinds.text.service.runs`."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import numpy as np

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.schedule import weight_steps
from scansnap.kinds.text.science.sentence import attention_weights
from scansnap.kinds.text.science.trainer import TextSnapshot, TextTrainer
from scansnap.kinds.text.service.budget import check_text_budget
from scansnap.kinds.text.service.corpus_access import measured_corpus
from scansnap.kinds.text.service.runs import VOCAB, store_rows, stored_maps, stored_statics
from scansnap.service.store import RunStore


class TextTraining:
    """A real-text run's trainer (its budget checked on the corpus as measured) and what it stores."""

    def __init__(self, cfg: TextRunConfig, store: RunStore):
        corpus = measured_corpus(store.data_dir, cfg.data)
        v = corpus.vocab
        check_text_budget(cfg, len(v), len(corpus.train_ids), len(corpus.val_ids), v.longest_word)
        self.trainer = TextTrainer(cfg, corpus)
        self.keep = {int(s) for s in weight_steps(self.trainer.schedule)}
        self.store, self.run_id = store, ""

    def started(self, store: RunStore, run_id: str) -> None:
        """The statics, written by the worker (the same values again on a resume)."""
        self.store, self.run_id = store, run_id
        store.add_statics(run_id, stored_statics(self.trainer.statics()))

    def stored(self, snap: TextSnapshot) -> tuple[dict[str, np.ndarray], Any]:
        """The snapshot's maps and scalars; at the few steps of :func:`weight_steps`, the weights the
        attention maps depend on and the vocabulary are kept too (a typed sentence is read with them)."""
        if snap.step in self.keep:
            state = {k: v.detach().cpu().numpy() for k, v in self.trainer.model.state_dict().items()}
            vocab = np.array(self.trainer.corpus.vocab.itos, dtype=str)
            with suppress(KeyError):  # deleted while it trained: the snapshot's write says so
                self.store.save_weights(self.run_id, snap.step, {**attention_weights(state), VOCAB: vocab})
        return stored_maps(snap.arrays), store_rows(snap.scalar_rows())

    def after_first_snapshot(self, store: RunStore, run_id: str) -> None:
        """A text run has no mean-field theory lines."""
