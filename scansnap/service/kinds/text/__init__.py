"""The real-text kind: a small transformer trained on a corpus (the Real text page's runs)."""

from __future__ import annotations

from scansnap.core.text.config import TextRunConfig
from scansnap.service.corpus_access import check_dashboard_data
from scansnap.service.kinds import RunKind
from scansnap.service.kinds.text.runs import TEXT, check_text_run, text_seconds


def _offered_corpus(cfg: TextRunConfig) -> TextRunConfig:
    """A real-text run from the dashboard reads only the corpora it offers (:func:`check_dashboard_data`)."""
    return cfg.model_copy(update={"data": check_dashboard_data(cfg.data)})


TEXT_KIND = RunKind(
    TEXT,
    TextRunConfig,
    text_seconds,
    "scansnap.service.kinds.text.training:TextTraining",
    "scansnap.service.kinds.text.export:export_text_run",
    check=check_text_run,
    default_name="text run",
    admit=_offered_corpus,
    export_size="scansnap.service.kinds.text.export:export_size",
    tables="scansnap.service.kinds.text.export:table",
    table_names=("scalars",),
    verdicts="scansnap.service.kinds.text.export:layer_readings",
)
