"""The store's scalar table: one row per (run, metric, step) holding that metric's values as columns.

Schema::

    scalar_blocks(run_id TEXT, metric TEXT, step INTEGER, seq INTEGER,
                  replica BLOB, n BLOB, value BLOB, PRIMARY KEY (run_id, metric, step)) WITHOUT ROWID

``seq`` is the metric's position in its snapshot (the order the metrics were written); the BLOBs
are little-endian ``int32`` (replica, n; n = -1 for a row of no class) and ``float64`` (value, NaN
and ±inf as they are).  A 160-replica snapshot is ~40 table rows instead of ~35,000, so writing
it is one B-tree insert per metric and reading a metric reads its blocks only.

Databases written before this table kept one row per value in ``scalars(run_id, step, replica,
n, metric, value)`` (NaN stored as NULL); :func:`migrate_one_run` converts them, one run per call.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from engine.core.scalar_columns import NO_CLASS, ScalarBlocks, blocks_from_rows

if TYPE_CHECKING:
    import pandas as pd

SCHEMA = """
CREATE TABLE IF NOT EXISTS scalar_blocks (
    run_id TEXT NOT NULL, metric TEXT NOT NULL, step INTEGER NOT NULL, seq INTEGER NOT NULL,
    replica BLOB NOT NULL, n BLOB NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (run_id, metric, step)) WITHOUT ROWID
"""
Rows = Iterable[tuple[int, int | None, str, float]]  # tidy rows (replica, n or None, metric, value)
INSERT = "INSERT INTO scalar_blocks (run_id, metric, step, seq, replica, n, value) VALUES (?, ?, ?, ?, ?, ?, ?)"


def as_blocks(scalars: ScalarBlocks | Rows) -> ScalarBlocks:
    """Blocks by metric as given, or tidy rows (replica, n or None, metric, value) grouped into them."""
    return dict(scalars) if isinstance(scalars, Mapping) else blocks_from_rows(scalars)


def encode(run_id: str, step: int, blocks: ScalarBlocks) -> list[tuple[Any, ...]]:
    """The table rows of one snapshot, ``seq`` = each metric's position; raises ValueError for a
    block whose columns differ in length or whose n is below :data:`NO_CLASS`."""
    out = []
    for seq, (metric, cols) in enumerate(blocks.items()):
        replica, n, value = (np.asarray(c).reshape(-1) for c in cols)
        if not replica.size == n.size == value.size:
            raise ValueError(f"metric {metric!r}: replica, n and value have different lengths")
        if n.size and n.min() < NO_CLASS:
            raise ValueError(f"metric {metric!r}: n must be a class ≥ 0, or {NO_CLASS} for none")
        packed = (_INT_LE.pack(replica), _INT_LE.pack(n), _FLOAT_LE.pack(value))
        out.append((run_id, str(metric), int(step), seq, *packed))
    return out


class _Column:
    """One fixed-width little-endian dtype: a column to bytes and back (no header, no pickle)."""

    def __init__(self, dtype: str):
        self.dtype = np.dtype(dtype)

    def pack(self, column: np.ndarray) -> bytes:
        return np.ascontiguousarray(column, dtype=self.dtype).tobytes()

    def unpack(self, blobs: Iterable[bytes]) -> np.ndarray:
        parts = [np.frombuffer(b, dtype=self.dtype) for b in blobs]
        return np.concatenate(parts) if parts else np.zeros(0, self.dtype)


_INT_LE, _FLOAT_LE = _Column("<i4"), _Column("<f8")


def frame(rows: list[tuple[int, str, bytes, bytes, bytes]]) -> pd.DataFrame:
    """Table rows (step, metric, replica, n, value), in order, as one frame: step, replica (int64),
    n (Int64, <NA> for no class), metric (object), value (float64)."""
    import pandas as pd  # here: a training worker that only writes never pays for its import

    sizes = np.array([len(r[4]) // _FLOAT_LE.dtype.itemsize for r in rows], dtype=np.int64)
    n = _INT_LE.unpack(r[3] for r in rows).astype(np.int64)
    return pd.DataFrame(
        {
            "step": np.repeat(np.array([r[0] for r in rows], dtype=np.int64), sizes),
            "replica": _INT_LE.unpack(r[2] for r in rows).astype(np.int64),
            "n": pd.arrays.IntegerArray(n, n == NO_CLASS),
            "metric": np.repeat(np.array([r[1] for r in rows], dtype=object), sizes),
            "value": _FLOAT_LE.unpack(r[4] for r in rows).astype(np.float64),
        }
    )


def has_row_table(con: sqlite3.Connection) -> bool:
    """Whether the database still has the per-value ``scalars`` table of older releases."""
    return con.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'scalars'").fetchone() is not None


def migrate_one_run(con: sqlite3.Connection) -> bool:
    """Inside the caller's write transaction: move one run's rows from the old ``scalars`` table
    into blocks (by step, each metric's rows in their old order, the metrics in the order of their
    first row) and delete them there; drop the old table once it is empty.  False when nothing
    was left to move."""
    first = con.execute("SELECT run_id FROM scalars LIMIT 1").fetchone()
    if first is None:
        con.execute("DROP TABLE scalars")  # its index goes with it
        return False
    rows = con.execute(
        "SELECT step, replica, n, metric, value FROM scalars WHERE run_id = ? ORDER BY step, rowid", first
    ).fetchall()
    by_step: dict[int, list[tuple[int, int | None, str, float]]] = {}
    for step, replica, n, metric, value in rows:
        by_step.setdefault(int(step), []).append((replica, n, metric, np.nan if value is None else value))
    for step, got in by_step.items():
        con.executemany(INSERT, encode(first[0], step, blocks_from_rows(got)))
    con.execute("DELETE FROM scalars WHERE run_id = ?", first)
    return True


def select(run_id: str, metrics: list[str] | None, since_step: int | None) -> tuple[str, list[Any]]:
    """The query (and its arguments) of a run's blocks, in step order, then write order."""
    sql = "SELECT step, metric, replica, n, value FROM scalar_blocks WHERE run_id = ?"
    args: list[Any] = [run_id]
    if metrics is not None:
        sql += f" AND metric IN ({','.join('?' * len(metrics))})"
        args += list(metrics)
    if since_step is not None:
        sql += " AND step > ?"
        args.append(int(since_step))
    return sql + " ORDER BY step, seq", args
