"""Attention statistics of a causal LM on a probe set (names as stored: ``attn_entropy``,
``attn_share_frequent``, ``attn_share_common``, ``attn_share_distinct``, ``train_loss``,
``val_loss``, ``val_ppl``).

For attention maps a of shape (B, H, T, T) (query i attends to keys j ≤ i):

    attn_entropy[h]        = mean_{b,i} −Σ_{j≤i} a_{bhij} ln a_{bhij}        (nats; 0 ln 0 = 0)
    attn_share_frequent[h] = mean_{b,i}  Σ_{j≤i} a_{bhij} 1[x_{bj} ∈ F]       (F: frequent tokens)

and the same share on Scan & Snap's common and distinct tokens (:mod:`scansnap.kinds.text.science.contexts`).

Uniform causal attention over T positions has entropy mean_i ln i (i = 1 … T); for T = 35 that is
ln(35!)/35 ≈ 2.63 nats (the "≈2.63" of JoMA's figure, science §7).
"""

from __future__ import annotations

import math

import numpy as np
import torch


def attention_entropy(a: torch.Tensor) -> torch.Tensor:
    """(H,) mean over sequences b and query positions i of −Σ_j a ln a, for a (B, H, T, T)."""
    plogp = torch.xlogy(a, a)  # 0 where a = 0 (the masked keys)
    return -plogp.sum(-1).mean(dim=(0, 2))


def share_on_tokens(a: torch.Tensor, key_in_set: torch.Tensor) -> torch.Tensor:
    """(H,) mean over b, i of the attention mass on keys whose token is in the set.
    a: (B, H, T, T); key_in_set: (B, T) bool, True where x_{bj} ∈ F."""
    mass = (a * key_in_set[:, None, None, :].to(a.dtype)).sum(-1)  # (B, H, T)
    return mass.mean(dim=(0, 2))


def uniform_causal_entropy(T: int) -> float:
    """mean_{i=1..T} ln i = ln(T!)/T: the entropy of uniform causal attention."""
    return math.lgamma(T + 1) / T


def uniform_share(key_in_set: np.ndarray) -> float:
    """The frequent-token share under uniform causal attention: mean_{b,i} (1/i) Σ_{j≤i} 1[x_bj ∈ F]."""
    f = np.asarray(key_in_set, dtype=np.float64)
    running = np.cumsum(f, axis=1) / np.arange(1, f.shape[1] + 1)
    return float(running.mean())


def frequent_ids(counts: np.ndarray, top_n: int) -> np.ndarray:
    """Ids of the ``top_n`` largest training counts, <unk> (id 0) excluded, most frequent first
    (ties: smaller id first, i.e. the vocabulary's own order)."""
    order = np.argsort(-np.asarray(counts[1:]), kind="stable") + 1
    return order[:top_n].astype(np.int64)
