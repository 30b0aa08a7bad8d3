"""Quick checks of tests/oracles/reference.py, the naive re-implementation of the paper's code
(science §1.3, §2.8, §3)."""

import math

import numpy as np
import pytest
import torch

from tests.oracles.reference import (
    ReferenceModel2,
    attention_c,
    entropy_distinct,
    paper_tokens,
    sample_sequences,
    train_reference,
)


def syn_small():
    return paper_tokens(num_last=2, num_next_per_last=1, num_common=10, num_common_per_last=0, num_unique_per_next=10)


def test_syn_small_layout():
    tok = syn_small()
    assert tok["M"] == 34 and tok["K"] == 2
    assert list(tok["query_of_next"]) == [30, 31]
    assert list(tok["next_token_ids"]) == [32, 33]
    P = tok["P"]
    assert P.shape == (2, 34) and P.dtype == np.float64
    assert np.allclose(P.sum(1), 1.0)
    for n in range(2):
        assert np.allclose(P[n, :10], 1 / 15.5)
        block = np.arange(10 + 10 * n, 20 + 10 * n)
        assert np.allclose(P[n, block], 0.1 * np.arange(1, 11) / 15.5)
        other = np.setdiff1d(np.arange(34), np.concatenate([np.arange(10), block]))
        assert np.all(P[n, other] == 0)
    assert math.isclose(P[0, :10].sum(), 0.645, abs_tol=5e-4)
    # the paper's own float32 probabilities (figure_4.log prints 0.0645 and 0.0065 … 0.0645)
    assert torch.allclose(tok["support_probs"][0].double(), torch.as_tensor(P[0, tok["support"][0]]), atol=1e-7)


@pytest.mark.parametrize(("num_last", "M"), [(1, 33), (3, 79), (5, 125), (10, 240)])
def test_syn_medium_sizes(num_last, M):
    tok = paper_tokens(num_last, 2, 10, 0, 10)
    K = 2 * num_last
    assert tok["M"] == M and tok["K"] == K
    q0 = 10 + 10 * K
    # next tokens 2m and 2m+1 share query m
    assert list(tok["query_of_next"]) == [q0 + n // 2 for n in range(K)]
    assert list(tok["next_token_ids"]) == list(range(q0 + num_last, M))
    if num_last == 1:  # figure_6.log: query token 30, next tokens 31 and 32
        assert list(tok["query_of_next"]) == [30, 30] and list(tok["next_token_ids"]) == [31, 32]


def test_per_query_common_tokens_are_shared_within_the_query_only():
    tok = paper_tokens(num_last=2, num_next_per_last=2, num_common=3, num_common_per_last=2, num_unique_per_next=4)
    supp = tok["P"] > 0
    # ids 3,4 belong to query 0 (classes 0, 1); ids 5,6 to query 1 (classes 2, 3)
    assert supp[:, 3:5].tolist() == [[True, True], [True, True], [False, False], [False, False]]
    assert supp[:, 5:7].tolist() == [[False, False], [False, False], [True, True], [True, True]]
    assert np.all(supp[:, :3])
    assert tok["M"] == 3 + 4 + 16 + 2 + 4


def test_sampler_rows():
    tok = syn_small()
    g = torch.Generator().manual_seed(0)
    seq, cls = sample_sequences(tok, 64, 128, g)
    assert seq.shape == (64, 128) and seq.dtype == torch.long
    for i in range(64):
        n = int(cls[i])
        assert int(seq[i, -1]) == tok["query_of_next"][n]
        assert np.all(tok["P"][n, seq[i, :-1].numpy()] > 0)


def test_zero_init_entropy_and_c():
    tok = syn_small()
    Z0 = np.zeros((34, 34))
    assert np.allclose(entropy_distinct(Z0, tok), 2.151, atol=5e-4)
    c = attention_c(Z0, tok)
    assert np.allclose(c, tok["P"])


def loop_forward(Y, Z, seq):
    """Per sequence, position by position (science §2.3)."""
    out = []
    for row in seq.tolist():
        keys, q = row[:-1], row[-1]
        a = torch.tensor([Z[q, k] for k in keys], dtype=torch.float64)
        b = torch.softmax(a, 0)
        s = torch.zeros(Z.shape[0], dtype=torch.float64)
        for t, k in enumerate(keys):
            s[k] += b[t]
        f = s / s.norm()
        out.append(Y.T @ f)
    return torch.stack(out)


@pytest.mark.parametrize("paper_matmul", [False, True])
def test_forward_equals_loop(paper_matmul):
    torch.manual_seed(3)
    M = 7
    model = ReferenceModel2(M, zero_init=False, paper_matmul=paper_matmul).double()
    with torch.no_grad():
        model.K2.weight.normal_()
    seq = torch.randint(0, M, (4, 9))
    Y = model.K1.weight.detach().T
    Z = model.K2.weight.detach()
    assert torch.allclose(model(seq), loop_forward(Y, Z, seq), atol=1e-12)


def test_released_syn_small_command_learns():
    tok = syn_small()
    r = train_reference(tok, steps=10, seed=2, record_every=2)
    assert math.isclose(r["loss"][0], math.log(34), rel_tol=1e-6)  # the logged 3.5264
    assert r["loss"][-1] < 0.2 * r["loss"][0]
    c = attention_c(r["Z"], tok)
    assert np.all(c[:, :10].sum(1) < 0.645)
    assert r["record_steps"] == [0, 2, 4, 6, 8, 10]
    assert np.all(r["Z_history"][0] == 0) and np.allclose(r["Z_history"][-1], r["Z"])
    # only the query rows of Z move
    moved = np.abs(r["Z"]).sum(1) > 0
    assert moved.tolist() == [i in (30, 31) for i in range(34)]


def test_injected_batches_and_init_are_used():
    tok = paper_tokens(1, 2, 10, 0, 10)
    g = torch.Generator().manual_seed(5)
    data = [sample_sequences(tok, 16, 20, g) for _ in range(3)]
    rng = np.random.default_rng(0)
    Y0, Z0 = rng.normal(size=(33, 33)) * 0.1, rng.normal(size=(33, 33)) * 0.1
    a = train_reference(tok, steps=3, batches=data, init=(Y0, Z0), dtype=torch.float64, seed=1)
    b = train_reference(tok, steps=3, batches=data, init=(Y0, Z0), dtype=torch.float64, seed=99)
    assert np.array_equal(a["Z"], b["Z"]) and a["loss"] == b["loss"]
    assert not np.allclose(a["Z"], Z0)
