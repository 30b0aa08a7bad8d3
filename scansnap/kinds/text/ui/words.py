"""A real-text run's settings in words (the Compare page's legends, tables, axis titles): each config key's
label, and its corpus as one setting named as a person names it."""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any

from scansnap.kinds.text.ui.state import TEXT_KNOBS
from scansnap.ui.settings_words import flat_settings, knob_labels

CORPUS = "data.corpus"  # a real-text run's corpus, in one setting (its source, file, folder or dataset)
CORPUS_KEYS = ("data.source", "data.path", "data.hf_dataset", "data.upload_name")
BUILTIN_CORPUS = "built-in (World English Bible)"
SETTING_LABELS = {CORPUS if k == "data.source" else k: v for k, v in knob_labels(TEXT_KNOBS).items()} | {
    CORPUS: "corpus",  # the corpus takes the source knob's place (first)
    "optim.lr_attention": "attention learning rate",  # the knobs' "learning rate: embedding, decoder"
    "optim.lr_mlp": "MLP learning rate",  # holds a comma: a legend lists settings with commas
    "optim.lr_other": "embedding and decoder learning rate",
    "data.max_train_tokens": "training text cap (tokens)",
    "data.valid_fraction": "validation share",
    "model.tie_weights": "decoder tied to the embedding",
    "model.device": "device",
    "optim.momentum": "momentum",
    "optim.beta1": "Adam β1",
    "optim.beta2": "Adam β2",
    "optim.eps": "Adam ε",
    "optim.weight_decay": "weight decay",
    "optim.clip_norm": "gradient clip (norm)",
    "optim.epoch_steps": "steps per epoch",
    "probe.eval_batch": "probe streams",
    "probe.probe_window": "probe window",
    "probe.val_windows": "validation windows",
    "probe.frequent_top_n": "frequent words counted",
    "snapshots.log_count": "log-spaced snapshots",
    "snapshots.max_count": "max snapshots",
}


def corpus_words(data: dict[str, Any]) -> str:
    """A real-text run's corpus as a person names it: the uploaded file's name (without the stored
    name's content hash), the folder's name, the dataset, or the built-in corpus."""
    source = data.get("source") or "builtin"
    if source == "upload":
        name = str(data.get("upload_name") or "an upload")
        return re.sub(r"^[0-9a-f]{16}-", "", name)
    if source == "wikitext-dir":
        return PurePosixPath(str(data.get("path") or "a folder")).name or str(data.get("path"))
    if source == "huggingface":
        return str(data.get("hf_dataset"))
    return BUILTIN_CORPUS


def shown_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a person tells apart: the corpus as one setting, first."""
    data = config.get("data", {}) if isinstance(config.get("data"), dict) else {}
    flat = flat_settings(config)
    return {CORPUS: corpus_words(data)} | {k: v for k, v in flat.items() if k not in CORPUS_KEYS}
