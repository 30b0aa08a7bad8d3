"""A snapshot's scalar metrics as columns: one block per metric, its rows (replica, n, value) in order.

``n`` is the class (or, for a text run, the layer) a row belongs to; :data:`NO_CLASS` marks a
row that belongs to none (a replica-level metric or the mean over classes).  A trainer builds
the blocks with numpy, so storing 160 replicas × 10 classes × 20 metrics costs no Python loop
per row; small writers (and tests) may still give tidy rows to :func:`blocks_from_rows`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

NO_CLASS = -1  # n of a row that belongs to no class


class ScalarColumns(NamedTuple):
    """The rows of one metric: replica (int64), n (int64, :data:`NO_CLASS` for none), value (float64)."""

    replica: np.ndarray
    n: np.ndarray
    value: np.ndarray


ScalarBlocks = dict[str, ScalarColumns]  # metric name → its rows, in the order the metrics were written


def per_replica(values: np.ndarray) -> ScalarColumns:
    """Rows (r, none, values[r]) for r = 0 … R−1."""
    v = np.asarray(values, dtype=np.float64).reshape(-1)
    return ScalarColumns(np.arange(v.size, dtype=np.int64), np.full(v.size, NO_CLASS, np.int64), v)


def per_class(values: np.ndarray, keep_classes: bool) -> ScalarColumns:
    """For an (R, K) metric: the class means (r, none, mean_n values[r, n]) for every r, then, if
    ``keep_classes``, every (r, n, values[r, n]) in row-major order (r outer, n inner)."""
    v = np.asarray(values, dtype=np.float64)
    with warnings.catch_warnings():  # a replica whose classes are all NaN (diverged) has a NaN mean
        warnings.simplefilter("ignore", RuntimeWarning)
        means = per_replica(np.nanmean(v, axis=1))
    if not keep_classes:
        return means
    r, k = v.shape
    return ScalarColumns(
        np.concatenate([means.replica, np.repeat(np.arange(r, dtype=np.int64), k)]),
        np.concatenate([means.n, np.tile(np.arange(k, dtype=np.int64), r)]),
        np.concatenate([means.value, v.reshape(-1)]),
    )


def blocks_from_rows(rows: Iterable[tuple[int, int | None, str, float]]) -> ScalarBlocks:
    """Tidy rows (replica, n or None, metric, value) grouped by metric, each metric's rows in the
    order given and the metrics in the order of their first row."""
    grouped: dict[str, list[tuple[int, int, float]]] = {}
    for replica, n, metric, value in rows:
        grouped.setdefault(str(metric), []).append((int(replica), NO_CLASS if n is None else int(n), float(value)))
    return {
        metric: ScalarColumns(
            np.array([r for r, _, _ in got], dtype=np.int64),
            np.array([n for _, n, _ in got], dtype=np.int64),
            np.array([v for _, _, v in got], dtype=np.float64),
        )
        for metric, got in grouped.items()
    }
