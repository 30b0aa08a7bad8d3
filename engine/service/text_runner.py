"""Where real-text training meets storage (torch: imported by the worker process and the command line).

:class:`TextRunJob` is a :class:`~engine.service.runner.RunJob` with a
:class:`~engine.core.text.trainer.TextTrainer`: the same controls (pause, stop, step N, speed:
``RunJob._advance_to``), the same statuses, checkpoints and resume, and the text store layout of
:mod:`engine.service.text_runs` for what it writes.
"""

from __future__ import annotations

import time

from engine.core.device import describe_device
from engine.core.text.config import TextRunConfig
from engine.core.text.trainer import TextSnapshot, TextTrainer
from engine.service.corpus_access import measured_corpus
from engine.service.runner import RunDeletedError, RunJob
from engine.service.store import RunStore
from engine.service.text_budget import check_text_budget
from engine.service.text_runs import create_text_run, store_rows, stored_maps, stored_statics


class TextRunJob(RunJob):
    """One real-text run: a text trainer plus its row in the store (created here, or, with
    ``resume_id``, an existing run continued from its last checkpoint)."""

    CONFIG = TextRunConfig

    def __init__(
        self,
        cfg: TextRunConfig,
        store: RunStore,
        name: str | None = None,
        owner: str | None = None,
        status: str = "running",
        resume_id: str | None = None,
    ):
        self.cfg, self.store = cfg, store  # type: ignore[assignment]
        corpus = measured_corpus(store.data_dir, cfg.data)
        self.estimate = check_text_budget(cfg, len(corpus.vocab), len(corpus.train_ids))  # type: ignore[assignment]
        self.trainer = TextTrainer(cfg, corpus)  # type: ignore[assignment]
        self.device = describe_device(self.trainer.device)
        self.status, self.message = status, None
        self.on_status = None
        self._last_checkpoint = time.monotonic()
        self.run_id = resume_id or create_text_run(store, cfg, name, owner, status)
        store.set_device(self.run_id, self.device)
        store.add_statics(self.run_id, stored_statics(self.trainer.statics()))  # the same values again on a resume
        if resume_id is not None:
            self._restore(resume_id, status)

    def _append(self, snap: TextSnapshot, checkpoint: bool) -> None:  # type: ignore[override]
        try:
            self.store.append_snapshot(
                self.run_id,
                snap.step,
                stored_maps(snap.arrays),
                store_rows(snap.scalar_rows()),
                checkpoint=self.trainer.checkpoint() if checkpoint else None,
            )
        except KeyError as e:
            raise RunDeletedError(self.run_id) from e

    def _store_meanfield_twin(self) -> None:
        """A text run has no mean-field theory lines."""
