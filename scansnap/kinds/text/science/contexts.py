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
from collections.abc import Iterator

import numpy as np
import scipy.sparse as sp

MIN_COUNT = 20  # occurrences in the training text before a word is ranked
MAX_TOKENS = 1_000_000  # counted of the training text (its start): bounds the counts' memory and time
WINDOW = 35  # context positions before the next word: Fig. 7's bptt
CHUNK = 1 << 20  # (context, next word) pairs sorted at a time: 8 MiB of keys


def row_blocks(
    ids: np.ndarray, vocab_size: int, window: int = WINDOW, chunk: int = CHUNK
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The counts N(l, n) > 0 of :func:`cooccurrence`, a block of whole rows l at a time in row order: (sorted
    keys l·V + n, their counts), over the first :data:`MAX_TOKENS` tokens.

    The positions j sorted by their word l = x_j are cut into pieces of about ``chunk`` pairs (j, j + d + 1),
    1 ≤ d + 1 ≤ window: between words where a piece holds several, inside a word whose pairs are more
    (``<unk>`` of a small vocabulary is most of the text), so that a piece's arrays stay near ``chunk``
    elements whatever the vocabulary.  A piece's pairs, as keys, are sorted and counted; a row cut across
    pieces (≤ V keys from each) is summed as the next piece joins, and given once it is whole."""
    key_type = np.int32 if vocab_size**2 <= np.iinfo(np.int32).max else np.int64  # l·V + n < V²: sorts faster
    x = np.asarray(ids[:MAX_TOKENS]).astype(key_type)
    v = np.asarray(vocab_size, dtype=key_type)
    n = len(x)
    starts = np.concatenate(([0], np.cumsum(np.bincount(x, minlength=vocab_size))))  # word l: order[starts[l]:]
    order = np.argsort(x, kind="stable")
    step = max(1, chunk // window)
    at_words = starts[np.searchsorted(starts, np.arange(0, n, step))]
    cuts = np.append(np.unique(np.concatenate((at_words, np.arange(0, n, step)))), n)
    held_k, held_c = np.zeros(0, dtype=key_type), np.zeros(0, dtype=np.int64)  # the last row, maybe not whole
    for a, b in itertools.pairwise(cuts):
        after = order[a:b, None] + np.arange(1, window + 1)  # the positions j + d + 1 after each j
        k = np.add(np.multiply(x[order[a:b], None], v), x[np.minimum(after, n - 1)])[after < n]
        if not len(k):
            continue
        k.sort()
        first = np.concatenate(([0], np.flatnonzero(k[1:] != k[:-1]) + 1))
        k, c = k[first], np.diff(np.append(first, len(k)))  # each key once, and the length of its run
        del after, first  # the piece's pairs: not held while its rows are read
        if len(held_k) and held_k[0] // v == k[0] // v:  # the held row goes on in this piece
            k, c = _summed(held_k, held_c, k, c, int(v))
        elif len(held_k):
            yield held_k, held_c
        last = int(np.searchsorted(k, k[-1] // v * v))  # where the piece's last row starts
        if last:
            yield k[:last], c[:last]
        held_k, held_c = k[last:], c[last:]
    if len(held_k):
        yield held_k, held_c


def _summed(
    row_k: np.ndarray, row_c: np.ndarray, k: np.ndarray, c: np.ndarray, v: int
) -> tuple[np.ndarray, np.ndarray]:
    """One row's sorted unique keys and counts joined to a piece's (``k``, ``c``) that starts in the same row:
    that row's keys summed, the piece's later rows as they were."""
    j = int(np.searchsorted(k, (int(row_k[0]) // v + 1) * v))  # the piece's part of the row: k[:j]
    key, at = np.unique(np.concatenate((row_k, k[:j])), return_inverse=True)
    count = np.zeros(len(key), dtype=np.int64)
    np.add.at(count, at, np.concatenate((row_c, c[:j])))
    return np.concatenate((key, k[j:])), np.concatenate((count, c[j:]))


def cooccurrence(ids: np.ndarray, vocab_size: int, window: int = WINDOW, chunk: int = CHUNK) -> sp.csr_matrix:
    """N(l, n): for every next word x_{k+1} (k ≥ 0), one count for each context word x_j, k − window < j ≤ k,
    over the first :data:`MAX_TOKENS` tokens, as one sparse matrix: :func:`row_blocks` joined, the reference
    the tests read whole (:func:`information` reads it one block at a time)."""
    blocks = list(row_blocks(ids, vocab_size, window, chunk))
    key_type = np.int32 if vocab_size**2 <= np.iinfo(np.int32).max else np.int64
    key = np.concatenate([np.zeros(0, dtype=key_type), *(k for k, _ in blocks)])
    data = np.concatenate([np.zeros(0, dtype=np.int64), *(c for _, c in blocks)])
    v = np.asarray(vocab_size, dtype=key_type)
    indptr = np.searchsorted(key, np.multiply(np.arange(vocab_size + 1, dtype=key_type), v))  # row l: l·V + n
    out = sp.csr_matrix((data, np.remainder(key, v), indptr), shape=(vocab_size, vocab_size))
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


def information(ids: np.ndarray, vocab_size: int, window: int = WINDOW, chunk: int = CHUNK) -> np.ndarray:
    """:func:`next_word_information` of :func:`cooccurrence`, counted one block of rows at a time: memory
    of about ``chunk`` pairs and a few V-vectors whatever the text, never the whole N (tens of MB a million
    tokens).  The column sums need no matrix: Σ_l N(l, n) = Σ_{p ≥ 1, x_p = n} min(window, p), the context
    positions before each occurrence p of n."""
    x = np.asarray(ids[:MAX_TOKENS])
    col = np.bincount(x[1:], weights=np.minimum(window, np.arange(1, len(x))), minlength=vocab_size)
    total = col.sum()
    row, d, seen = np.zeros(vocab_size), np.zeros(vocab_size), np.zeros(vocab_size)
    for k, c in row_blocks(ids, vocab_size, window, chunk):
        ls, ns = np.divmod(k.astype(np.int64), vocab_size)
        block_row = np.bincount(ls, weights=c, minlength=vocab_size)
        p_cond = c / block_row[ls]
        d += np.bincount(ls, weights=p_cond * np.log(c * total / (block_row[ls] * col[ns])), minlength=vocab_size)
        row += block_row
        seen += np.bincount(ls, minlength=vocab_size)
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
