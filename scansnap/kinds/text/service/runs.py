"""Real-text runs in the run store, without torch: create one (its corpus measured and its budget
checked before anything is queued), and the store layout of its snapshots.

Layout (:mod:`scansnap.service.export` documents it for readers): a text run is a ``runs`` row of
``kind = 'text'`` whose ``config_json`` is a :class:`~scansnap.kinds.text.science.config.TextRunConfig`.

* scalars: the kind's own table :data:`TEXT_SCALARS` (``text_scalars``: layer, head; −1, read
  as <NA>, for a run-level metric: train_loss, val_loss, val_ppl, and for the mean over heads);
* snapshot arrays: ``attn_map_mean`` (L, T′, T′) and, when L·H ≤ :data:`MAX_HEAD_MAPS`,
  ``attn_map`` (L, H, T′, T′): the probe window's attention a_ij, query i, key j, cut to its
  first T′ = min(T, :data:`MAP_MAX_T`) positions (a causal map's first T′ rows only attend to its
  first T′ keys, so the cut is the map of the shorter window);
* statics (written by the worker when it starts, :func:`stored_statics`): the trainer's
  ``statics()`` (probe token ids, frequent ids, uniform reference levels, corpus sizes) without
  the whole vocabulary, plus the words that the charts label: ``probe_window_tokens`` (T,),
  ``frequent_tokens`` (top-n,), the size of Scan & Snap's common and distinct groups and their most
  frequent words (``common_tokens``, ``distinct_tokens``), and ``vocab_size``;
* weights (a few steps, :func:`~scansnap.kinds.text.science.schedule.weight_steps`): the model's parameters up to
  its last attention map (:func:`~scansnap.kinds.text.science.sentence.attention_weights`) and :data:`VOCAB`, the
  words of its ids: a sentence typed on the page is read with them (:func:`sentence_maps`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from scansnap.core.scalar_columns import NO_CLASS
from scansnap.kinds.text.science.config import TextRunConfig, check_corpus_fits
from scansnap.kinds.text.science.schedule import WEIGHTS_KEPT
from scansnap.kinds.text.science.sentence import sentence_attention
from scansnap.kinds.text.science.tokenizer import UNK, basic_english
from scansnap.kinds.text.service.budget import (  # the stored maps' sizes, defined where they are counted
    ASSUMED_CPU_FLOPS,
    MAP_MAX_T,
    MAX_HEAD_MAPS,
    TextEstimate,
    check_text_budget,
)
from scansnap.kinds.text.service.corpus_facts import corpus_facts
from scansnap.service import scalar_table
from scansnap.service.budget import PACKED_COPIES, STORE_BYTES_PER_S, checkpoint_seconds

TEXT = "text"
TEXT_SCALARS = scalar_table.declare(TEXT, scalar_table.TEXT_SCALARS)
GROUP_EXAMPLES = 20  # words of each of Scan & Snap's groups kept to name them on the page
VOCAB = "vocab"  # the vocabulary (itos) kept with a step's weights (the rest of a weights row: the model's)
TEXT_START_S = 3.0  # a text worker's start: the corpus read and encoded, the model built
# Beside the floating-point work, with every slot busy (a model of d_model = 4 trained 16,000 steps here took
# 1.5 ms a step and 23 ms a snapshot alone in a slot: bench/estimates.py measures these against it):
TEXT_STEP_S = 3e-3  # per optimiser step: Python, torch's dispatch and the data windows
TEXT_SNAPSHOT_S = 0.05  # per snapshot: the evaluation's dispatch, the maps and one SQLite transaction

TextRow = tuple[int | None, int | None, str, float]  # (layer, head, metric, value), as the trainer gives them


def check_text_run(data_dir: str | Path, cfg: TextRunConfig) -> TextEstimate:
    """Measure the run's corpus (token counts, vocabulary: in the corpus worker, :func:`corpus_facts`),
    check it holds the run's windows and that the run fits the server's memory and work budget;
    ConfigError otherwise."""
    facts = corpus_facts(data_dir, cfg.data)
    check_corpus_fits(cfg, facts["train_tokens"], facts["val_tokens"])
    return check_text_budget(
        cfg, facts["vocab_size"], facts["train_tokens"], facts["val_tokens"], facts.get("longest_word")
    )


def text_seconds(data_dir: str | Path, cfg: TextRunConfig) -> float:
    """Slot seconds of a whole real-text run, for the queue (the run is checked first:
    :func:`check_text_run`): a start, a fixed cost per step and per snapshot, its floating-point work at one
    slot's share of the assumed CPU speed, and its checkpoints and kept weights stored
    (:func:`~scansnap.service.budget.checkpoint_seconds`)."""
    est = check_text_run(data_dir, cfg)
    steps, snaps = cfg.optim.steps, est.snapshots
    other = TEXT_START_S + steps * TEXT_STEP_S + snaps * TEXT_SNAPSHOT_S + est.work / (ASSUMED_CPU_FLOPS / 2)
    checkpoint = est.bytes_checkpoint / PACKED_COPIES
    kept = min(WEIGHTS_KEPT, snaps) * checkpoint / STORE_BYTES_PER_S  # the kept weights: no larger
    return other + checkpoint_seconds(other, snaps, checkpoint) + kept


# ----------------------------------------------------------------- the store layout
def store_rows(rows: Iterable[TextRow]) -> list[tuple[int, int | None, str, float]]:
    """Trainer rows (layer, head, metric, value) → the text table's rows (layer, head; None → -1: a
    run-level metric, the mean over heads), read back as <NA> (:data:`TEXT_SCALARS`)."""
    return [(NO_CLASS if layer is None else layer, head, metric, value) for layer, head, metric, value in rows]


def stored_maps(arrays: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The snapshot arrays as stored: ``attn_map_mean`` (L, H, T, T → L, T′, T′) and ``attn_map``
    when L·H ≤ MAX_HEAD_MAPS, both cut to the first T′ = min(T, MAP_MAX_T) positions."""
    mean = np.asarray(arrays["attn_map_mean"], dtype=np.float32)
    t = min(mean.shape[-1], MAP_MAX_T)
    out = {"attn_map_mean": np.ascontiguousarray(mean[..., :t, :t])}
    per_head = np.asarray(arrays["attn_map"], dtype=np.float32)
    if per_head.shape[0] * per_head.shape[1] <= MAX_HEAD_MAPS:
        out["attn_map"] = np.ascontiguousarray(per_head[..., :t, :t])
    return out


