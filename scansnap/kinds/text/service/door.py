"""The real-text kind's own methods on the facade (``LabService.door("text")``): the corpora the dashboard
offers, a visitor's upload, a corpus's facts and the attention a stored run pays to a typed sentence."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.text.science.config import TextDataConfig
from scansnap.kinds.text.service.corpora import MAX_UPLOAD_BYTES, MIN_UPLOAD_TOKENS
from scansnap.kinds.text.service.corpus_access import (
    CORPUS_DIR_ENV,
    check_dashboard_data,
    save_upload,
    wikitext_folders,
)
from scansnap.kinds.text.service.corpus_facts import corpus_facts
from scansnap.kinds.text.service.runs import SentenceMaps, sentence_maps
from scansnap.service.facade import Actor, LabService, reads, stored_config, user_errors, writes


class TextDoor:
    """What the Real text page asks of the service beyond what every kind's run has."""

    MAX_UPLOAD_BYTES = MAX_UPLOAD_BYTES  # an upload's bytes at most
    MIN_UPLOAD_TOKENS = MIN_UPLOAD_TOKENS  # an upload's words at least
    CORPUS_DIR_ENV = CORPUS_DIR_ENV  # where the operator's WikiText folders are

    def __init__(self, lab: LabService):
        self._lab = lab
        self.data_dir = lab.data_dir

    def text_corpus(self, data: TextDataConfig) -> dict[str, Any]:
        """Sizes, vocabulary and most frequent tokens of a corpus the dashboard may read."""
        with user_errors():
            return corpus_facts(self.data_dir, check_dashboard_data(data))

    @writes
    def save_upload(self, name: str, data: bytes, actor: Actor | None = None) -> str:
        """Check and keep a .txt upload (a visitor's within their share); returns the ``data.upload_name``
        that names it.  Uploads no stored run names expire first."""
        owner = actor.owner if actor is not None and not actor.operator else None
        with user_errors():
            return save_upload(self.data_dir, name, data, owner, self._lab.store.upload_names())

    def wikitext_folders(self) -> list[str]:
        """The WikiText folders the operator offers (none unless SCANSNAP_CORPUS_DIR is set)."""
        return wikitext_folders()

    @reads
    def sentence_maps(self, run_id: str, at: int, text: str) -> SentenceMaps:
        """Each layer's attention on ``text`` at the latest kept weights at or before step ``at``
        (ServiceError when the run keeps none that early, or the text has no words)."""
        stored = self._lab.stored
        with user_errors():
            kept = [s for s in stored.weight_steps(run_id) if s <= at]
            if not kept:
                raise ValueError(f"no weights kept yet at or before step {at}: they come with the first snapshot")
            info = stored.get_run(run_id)
            if info is None:
                raise KeyError(f"no run {run_id!r}")
            return sentence_maps(stored.kept_weights(run_id, kept[-1]), stored_config(info), kept[-1], text)
