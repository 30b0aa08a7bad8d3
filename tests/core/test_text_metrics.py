"""Attention entropy and the frequent-token share against independent numpy loops."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from scansnap.kinds.text.science import metrics as tm


def random_causal_maps(B: int, H: int, T: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    a = np.zeros((B, H, T, T))
    for i in range(T):
        w = rng.exponential(size=(B, H, i + 1)) ** 3  # peaked rows
        a[:, :, i, : i + 1] = w / w.sum(-1, keepdims=True)
    a[0, 0, 3, :4] = [0, 1, 0, 0]  # a one-hot row: 0 ln 0 must count as 0
    return a


def entropy_loop(a: np.ndarray) -> np.ndarray:
    B, H, T, _ = a.shape
    out = np.zeros(H)
    for h in range(H):
        vals = [-sum(p * math.log(p) for p in a[b, h, i, : i + 1] if p > 0) for b in range(B) for i in range(T)]
        out[h] = np.mean(vals)
    return out


def share_loop(a: np.ndarray, frequent: set[int], x: np.ndarray) -> np.ndarray:
    B, H, T, _ = a.shape
    out = np.zeros(H)
    for h in range(H):
        per_query = [
            sum(a[b, h, i, j] for j in range(i + 1) if x[b, j] in frequent) for b in range(B) for i in range(T)
        ]
        out[h] = np.mean(per_query)
    return out


def test_entropy_matches_loop():
    a = random_causal_maps(3, 2, 7)
    np.testing.assert_allclose(tm.attention_entropy(torch.as_tensor(a)).numpy(), entropy_loop(a), rtol=1e-12)


def test_share_matches_loop():
    a = random_causal_maps(3, 2, 7, seed=1)
    x = np.random.default_rng(2).integers(0, 10, size=(3, 7))
    frequent = {1, 4, 7}
    key_in = torch.as_tensor(np.isin(x, list(frequent)))
    got = tm.share_on_tokens(torch.as_tensor(a), key_in).numpy()
    np.testing.assert_allclose(got, share_loop(a, frequent, x), rtol=1e-12)


def test_uniform_references():
    T = 35  # mean_{i=1..35} ln i = ln(35!)/35 ≈ 2.632 (JoMA's "≈ 2.63")
    assert tm.uniform_causal_entropy(T) == pytest.approx(sum(math.log(i) for i in range(1, T + 1)) / T, rel=1e-12)
    assert round(tm.uniform_causal_entropy(T), 2) == 2.63
    uniform = np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]
    a = torch.as_tensor(uniform[None, None])
    assert tm.attention_entropy(a).item() == pytest.approx(tm.uniform_causal_entropy(T), rel=1e-12)
    key = np.random.default_rng(0).random((1, T)) < 0.4
    assert tm.share_on_tokens(a, torch.as_tensor(key)).item() == pytest.approx(tm.uniform_share(key), rel=1e-12)


def test_frequent_ids_skip_unk_and_rank_by_count():
    counts = np.array([100, 5, 9, 9, 1, 7])
    assert tm.frequent_ids(counts, 3).tolist() == [2, 3, 5]  # <unk> (id 0) never counts
