"""Tests of scansnap.core.scalar_columns: a snapshot's metrics as one block of rows per metric."""

from __future__ import annotations

import numpy as np

from scansnap.core.scalar_columns import NO_CLASS, blocks_from_rows, per_class, per_replica


def test_per_replica_gives_one_row_per_replica_and_no_class():
    cols = per_replica(np.array([0.5, np.nan, np.inf], np.float32))
    assert cols.replica.tolist() == [0, 1, 2] and cols.n.tolist() == [NO_CLASS] * 3
    assert cols.value.dtype == np.float64
    np.testing.assert_array_equal(cols.value, [0.5, np.nan, np.inf])


def test_per_class_gives_the_class_means_then_every_value_replica_major():
    v = np.array([[1.0, 3.0, np.nan], [2.0, 4.0, 6.0]])  # R = 2 replicas, K = 3 classes
    cols = per_class(v, keep_classes=True)
    # the tidy rows a loop over r, then n, would write: the means (nanmean), then (r, n, v[r, n])
    expected = [(0, NO_CLASS, 2.0), (1, NO_CLASS, 4.0)]
    expected += [(r, n, v[r, n]) for r in range(2) for n in range(3)]
    got = list(zip(cols.replica.tolist(), cols.n.tolist(), cols.value.tolist(), strict=True))
    np.testing.assert_array_equal(np.array(got, dtype=float), np.array(expected, dtype=float))
    means_only = per_class(v, keep_classes=False)
    assert means_only.n.tolist() == [NO_CLASS, NO_CLASS] and means_only.value.tolist() == [2.0, 4.0]


def test_blocks_from_rows_groups_by_metric_in_first_seen_order_and_keeps_each_metrics_order():
    rows = [(1, None, "loss", 0.5), (0, 2, "ent", 1.0), (0, None, "loss", 0.25), (3, 0, "ent", 2.0)]
    blocks = blocks_from_rows(rows)
    assert list(blocks) == ["loss", "ent"]
    assert blocks["loss"].replica.tolist() == [1, 0] and blocks["loss"].n.tolist() == [NO_CLASS, NO_CLASS]
    assert blocks["ent"].n.tolist() == [2, 0] and blocks["ent"].value.tolist() == [1.0, 2.0]
    assert blocks_from_rows([]) == {}
