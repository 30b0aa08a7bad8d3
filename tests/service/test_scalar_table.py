"""Tests of the store's scalar table (scansnap.service.scalar_table): blocks in, the same tidy frame
out, and the conversion of databases that kept one row per value."""

from __future__ import annotations

import sqlite3

import numpy as np
import pandas as pd
import pytest

from scansnap.core.scalar_columns import ScalarColumns, per_class, per_replica
from scansnap.service.blobs import pack_npz
from scansnap.service.store import RunStore

# The schema of the releases before the block table (commit 3ca53d2), verbatim.
OLD_SCHEMA = """
CREATE TABLE runs (
    id TEXT PRIMARY KEY, name TEXT, config_json TEXT, status TEXT, device TEXT,
    versions_json TEXT, created REAL, updated REAL, message TEXT, owner TEXT,
    pid INTEGER, host TEXT, last_step INTEGER,
    published INTEGER NOT NULL DEFAULT 0, kind TEXT NOT NULL DEFAULT 'synthetic');
CREATE TABLE statics (
    run_id TEXT NOT NULL, name TEXT NOT NULL, array BLOB NOT NULL, PRIMARY KEY (run_id, name));
CREATE TABLE snapshots (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, arrays BLOB NOT NULL, PRIMARY KEY (run_id, step));
CREATE TABLE scalars (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, replica INTEGER NOT NULL, n INTEGER,
    metric TEXT NOT NULL, value REAL);
CREATE INDEX scalars_run_metric_step ON scalars (run_id, metric, step);
CREATE TABLE checkpoints (
    run_id TEXT PRIMARY KEY, step INTEGER NOT NULL, arrays BLOB NOT NULL, meta TEXT NOT NULL);
"""


def _frame(rows: list[tuple[int, int, int | None, str, float]]) -> pd.DataFrame:
    """What the old ``scalars()`` returned for tidy rows (step, replica, n, metric, value)."""
    return pd.DataFrame(
        {
            "step": np.array([r[0] for r in rows], dtype=np.int64),
            "replica": np.array([r[1] for r in rows], dtype=np.int64),
            "n": pd.array([r[2] for r in rows], dtype="Int64"),
            "metric": np.array([r[3] for r in rows], dtype=object),
            "value": np.array([r[4] for r in rows], dtype=np.float64),
        }
    )


def _run(store: RunStore) -> str:
    return store.create_run(name="r", config_json="{}", device="cpu", versions={})


def test_blocks_round_trip_with_nan_inf_and_no_class(tmp_path):
    with RunStore(tmp_path) as store:
        rid = _run(store)
        v = np.array([[1.0, np.nan], [np.inf, -np.inf]])
        blocks = {"loss": per_replica(np.array([0.5, np.nan])), "ent": per_class(v, keep_classes=True)}
        store.append_snapshot(rid, 3, {}, blocks)
        store.append_snapshot(rid, 7, {}, {"loss": per_replica(np.array([0.25, 0.125]))})
        got = store.scalars(rid)
        expected = [(3, 0, None, "loss", 0.5), (3, 1, None, "loss", np.nan)]
        expected += [(3, 0, None, "ent", 1.0), (3, 1, None, "ent", np.nan)]  # nanmean; mean(inf, -inf) = nan
        expected += [(3, 0, 0, "ent", 1.0), (3, 0, 1, "ent", np.nan), (3, 1, 0, "ent", np.inf)]
        expected += [(3, 1, 1, "ent", -np.inf), (7, 0, None, "loss", 0.25), (7, 1, None, "loss", 0.125)]
        pd.testing.assert_frame_equal(got, _frame(expected))
        pd.testing.assert_frame_equal(
            store.scalars(rid, metrics=["loss"], since_step=3), _frame(expected[-2:]), check_index_type=False
        )
        assert store.scalars(rid, metrics=["nope"]).empty
        # two empty snapshot archives, and replica, n (int32) and value (float64) of the 10 rows
        assert store.size_bytes(rid) == 2 * len(pack_npz({})) + len(expected) * (4 + 4 + 8)


