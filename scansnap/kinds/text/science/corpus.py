"""Corpus text → token ids (no torch: the web process measures a corpus before a run is queued).

``encode_corpus`` tokenizes with ``basic_english`` and builds the training split's vocabulary;
:mod:`scansnap.kinds.text.science.data` batchifies the ids for training.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from scansnap.kinds.text.science import contexts
from scansnap.kinds.text.science.tokenizer import Vocabulary, basic_english, vocabulary_from_counts


@dataclass(frozen=True)
class CorpusText:
    """Raw text of a corpus: its training and validation parts, and where it came from."""

    name: str
    train: str
    valid: str
    description: str = ""


@dataclass(frozen=True)
class EncodedCorpus:
    """A corpus as token ids under the training split's vocabulary."""

    name: str
    vocab: Vocabulary
    train_ids: np.ndarray
    val_ids: np.ndarray
    description: str = ""

    @cached_property
    def word_groups(self) -> tuple[np.ndarray, np.ndarray]:
        """(common ids, distinct ids) of the training text (:mod:`scansnap.kinds.text.science.contexts`: the words whose
        presence in a context tells least and most about the next word), counted once per corpus object:
        every run of a process that trains on the same cached corpus shares them (read-only)."""
        info = contexts.information(self.train_ids, len(self.vocab))
        groups = contexts.common_and_distinct(info, self.vocab.counts)
        for ids in groups:
            ids.setflags(write=False)
        return groups


def split_train_valid(text: str, valid_fraction: float) -> tuple[str, str]:
    """(train, valid): the last ``valid_fraction`` of the characters, cut at the first line
    break at or after the cut point (else the first whitespace), so no word is split."""
    if not 0 < valid_fraction < 1:
        raise ValueError(f"valid_fraction = {valid_fraction}: must be strictly between 0 and 1")
    cut = int(len(text) * (1 - valid_fraction))
    nl = text.find("\n", cut)
    if nl < 0:
        ws = next((i for i in range(cut, len(text)) if text[i].isspace()), len(text))
        nl = ws
    return text[:nl], text[nl:]


def line_chunks(text: str, size: int = 1 << 20) -> Iterator[str]:
    """Pieces of about ``size`` characters cut after a line break (a line is never split, so
    tokenizing the pieces equals tokenizing the whole: no ``basic_english`` rule spans a line)."""
    start = 0
    while start < len(text):
        nl = text.find("\n", start + size)
        end = len(text) if nl < 0 else nl + 1
        yield text[start:end]
        start = end


def encode_corpus(corpus: CorpusText, vocab_size: int, max_train_tokens: int | None = None) -> EncodedCorpus:
    """Tokenize with ``basic_english`` piece by piece (memory O(piece), not O(corpus) strings),
    build the vocabulary on the first ``max_train_tokens`` training tokens (all if None)."""
    counter: Counter[str] = Counter()
    parts: list[list[str]] = []
    n = 0
    for piece in line_chunks(corpus.train):
        tokens = basic_english(piece)
        if max_train_tokens is not None:
            tokens = tokens[: max_train_tokens - n]
        counter.update(tokens)
        parts.append(tokens)
        n += len(tokens)
        if max_train_tokens is not None and n >= max_train_tokens:
            break
    vocab = vocabulary_from_counts(counter, vocab_size)
    train_ids = np.concatenate([vocab.encode(p) for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    val_parts = [vocab.encode(basic_english(p)) for p in line_chunks(corpus.valid)]
    val_ids = np.concatenate(val_parts) if val_parts else np.zeros(0, dtype=np.int64)
    return EncodedCorpus(corpus.name, vocab, train_ids, val_ids, corpus.description)
