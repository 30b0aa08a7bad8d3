"""Corpus text → token ids → the paper's batches (the PyTorch word-LM tutorial's scheme).

``batchify``: the token stream of length N is cut into ``n_streams`` contiguous streams of
⌊N / n_streams⌋ tokens (the remainder is dropped), one row each.  Window k of a (S, L) stream
matrix is x = data[:, kT : kT+T′], y = data[:, kT+1 : kT+1+T′] with T′ = min(T, L − 1 − kT)
(T = bptt); one epoch is the windows k = 0 … ⌈(L − 1)/T⌉ − 1 in order.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from scansnap.kinds.text.science.corpus import CorpusText, EncodedCorpus, encode_corpus, line_chunks, split_train_valid

__all__ = [
    "CorpusText",
    "EncodedCorpus",
    "batchify",
    "encode_corpus",
    "full_windows",
    "line_chunks",
    "split_train_valid",
    "window",
    "windows_per_epoch",
]


def batchify(ids: np.ndarray, n_streams: int) -> torch.Tensor:
    """(n_streams, ⌊N/n_streams⌋) int64 tensor: stream s holds tokens s·L … (s+1)·L − 1."""
    length = len(ids) // n_streams
    return torch.as_tensor(np.asarray(ids[: length * n_streams]), dtype=torch.long).view(n_streams, length)


def windows_per_epoch(stream_length: int, bptt: int) -> int:
    """⌈(L − 1)/T⌉ windows of at most T positions cover a stream of L tokens once."""
    return max(0, math.ceil((stream_length - 1) / bptt))


def window(data: torch.Tensor, k: int, bptt: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs x and next-token targets y of window k (each (S, T′))."""
    i = k * bptt
    t = min(bptt, data.shape[1] - 1 - i)
    return data[:, i : i + t], data[:, i + 1 : i + 1 + t]


def full_windows(data: torch.Tensor, first: int, count: int, bptt: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``count`` full-length windows from window ``first`` on, stacked: x, y of shape (count·S, T)."""
    xs, ys = zip(*(window(data, first + j, bptt) for j in range(count)), strict=True)
    return torch.cat(xs), torch.cat(ys)
