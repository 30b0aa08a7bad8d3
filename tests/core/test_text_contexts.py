"""Scan & Snap's common and distinct tokens on a corpus (scansnap.kinds.text.science.contexts), against explicit
float64 loops and a corpus with a planted answer; the trainer's shares on them."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import scipy.sparse as sp
import torch

from scansnap.kinds.text.science import contexts
from scansnap.kinds.text.science.data import EncodedCorpus
from scansnap.kinds.text.science.tokenizer import Vocabulary
from scansnap.kinds.text.science.trainer import TextTrainer
from tests.core.test_text_trainer import small_cfg, synthetic_corpus

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _pairs_by_loop(ids: list[int], window: int) -> Counter:
    """N(l, n) by its definition: for each next word x_{k+1}, every x_j with k − window < j ≤ k."""
    pairs: Counter = Counter()
    for k in range(len(ids) - 1):
        for j in range(max(0, k - window + 1), k + 1):
            pairs[(ids[j], ids[k + 1])] += 1
    return pairs


def test_cooccurrence_counts_each_context_word_before_each_next_word():
    ids = list(np.random.default_rng(1).integers(0, 7, size=60))
    got = contexts.cooccurrence(np.array(ids), 7, window=4).toarray()
    want = np.zeros((7, 7), dtype=np.int64)
    for (word, n), c in _pairs_by_loop(ids, 4).items():
        want[word, n] = c
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("vocab_size", [10, 50_000])
@pytest.mark.parametrize("chunk", [1, 9, 40, 1 << 20])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 300])
def test_cooccurrence_is_the_same_cut_into_any_pieces(chunk, length, vocab_size):
    """Pieces of ``chunk`` pairs: smaller than one word's pairs (1), a few words (9, 40), all (2^20); word 0
    is a third of the text (its pairs fill many pieces' worth); words 8 and up never occur (empty rows); a
    vocabulary of 50,000 words has keys l·V + n beyond int32's range."""
    rng = np.random.default_rng(length)
    ids = [0 if rng.random() < 1 / 3 else int(rng.integers(1, 8)) for _ in range(length)]
    got = contexts.cooccurrence(np.array(ids, dtype=np.int64), vocab_size, window=6, chunk=chunk)
    coo = got.tocoo()
    assert dict(zip(zip(coo.row.tolist(), coo.col.tolist(), strict=True), coo.data.tolist(), strict=True)) == dict(
        _pairs_by_loop(ids, 6)
    )
    assert got.shape == (vocab_size, vocab_size) and got.dtype == np.int64
    assert got.has_canonical_format  # as it says of itself; and as scipy finds it, checking anew:
    assert sp.csr_matrix((got.data, got.indices, got.indptr), shape=got.shape).has_canonical_format


@pytest.mark.parametrize("vocab_size", [10, 50_000])
@pytest.mark.parametrize("chunk", [1, 9, 40, 1 << 20])
@pytest.mark.parametrize("length", [0, 1, 2, 5, 300])
def test_information_read_block_by_block_is_the_whole_matrix_s(chunk, length, vocab_size):
    """D(l) counted one block of rows at a time (column sums in closed form) equals D(l) of the whole N(l, n),
    for pieces cut inside a word (1), between a few words (9, 40) or not at all (2^20)."""
    rng = np.random.default_rng(length)
    ids = np.array([0 if rng.random() < 1 / 3 else int(rng.integers(1, 8)) for _ in range(length)], dtype=np.int64)
    whole = contexts.next_word_information(contexts.cooccurrence(ids, vocab_size, window=6))
    got = contexts.information(ids, vocab_size, window=6, chunk=chunk)
    np.testing.assert_allclose(got, whole, rtol=1e-12, atol=1e-15, equal_nan=True)
    assert np.isnan(got[8:]).all()  # words that never occur: no row


def test_information_is_the_kl_divergence_of_the_next_word_miller_madow_corrected():
    ids = list(np.random.default_rng(2).integers(0, 6, size=200))
    pairs = _pairs_by_loop(ids, 3)
    total = sum(pairs.values())
    row = Counter()
    col = Counter()
    for (word, n), c in pairs.items():
        row[word] += c
        col[n] += c
    got = contexts.next_word_information(contexts.cooccurrence(np.array(ids), 6, window=3))
    for word in range(6):
        seen = [(n, c) for (w, n), c in pairs.items() if w == word]
        kl = sum(c / row[word] * math.log((c / row[word]) / (col[n] / total)) for n, c in seen)
        assert got[word] == pytest.approx(kl - (len(seen) - 1) / (2 * row[word]), rel=1e-12, abs=1e-15)


def _planted(n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, set[int], set[int]]:
    """Fillers 1–8 drawn at random; a cue word c ∈ 9–12 is always followed by its own target c + 4."""
    rng = np.random.default_rng(seed)
    out: list[int] = []
    while len(out) < n:
        if rng.random() < 0.15:
            cue = int(rng.integers(9, 13))
            out += [cue, cue + 4]
        else:
            out.append(int(rng.integers(1, 9)))
    return np.array(out[:n]), set(range(1, 9)), set(range(9, 13))


def test_cue_words_are_distinct_and_fillers_common_on_a_planted_corpus():
    ids, fillers, cues = _planted()
    info = contexts.next_word_information(contexts.cooccurrence(ids, 17, window=1))
    # a filler only says "not a target" (D = −ln P(next is a filler) ≈ 0.14), a cue names its target (D ≈ 3)
    assert max(info[list(fillers)]) < 0.2 < 2.0 < min(info[list(cues)])
    common, distinct = contexts.common_and_distinct(info, np.bincount(ids, minlength=17))
    assert set(common) <= fillers and set(distinct) & cues == cues


def test_groups_take_a_third_of_the_ranked_occurrences_each_and_skip_rare_words():
    info = np.array([np.nan, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 9.0])
    counts = np.array([500, 100, 100, 100, 100, 100, 100, contexts.MIN_COUNT - 1])  # <unk> and a rare word
    common, distinct = contexts.common_and_distinct(info, counts)
    assert common.tolist() == [1, 2] and distinct.tolist() == [5, 6]  # 6 ranked words of 100: 2 per third


def _share_by_loop(a: np.ndarray, x: np.ndarray, members: set[int]) -> float:
    """mean over sequences b and queries i of Σ_{j≤i} a_bij 1[x_bj ∈ group] (one head)."""
    B, T = x.shape
    return float(
        np.mean([sum(a[b, i, j] for j in range(i + 1) if x[b, j] in members) for b in range(B) for i in range(T)])
    )


def test_the_snapshot_measures_the_attention_on_each_group():
    tr = TextTrainer(small_cfg(), synthetic_corpus(n_train=6000))
    tr.advance(3)
    snap = tr.snapshot()
    a = tr.attention_maps()[0][:, 0].double().numpy()
    x = tr.probe_x.numpy()
    for group, ids in (("common", tr.common), ("distinct", tr.distinct), ("frequent", tr.frequent)):
        assert snap.scalars[f"attn_share_{group}"][0, 0] == pytest.approx(
            _share_by_loop(a, x, set(ids.tolist())), abs=1e-6
        )
    st = tr.statics()
    assert len(st["common_ids"]) and len(st["distinct_ids"]) and not set(st["common_ids"]) & set(st["distinct_ids"])
    assert 0 < float(st["uniform_share_common"]) < 1 and torch.is_tensor(tr.is_common)


def test_a_corpus_of_rare_words_has_no_groups():
    vocab = Vocabulary(("<unk>", "a", "b"), np.array([0, 5, 5]))
    corpus = EncodedCorpus("tiny", vocab, np.array([1, 2] * 5), np.array([1, 2] * 5))
    info = contexts.next_word_information(contexts.cooccurrence(corpus.train_ids, 3))
    common, distinct = contexts.common_and_distinct(info, vocab.counts)
    assert len(common) == len(distinct) == 0


def test_the_counts_read_at_most_the_first_max_tokens(monkeypatch):
    """An upload of millions of words is counted on its start: the counts' memory does not grow with it."""
    ids = np.random.default_rng(4).integers(0, 9, size=500)
    monkeypatch.setattr(contexts, "MAX_TOKENS", 200)
    capped = contexts.cooccurrence(ids, 9, window=3).toarray()
    monkeypatch.setattr(contexts, "MAX_TOKENS", 10**6)
    np.testing.assert_array_equal(capped, contexts.cooccurrence(ids[:200], 9, window=3).toarray())
    assert capped.sum() < contexts.cooccurrence(ids, 9, window=3).toarray().sum()


def test_a_corpus_counts_its_groups_once_for_every_run_on_it(monkeypatch):
    """Two trainers on one corpus object (a process's cached corpus) share its groups, counted once, and
    read-only; they are the groups of the counts, as the functions above give them."""
    corpus = synthetic_corpus(n_train=6000)
    calls = []
    count = contexts.row_blocks
    monkeypatch.setattr(contexts, "row_blocks", lambda *a, **k: calls.append(1) or count(*a, **k))
    first, second = TextTrainer(small_cfg(), corpus), TextTrainer(small_cfg(), corpus)
    assert len(calls) == 1
    info = contexts.next_word_information(contexts.cooccurrence(corpus.train_ids, len(corpus.vocab)))
    want = contexts.common_and_distinct(info, corpus.vocab.counts)
    for got in (first, second):
        assert got.common.tolist() == want[0].tolist() and got.distinct.tolist() == want[1].tolist()
        assert len(got.common) and len(got.distinct) and not got.common.flags.writeable
