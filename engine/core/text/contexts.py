"""Scan & Snap's common and distinct tokens, measured on a corpus (numpy/scipy, no torch, no I/O).

In the paper (science §1, §7b) a contextual token l is *distinct* when it co-occurs with one next
token n (P(l|n) > 0 for a single n) and *common* when it co-occurs with many; Theorem 2 predicts that
attention moves from common to distinct tokens.  On real text every word co-occurs with many next
words, so the measure is graded: how much the presence of l in the context window tells about the
next word.  With N(l, n) the number of (context position, next word) pairs in which word l stands
within the :data:`WINDOW` positions that precede the next word n (the paper's window, bptt 35, for
every run: the groups are a property of the corpus), the information l carries about the next word
is the KL divergence

    D(l) = Σ_n P(n | l) ln( P(n | l) / P(n) ),   P(n | l) = N(l, n) / N(l),   P(n) = Σ_l N(l, n) / N,

in nats, Miller–Madow corrected for its finite sample (− (m_l − 1) / (2 N(l)), m_l = the number of
different next words seen with l).  In science §1.2's terms, with Ω(l) = {n : P(l|n) > 0} and Bayes'
P(n | l) ∝ P(l | n) P(n): a distinct token (|Ω(l)| = 1, l only in class n_l) has P(n | l) = 1[n = n_l],
so D(l) = −ln P(n_l), its largest value; a token common to every class with the same P(l | n) in each
has P(n | l) = P(n), so D(l) = 0.  D grades the words of a real text between the two: D(l) ≈ 0, l's
contexts predict the next word no better than any context ("the", ","); large D(l), l all but names
the next word.

Only words seen at least :data:`MIN_COUNT` times are ranked (a rarer word's D is mostly noise).  Of the
ranked words' occurrences, the third with the lowest D is **common**, the third with the highest D
**distinct** (by occurrences, so that each group fills about as much of a window).  Frequent words and
common tokens overlap but are different sets: the page charts both.
"""

from __future__ import annotations

import itertools

import numpy as np
import scipy.sparse as sp

MIN_COUNT = 20  # occurrences in the training text before a word is ranked
MAX_TOKENS = 1_000_000  # counted of the training text (its start): bounds the counts' memory and time
WINDOW = 35  # context positions before the next word: Fig. 7's bptt
CHUNK = 1 << 20  # (context, next word) pairs sorted at a time: 8 MiB of keys


def cooccurrence(ids: np.ndarray, vocab_size: int, window: int = WINDOW, chunk: int = CHUNK) -> sp.csr_matrix:
    """N(l, n): for every next word x_{k+1} (k ≥ 0), one count for each context word x_j, k − window < j ≤ k,
    over the first :data:`MAX_TOKENS` tokens (the built-in corpus: all of its 0.8 M; an upload of up to
    20 MB may hold 4 M, whose counts would take several hundred MB beside the run's budget).

    Counted row by row: the positions j sorted by their word l = x_j, cut between words into pieces of about
    ``chunk`` pairs (j, j + d + 1), 1 ≤ d + 1 ≤ window; a piece's pairs, as keys l·V + n, are sorted and
    counted, and the pieces' counts, each for rows of its own, are already the matrix's rows in order."""
    key_type = np.int32 if vocab_size**2 <= np.iinfo(np.int32).max else np.int64  # l·V + n < V²: sorts faster
    x = np.asarray(ids[:MAX_TOKENS]).astype(key_type)
    v = np.asarray(vocab_size, dtype=key_type)
    n = len(x)
    starts = np.concatenate(([0], np.cumsum(np.bincount(x, minlength=vocab_size))))  # word l: order[starts[l]:]
    order = np.argsort(x, kind="stable")
    cuts = np.append(np.unique(starts[np.searchsorted(starts, np.arange(0, n, max(1, chunk // window)))]), n)
    keys: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    for a, b in itertools.pairwise(cuts):
        after = order[a:b, None] + np.arange(1, window + 1)  # the positions j + d + 1 after each j
        k = np.add(np.multiply(x[order[a:b], None], v), x[np.minimum(after, n - 1)])[after < n]
        k.sort()
        first = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1)) if len(k) else np.zeros(0, np.int64)
        keys.append(k[first])  # each key once, where its run of equal keys starts, and the run's length
        counts.append(np.diff(np.append(first, len(k))))
    key = np.concatenate([np.zeros(0, dtype=key_type), *keys])
    data = np.concatenate([np.zeros(0, dtype=np.int64), *counts])
    del keys, counts
    indptr = np.searchsorted(key, np.multiply(np.arange(vocab_size + 1, dtype=key_type), v))  # row l: l·V + n
    cols = np.remainder(key, v, out=key)
    out = sp.csr_matrix((data, cols, indptr), shape=(vocab_size, vocab_size))
    out.has_canonical_format = True  # sorted and unique within each row, by construction
    return out


def next_word_information(counts: sp.csr_matrix) -> np.ndarray:
    """D(l) in nats for every row l of N(l, n) (Miller–Madow corrected; NaN where N(l) = 0)."""
    c = sp.csr_matrix(counts, dtype=np.float64)
    row = np.asarray(c.sum(axis=1)).ravel()
    col = np.asarray(c.sum(axis=0)).ravel()
    total = row.sum()
    rows = np.repeat(np.arange(c.shape[0]), np.diff(c.indptr))
    p_cond = c.data / row[rows]
    terms = p_cond * np.log(c.data * total / (row[rows] * col[c.indices]))
    d = np.bincount(rows, weights=terms, minlength=c.shape[0])
    seen = np.diff(c.indptr)
    with np.errstate(divide="ignore", invalid="ignore"):
        corrected = d - (seen - 1) / (2 * row)
    return np.where(row > 0, corrected, np.nan)


def common_and_distinct(information: np.ndarray, word_counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(common ids, distinct ids): among words with ≥ MIN_COUNT occurrences (``<unk>``, id 0, never),
    sorted by D, the lowest-D words holding the first third of their occurrences and the highest-D
    words holding the last third."""
    counts = np.asarray(word_counts, dtype=np.float64)
    ranked = np.flatnonzero((counts >= MIN_COUNT) & np.isfinite(information))
    ranked = ranked[ranked != 0]
    if len(ranked) < 3:
        return np.array([], dtype=np.int64), np.array([], dtype=np.int64)
    order = ranked[np.argsort(information[ranked], kind="stable")]
    share = np.cumsum(counts[order]) / counts[order].sum()  # occurrences up to and including each word
    common = order[share <= 1 / 3]
    distinct = order[share - counts[order] / counts[order].sum() >= 2 / 3]  # starts in the last third
    return common.astype(np.int64), distinct.astype(np.int64)
