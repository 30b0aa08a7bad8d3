"""Sequence classes (Dataset2 layout, science §1.3) and the count sampler."""

import numpy as np
import pytest

from scansnap.kinds.synthetic.science.config import DataConfig
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT, KIND_NONE, ContextSampler, build_problem


def test_syn_small_layout_and_probabilities():
    """science §1.3: 2 queries with one next token each (K = 2), 10 common tokens, 10 distinct per class;
    ids: common 0–9, distinct 10–29, queries 30–31, next tokens 32–33 (M_code = 34, the paper's log)."""
    pb = build_problem(DataConfig())  # defaults are Syn-Small's data
    K = Q = 2
    M_ctx = 10 + 10 * K
    assert (pb.K, pb.Q, pb.M_ctx, pb.M, pb.M_out) == (K, Q, M_ctx, M_ctx + Q + K, M_ctx + Q + K)
    assert pb.M == 34  # M_code in the released log (science §1.3)
    assert list(pb.query_ids) == [M_ctx, M_ctx + 1] and list(pb.label_ids) == [M_ctx + Q, M_ctx + Q + 1]
    assert list(pb.psi) == [0, 1]
    weights = np.linspace(0.1, 1.0, 10)  # unnormalised: 1 per common token, linspace(0.1, 1, 10) distinct
    total = 10 + weights.sum()  # 15.5
    np.testing.assert_allclose(pb.P[0, :10], 1 / total)
    np.testing.assert_allclose(pb.P[0, 10:20], weights / total)
    np.testing.assert_allclose(pb.P[1, 20:30], weights / total)
    assert pb.P[0, 20:].sum() == 0 and pb.P[1, 10:20].sum() == 0
    kind = pb.token_kind
    assert (kind[:, :10] == KIND_COMMON).all()
    assert (kind[0, 10:20] == KIND_DISTINCT).all() and (kind[0, 20:] == KIND_NONE).all()
    assert pb.P[0, pb.common_mask[0]].sum() == pytest.approx(10 / total)  # 0.645, science §1.3


@pytest.mark.parametrize("num_last,M", [(1, 33), (3, 79), (5, 125), (10, 240)])  # science §1.3's M_code
def test_syn_medium_vocabulary_sizes(num_last, M):
    pb = build_problem(DataConfig(num_last=num_last, num_next_per_last=2))
    K = 2 * num_last
    assert pb.M == M == 10 + 10 * K + num_last + K  # common + distinct + queries + next tokens
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
        N, p = len(rows), pb.P[n]
        mean = rows.mean(0)
        expected = (T - 1) * p
        se = np.sqrt((T - 1) * p * (1 - p) / N)
        z = np.abs(mean - expected)[se > 0] / se[se > 0]
        # ≤ 310 tokens a class: a mean 5.5 standard errors off has probability ≈ 310·2Φ(−5.5) ≈ 1e-5 (normal
        # approximation; the seed is fixed, so this is deterministic anyway)
        assert z.max() < 5.5, z.max()
        # multinomial, not independent counts: the common tokens' total is Binomial(T−1, p_C) with variance
        # (T−1)p_C(1−p_C) (independent Poisson counts: (T−1)p_C).  A sample variance over N rows has a relative
        # standard error √((2 + κ)/N), κ the binomial's excess kurtosis; allow 4 of them.
        p_C = p[pb.common_mask[n]].sum()
        var_C = (T - 1) * p_C * (1 - p_C)
        kurt = (1 - 6 * p_C * (1 - p_C)) / var_C
        total_C = rows[:, pb.common_mask[n]].sum(1)
        assert total_C.var(ddof=1) == pytest.approx(var_C, rel=4 * np.sqrt((2 + kurt) / N))
        # multinomial covariance between two common tokens: −(T−1) p_i p_j; a sample covariance of weakly
        # correlated counts has a standard error ≈ σ_i σ_j/√N; allow 4 of them
        if T > 100:
            cov = np.cov(rows[:, 0], rows[:, 1])[0, 1]
            se_cov = (T - 1) * np.sqrt(p[0] * (1 - p[0]) * p[1] * (1 - p[1]) / N)
            assert cov == pytest.approx(-(T - 1) * p[0] * p[1], abs=4 * se_cov)
    freq = np.bincount(cls, minlength=pb.K) / len(cls)
    # classes are drawn uniformly: 0.03 is ≈ 3.8 standard errors √(¼/4000) = 0.0079 of a class frequency
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
