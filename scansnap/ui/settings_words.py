"""A run's settings in words, for legends, tables and axis titles: each config key's label (its knob's,
without the gloss: ``"η_Y (decoder)"`` → ``"η_Y"``), its value as a person writes it (``0.5``, ``∞``,
``off``, never ``None``), and a name for each of several runs from the settings that differ among them
(the Compare page's legend).  No Streamlit calls, no tensors."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from scansnap.core.config import flatten_dotted
from scansnap.kinds.text.ui.state import TEXT_KNOBS
from scansnap.ui.knobs import KNOBS

KIND_WORDS = {"synthetic": "synthetic", "text": "real text"}
CORPUS = "data.corpus"  # a real-text run's corpus, in one setting (its source, file, folder or dataset)
CORPUS_KEYS = ("data.source", "data.path", "data.hf_dataset", "data.upload_name")
BUILTIN_CORPUS = "built-in (World English Bible)"
_EXTRA = {  # settings that no knob shows, by kind
    "synthetic": {
        "data.table": "P(l|n) table",
        "data.psi": "query of each next token ψ",
        "replicas.lr_pairs": "(η_Y, η_Z) pairs",
    },
    "text": {
        CORPUS: "corpus",
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
    },
}
NONE_WORDS = {  # what an unset (None) value means, by key
    "optim.clip_norm": "off",
    "data.max_train_tokens": "whole corpus",
    "optim.epoch_steps": "one pass over the corpus",
    "snapshots.linear_every": "none",
    "replicas.lr_pairs": "one pair",
    "data.table": "generated",
    "data.psi": "generated",
}
GROUP_FROM = 10_000  # integers from here on are grouped by thousands (a thin space: no comma in a list)
THIN = "\u2009"


def _gloss_cut(label: str) -> str:
    return label.split(" (")[0]


def _labels(kind: str) -> dict[str, str]:
    knobs = TEXT_KNOBS if kind == "text" else KNOBS
    own = {k.key: _gloss_cut(k.label) for k in knobs if k.key != "name"}
    if kind == "text":  # the corpus takes the source knob's place (first)
        own = {CORPUS if key == "data.source" else key: v for key, v in own.items()}
    return own | _EXTRA.get(kind, {})


LABELS = {kind: _labels(kind) for kind in KIND_WORDS}


def setting_label(key: str, kind: str = "synthetic") -> str:
    """The words for config ``key`` of a run of ``kind``: its knob's label without the gloss, else a
    label of its own, else its last part in words (``probe.eval_batch`` → ``"eval batch"``)."""
    return LABELS.get(kind, {}).get(key) or key.split(".")[-1].replace("_", " ")


def phrase(key: str, value: Any, kind: str = "synthetic") -> str:
    """One setting in words, ``"layers = 2"`` (``"seeds = 1–3"`` for several seeds)."""
    name = setting_label(key, kind)
    if key == "replicas.seeds" and isinstance(value, list | tuple) and len(value) > 1:
        name = "seeds"
    return f"{name} = {value_words(key, value)}"


def number(v: float) -> str:
    """A number as a person writes it: ``0.5``, ``2``, ``1e-8``, ``30 000`` (a thin space, no comma)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        n = int(v)
        return f"{n:,}".replace(",", THIN) if abs(n) >= GROUP_FROM else str(n)
    text = f"{v:.4g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def seeds_words(seeds: Sequence[int]) -> str:
    """``[1]`` → ``"1"``, ``[1, 2, 3]`` → ``"1–3"``, ``[1, 5, 9]`` → ``"1/5/9"``, many → ``"12 seeds"``."""
    s = list(seeds)
    if len(s) > 1 and s == list(range(s[0], s[0] + len(s))):
        return f"{s[0]}–{s[-1]}"
    return "/".join(map(str, s)) if len(s) <= 4 else f"{len(s)} seeds"


