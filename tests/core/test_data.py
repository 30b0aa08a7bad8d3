"""Sequence classes (Dataset2 layout, science §1.3) and the count sampler."""

import numpy as np
import pytest

from engine.core.config import DataConfig
from engine.core.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE, ContextSampler, build_problem


def test_syn_small_layout_and_probabilities():
    pb = build_problem(DataConfig())  # defaults are Syn-Small's data
    assert (pb.K, pb.Q, pb.M_ctx, pb.M, pb.M_out) == (2, 2, 30, 34, 34)
    assert list(pb.query_ids) == [30, 31] and list(pb.label_ids) == [32, 33]
    assert list(pb.psi) == [0, 1]
    np.testing.assert_allclose(pb.P[0, :10], 1 / 15.5)
    np.testing.assert_allclose(pb.P[0, 10:20], 0.1 * np.arange(1, 11) / 15.5)
    np.testing.assert_allclose(pb.P[1, 20:30], 0.1 * np.arange(1, 11) / 15.5)
    assert pb.P[0, 20:].sum() == 0 and pb.P[1, 10:20].sum() == 0
    kind = pb.token_kind
    assert (kind[:, :10] == KIND_COMMON).all()
    assert (kind[0, 10:20] == KIND_DISTINCT).all() and (kind[0, 20:] == KIND_NONE).all()
    assert pb.P[0, pb.common_mask[0]].sum() == pytest.approx(10 / 15.5)  # 0.645


@pytest.mark.parametrize("num_last,M", [(1, 33), (3, 79), (5, 125), (10, 240)])
def test_syn_medium_vocabulary_sizes(num_last, M):
    pb = build_problem(DataConfig(num_last=num_last, num_next_per_last=2))
    assert pb.M == M
    assert list(pb.psi[:4]) == [0, 0, 1, 1][: pb.K]


def test_per_query_common_tokens_are_common_only_within_their_query():
    pb = build_problem(DataConfig(num_last=2, num_next_per_last=2, num_common=1, num_common_per_last=2))
    # ids: 0 global common; 1,2 common of query 0; 3,4 of query 1; then distinct blocks
    assert (pb.P[:2, 1:3] > 0).all() and (pb.P[2:, 1:3] == 0).all()
    assert (pb.token_kind[:2, 1:3] == KIND_COMMON).all()
    assert (pb.token_kind[2:, 3:5] == KIND_COMMON).all()


def test_compact_layout_decodes_over_next_tokens():
    pb = build_problem(DataConfig(layout="compact"))
    assert pb.M_out == pb.K == 2 and list(pb.label_ids) == [0, 1]


@pytest.mark.parametrize("kind", ["uniform", "zipf", "dirichlet"])
def test_alternative_distinct_weights(kind):
    pb = build_problem(DataConfig(distinct_weights=kind, zipf_s=1.5, dirichlet_alpha=0.5))
    d = pb.P[0, 10:20]
    assert (d > 0).all() and np.isclose(pb.P.sum(1), 1).all()
    if kind == "uniform":
        assert np.allclose(d, d[0])
    else:
        assert (np.diff(d) >= 0).all()  # increasing with token id, as linspace


def test_table_mode_normalises_rows_and_derives_kinds():
    cfg = DataConfig(source="table", table=((1, 1, 0, 2), (1, 0, 3, 0), (0, 0, 0, 5)), psi=(0, 0, 1))
    pb = build_problem(cfg)
    np.testing.assert_allclose(pb.P.sum(1), 1)
    assert pb.Q == 2 and pb.M == 4 + 2 + 3
    assert pb.token_kind[0, 0] == KIND_COMMON and pb.token_kind[0, 1] == KIND_DISTINCT
    assert pb.token_kind[2, 3] == KIND_COMMON  # token 3 has mass in classes 0 and 2


@pytest.mark.parametrize("T", [9, 65, 2000])  # 9 and 65 use draws+bincount, 2000 the O(s) multinomial
def test_counts_are_multinomial(T):
    pb = build_problem(DataConfig(num_distinct_per_next=300 if T < 1000 else 10))
    s = ContextSampler(pb, T, seed=0)
    cls, xs = s.sample(4000)
    x = pb.dense_counts(cls, xs)
    assert (x.sum(1) == T - 1).all()
    assert (x[pb.P[cls] == 0] == 0).all()  # never a token outside supp(n)
    for n in range(pb.K):
        rows = x[cls == n]
        mean = rows.mean(0)
        expected = (T - 1) * pb.P[n]
        se = np.sqrt((T - 1) * pb.P[n] * (1 - pb.P[n]) / len(rows))
        z = np.abs(mean - expected)[se > 0] / se[se > 0]
        assert z.max() < 5.5, z.max()
        # multinomial covariance between two common tokens: −(T−1) p_i p_j
        if T > 100:
            cov = np.cov(rows[:, 0], rows[:, 1])[0, 1]
            assert cov == pytest.approx(-(T - 1) * pb.P[n, 0] * pb.P[n, 1], abs=0.15 * (T - 1) * pb.P[n, 0])
    freq = np.bincount(cls, minlength=pb.K) / len(cls)
    assert np.abs(freq - 1 / pb.K).max() < 0.03


def test_same_seed_same_stream_and_infinite_T():
    pb = build_problem(DataConfig())
    a, b = ContextSampler(pb, 128, 7), ContextSampler(pb, 128, 7)
    for _ in range(3):
        ca, xa = a.sample(16)
        cb, xb = b.sample(16)
        assert (ca == cb).all() and (xa == xb).all()
    c, x = ContextSampler(pb, None, 0).sample(8)
    np.testing.assert_array_equal(pb.dense_counts(c, x), pb.P[c])