def test_a_block_with_columns_of_different_lengths_or_a_negative_class_is_refused(tmp_path):
    with RunStore(tmp_path) as store:
        rid = _run(store)
        with pytest.raises(ValueError, match="different lengths"):
            store.append_snapshot(rid, 0, {}, {"x": ScalarColumns(np.arange(2), np.arange(3), np.zeros(2))})
        with pytest.raises(ValueError, match="class ≥ 0"):
            store.append_snapshot(rid, 0, {}, {"x": ScalarColumns(np.arange(1), np.array([-2]), np.zeros(1))})
        assert store.steps(rid) == [] and store.scalars(rid).empty  # nothing half-written


def test_truncate_and_delete_remove_the_blocks(tmp_path):
    with RunStore(tmp_path) as store:
        rid, other = _run(store), _run(store)
        for step in (0, 5, 10):
            for r in (rid, other):
                store.append_snapshot(r, step, {}, [(0, None, "loss", float(step))])
        store.truncate_after(rid, 5)
        assert store.scalars(rid)["step"].tolist() == [0, 5]
        store.delete(rid)
        assert store.scalars(rid).empty and store.scalars(other)["step"].tolist() == [0, 5, 10]


def _old_database(path, runs: dict[str, list[tuple[int, int, int | None, str, float | None]]]) -> None:
    con = sqlite3.connect(path / "runs.sqlite")
    con.executescript(OLD_SCHEMA)
    for rid, rows in runs.items():
        con.execute("INSERT INTO runs (id, name, config_json, status) VALUES (?, 'old', '{}', 'finished')", (rid,))
        con.executemany(
            "INSERT INTO scalars (run_id, step, replica, n, metric, value) VALUES (?, ?, ?, ?, ?, ?)",
            [(rid, *row) for row in rows],
        )
    con.commit()
    con.close()


def test_an_older_database_is_converted_run_by_run_and_reads_the_same(tmp_path):
    # rows as the old writer stored them: metric by metric, NaN as NULL, n NULL for no class
    a = [(0, 0, None, "loss", 1.0), (0, 1, None, "loss", None), (0, 0, None, "ent", 2.0), (0, 0, 1, "ent", 3.0)]
    a += [(10, 0, None, "loss", 0.5), (10, 1, None, "loss", 0.25), (10, 0, None, "ent", float("inf"))]
    b = [(0, -1, 0, "attn_entropy", 2.5), (0, -1, None, "val_loss", 6.0)]  # a text run: head mean = -1
    _old_database(tmp_path, {"runa": a, "runb": b})
    with RunStore(tmp_path) as store:
        for rid, rows in (("runa", a), ("runb", b)):
            expected = [(s, r, n, m, np.nan if v is None else v) for s, r, n, m, v in rows]
            pd.testing.assert_frame_equal(store.scalars(rid), _frame(expected))
        assert {r["id"] for r in store.list_runs()} == {"runa", "runb"}
        assert store.scalars("runa", metrics=["ent"], since_step=0)["value"].tolist() == [np.inf]
    con = sqlite3.connect(tmp_path / "runs.sqlite")
    tables = {name for (name,) in con.execute("SELECT name FROM sqlite_master")}
    con.close()
    assert "scalars" not in tables and "scalars_run_metric_step" not in tables and "scalar_blocks" in tables


def test_a_conversion_cut_short_goes_on_at_the_next_open(tmp_path, monkeypatch):
    from scansnap.service import scalar_table

    rows = [(0, 0, None, "loss", 1.0)]
    _old_database(tmp_path, {"runa": rows, "runb": rows, "runc": rows})
    real = scalar_table.migrate_one_run
    calls = []

    def fail_on_the_second_run(con):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed mid-way")
        return real(con)

    monkeypatch.setattr(scalar_table, "migrate_one_run", fail_on_the_second_run)
    with pytest.raises(RuntimeError, match="killed"):
        RunStore(tmp_path)
    con = sqlite3.connect(tmp_path / "runs.sqlite")
    left = con.execute("SELECT count(DISTINCT run_id) FROM scalars").fetchone()[0]
    moved = con.execute("SELECT count(DISTINCT run_id) FROM scalar_blocks").fetchone()[0]
    con.close()
    assert (left, moved) == (2, 1)  # the first run moved whole, the second rolled back whole
    monkeypatch.setattr(scalar_table, "migrate_one_run", real)
    with RunStore(tmp_path) as store:
        for rid in ("runa", "runb", "runc"):
            assert store.scalars(rid)["value"].tolist() == [1.0]