def _values_words(values: Sequence[Any]) -> str:
    nums = sorted({float(v) for v in values})
    if len(nums) == 1:
        return number(nums[0])
    return f"{number(nums[0])} to {number(nums[-1])} ({len(nums)} values)"


def value_words(key: str, value: Any) -> str:
    """A setting's value in words: numbers compact, yes/no, ∞, what an unset value means (never "None"),
    a list by its length (seeds as a range)."""
    if value is None:
        return NONE_WORDS.get(key, "not set")
    if key == "replicas.seeds" and isinstance(value, list | tuple):
        return seeds_words(value)
    if key in ("optim.eta_y", "optim.eta_z") and isinstance(value, list | tuple):
        return _values_words(value)
    if key == "data.table" and isinstance(value, list | tuple):
        return f"{len(value)} × {len(value[0]) if value else 0} table"
    if isinstance(value, bool | int | float):
        return number(value)
    if isinstance(value, list | tuple):
        if key == "replicas.lr_pairs" and len(value) == 1:
            return "(" + ", ".join(number(v) for v in value[0]) + ")"
        return f"{len(value)} values"
    if key == "data.T" and value == "inf":
        return "∞"
    return str(value)


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


def shown_settings(config: dict[str, Any], kind: str) -> dict[str, Any]:
    """A config as the settings a person tells apart (dotted keys → value), the run's name left out: a
    real-text run's corpus as one setting; a sweep's (η_Y, η_Z) pairs as its η_Y and its η_Z values."""
    flat = {k: v for k, v in flatten_dotted(config).items() if k != "name"}
    if kind == "text":
        data = config.get("data", {}) if isinstance(config.get("data"), dict) else {}
        flat = {CORPUS: corpus_words(data)} | {k: v for k, v in flat.items() if k not in CORPUS_KEYS}
    pairs = flat.get("replicas.lr_pairs")
    if kind == "synthetic" and isinstance(pairs, list | tuple) and pairs:
        flat["optim.eta_y"] = sorted({float(p[0]) for p in pairs})
        flat["optim.eta_z"] = sorted({float(p[1]) for p in pairs})
        flat.pop("replicas.lr_pairs")
    return flat


def differing(settings: Sequence[dict[str, Any]], kind: str) -> list[str]:
    """The keys whose value differs among ``settings``, the knobs' order first (what a person sets
    first: the data, the model, the optimiser), then the others by key."""
    keys = {k for s in settings for k in s}
    differ = {k for k in keys if len({json.dumps(s.get(k), sort_keys=True, default=str) for s in settings}) > 1}
    order = list(LABELS.get(kind, {}))
    return [k for k in order if k in differ] + sorted(differ - set(order))


@dataclass(frozen=True)
class LegendRun:
    """What names a run in a legend: its id, name, kind and config (a dict, as stored)."""

    id: str
    name: str
    kind: str
    config: dict[str, Any]


def legend_names(runs: Sequence[LegendRun]) -> list[str]:
    """For each run, the settings that differ among the chosen runs of its kind, in words
    (``"corpus = notes.txt, layers = 2"``); its name when none differ; prefixed by its kind when
    runs of several kinds are chosen; the run's id added to names that would still be the same."""
    kinds = list(dict.fromkeys(r.kind for r in runs))
    out = [""] * len(runs)
    for kind in kinds:
        idx = [i for i, r in enumerate(runs) if r.kind == kind]
        settings = [shown_settings(runs[i].config, kind) for i in idx]
        keys = differing(settings, kind)
        for i, s in zip(idx, settings, strict=True):
            words = ", ".join(phrase(k, s.get(k), kind) for k in keys)
            words = words or runs[i].name or f"run {runs[i].id}"
            out[i] = f"{KIND_WORDS.get(kind, kind)}: {words}" if len(kinds) > 1 else words
    seen = [out.count(name) for name in out]
    return [f"{name} (run {r.id})" if n > 1 else name for name, n, r in zip(out, seen, runs, strict=True)]
