"""The real-text kind: a small transformer trained on a corpus (the Real text page's runs)."""

from __future__ import annotations

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.service.corpus_access import check_dashboard_data
from scansnap.kinds.text.service.runs import TEXT, check_text_run, text_seconds
from scansnap.service.kinds import RunKind


def _offered_corpus(cfg: TextRunConfig) -> TextRunConfig:
    """A real-text run from the dashboard reads only the corpora it offers (:func:`check_dashboard_data`)."""
    return cfg.model_copy(update={"data": check_dashboard_data(cfg.data)})


KIND = RunKind(
    TEXT,
    TextRunConfig,
    text_seconds,
    "scansnap.kinds.text.service.training:TextTraining",
    "scansnap.kinds.text.service.export:export_text_run",
    check=check_text_run,
    default_name="text run",
    admit=_offered_corpus,
    export_size="scansnap.kinds.text.service.export:export_size",
    tables="scansnap.kinds.text.service.export:table",
    table_names=("scalars",),
    verdicts="scansnap.kinds.text.service.export:layer_readings",
    item_data="scansnap.kinds.text.service.corpora:encoded_corpus",
    run_files="scansnap.kinds.text.service.corpus_access:run_files",
    door="scansnap.kinds.text.service.door:TextDoor",
    summary="scansnap.kinds.text.service.commands:summary",
)