def stored_statics(statics: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The trainer's statics as stored: the vocabulary (up to 300,000 words) is replaced by the words
    of the probe window and of the frequent tokens, the ones the charts show."""
    itos, counts = statics["vocab_tokens"], np.asarray(statics["vocab_counts"])
    out = {k: v for k, v in statics.items() if k not in ("vocab_tokens", "vocab_counts")}
    out["probe_window_tokens"] = itos[np.asarray(statics["probe_window"], dtype=np.int64)]
    out["frequent_tokens"] = itos[np.asarray(statics["frequent_ids"], dtype=np.int64)]
    out["frequent_counts"] = counts[np.asarray(statics["frequent_ids"], dtype=np.int64)]
    for group in ("common", "distinct"):  # the group's size, and its most frequent words as examples
        ids = np.asarray(statics.get(f"{group}_ids", ()), dtype=np.int64)
        out[f"{group}_size"] = np.array(len(ids))
        out[f"{group}_tokens"] = itos[ids[np.argsort(-counts[ids], kind="stable")][:GROUP_EXAMPLES]]
    out.pop("common_ids", None)  # the distinct group holds thousands of words: its size and examples suffice
    out.pop("distinct_ids", None)
    out["vocab_size"] = np.array(len(itos))
    return out


# ----------------------------------------------------------------- a typed sentence
MAX_SENTENCE_CHARS = 400  # characters of a typed sentence read


@dataclass(frozen=True)
class SentenceMaps:
    """Each layer's attention (head mean, (L, T, T)) on a typed sentence's first words, at ``step`` (the
    latest step at or before the one asked for whose weights are kept); ``unknown``: its words outside
    the run's vocabulary (read as <unk>); ``cut``: words left out beyond the maps' length."""

    step: int
    words: list[str]
    maps: np.ndarray
    unknown: list[str]
    cut: int


def sentence_maps(weights: dict[str, np.ndarray], cfg: TextRunConfig, step: int, text: str) -> SentenceMaps:
    """Read ``text`` with the run's tokenizer and vocabulary (:data:`VOCAB` of its kept ``weights``) and
    compute each layer's attention on its first min(bptt, MAP_MAX_T) words (ValueError when it has none)."""
    words = basic_english(text[:MAX_SENTENCE_CHARS])
    if not words:
        raise ValueError("type a few words: this text has none the tokenizer keeps (letters, digits, ' and .)")
    limit = min(cfg.optim.bptt, MAP_MAX_T)
    kept, cut = words[:limit], max(0, len(words) - limit)
    stoi = {w: i for i, w in enumerate(weights[VOCAB].tolist())}
    ids = np.array([stoi.get(w, stoi.get(UNK, 0)) for w in kept], dtype=np.int64)
    unknown = sorted({w for w in kept if w not in stoi})
    model = {k: v for k, v in weights.items() if k != VOCAB}
    maps = sentence_attention(model, cfg.model, ids).mean(axis=1)  # (L, T, T): the mean over heads
    return SentenceMaps(step, kept, maps, unknown, cut)
