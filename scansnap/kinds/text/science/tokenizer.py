"""Word-level tokenizer and vocabulary, as in the paper's notebook (torchtext ``basic_english``).

:func:`basic_english` re-states torchtext's ``get_tokenizer("basic_english")``
(``torchtext/data/utils.py``, ``_basic_english_normalize``): lower-case the line, then apply in
this order the regex substitutions

    '  → " '  "     "  → ""      .  → " . "    <br />  → " "    ,  → " , "    (  → " ( "
    )  → " ) "      !  → " ! "   ?  → " ? "    ;  → " "         :  → " "     \\s+ → " "

and split on whitespace.  (So "it's" → ["it", "'", "s"] and "a;b" → ["a", "b"].)

:func:`build_vocabulary` re-states torchtext's ``build_vocab_from_iterator(..., specials=["<unk>"])``
ordering: ``<unk>`` at index 0, then tokens by count, descending, ties in alphabetical order;
a cap keeps the ``max_size − 1`` most frequent words, the rest map to ``<unk>``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

UNK = "<unk>"

_SUBSTITUTIONS = tuple(
    (re.compile(pattern), replacement)
    for pattern, replacement in (
        (r"\'", " '  "),
        (r"\"", ""),
        (r"\.", " . "),
        (r"<br \/>", " "),
        (r",", " , "),
        (r"\(", " ( "),
        (r"\)", " ) "),
        (r"\!", " ! "),
        (r"\?", " ? "),
        (r"\;", " "),
        (r"\:", " "),
        (r"\s+", " "),
    )
)


def basic_english(text: str) -> list[str]:
    """torchtext's ``basic_english`` tokens of ``text`` (rules in the module docstring).

    No rule spans a line break, so tokenizing a whole file equals tokenizing it line by line
    and concatenating (what the paper's notebook does; blank lines give no tokens)."""
    line = text.lower()
    for pattern, replacement in _SUBSTITUTIONS:
        line = pattern.sub(replacement, line)
    return line.split()


@dataclass(frozen=True)
class Vocabulary:
    """``itos[i]`` is token i; ``counts[i]`` its count in the training text (``<unk>`` counts
    every training token mapped to it: literal ``<unk>`` plus words beyond the cap)."""

    itos: tuple[str, ...]
    counts: np.ndarray
    stoi: dict[str, int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stoi", {t: i for i, t in enumerate(self.itos)})

    def __len__(self) -> int:
        return len(self.itos)

    @property
    def longest_word(self) -> int:
        """Characters of the longest token (numpy's fixed-width array of the words takes 4 bytes each, per word)."""
        return max((len(w) for w in self.itos), default=0)

    def encode(self, tokens: Iterable[str]) -> np.ndarray:
        """Token ids (int64); unknown words → 0 (``<unk>``)."""
        get = self.stoi.get
        return np.fromiter((get(t, 0) for t in tokens), dtype=np.int64)

    def decode(self, ids: Iterable[int]) -> list[str]:
        return [self.itos[int(i)] for i in ids]


def build_vocabulary(tokens: Iterable[str], max_size: int) -> Vocabulary:
    """``<unk>`` + the ``max_size − 1`` most frequent tokens (count desc, then alphabetical)."""
    return vocabulary_from_counts(Counter(tokens), max_size)


def vocabulary_from_counts(counts: Counter[str], max_size: int) -> Vocabulary:
    """:func:`build_vocabulary` from token counts (the counter is not changed)."""
    if max_size < 2:
        raise ValueError(f"max_size = {max_size}: a vocabulary needs <unk> and at least one word (≥ 2)")
    unk_literal = counts.get(UNK, 0)
    ranked = sorted(((t, c) for t, c in counts.items() if t != UNK), key=lambda kv: (-kv[1], kv[0]))
    kept, dropped = ranked[: max_size - 1], ranked[max_size - 1 :]
    itos = (UNK, *(t for t, _ in kept))
    counts_arr = np.array([unk_literal + sum(c for _, c in dropped), *(c for _, c in kept)], dtype=np.int64)
    return Vocabulary(itos, counts_arr)
