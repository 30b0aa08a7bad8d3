"""The store's scalar tables: one row per (run, metric, step) holding that metric's values as columns.

Each run kind has its table (:class:`ScalarTable`), its two index columns named for what they hold;
the synthetic kind's (and any kind's that declares none) is::

    scalar_blocks(run_id TEXT, metric TEXT, step INTEGER, seq INTEGER,
                  replica BLOB, n BLOB, value BLOB, PRIMARY KEY (run_id, metric, step)) WITHOUT ROWID

and the real-text kind's ``text_scalars`` has ``layer`` and ``head`` in their place.  ``seq`` is the
metric's position in its snapshot (the order the metrics were written); the BLOBs are little-endian
``int32`` (the index columns; -1 = none: no class, a run-level metric, the mean over heads) and
``float64`` (value, NaN and ±inf as they are).  A 160-replica snapshot is ~40 table rows instead of
~35,000, so writing it is one B-tree insert per metric and reading a metric reads its blocks only.

Databases written before this table kept one row per value in ``scalars(run_id, step, replica,
n, metric, value)`` (NaN stored as NULL); :func:`migrate_one_run` converts them, one run per call.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from scansnap.core.scalar_columns import NO_CLASS, ScalarBlocks, blocks_from_rows

if TYPE_CHECKING:
    import pandas as pd

Rows = Iterable[tuple[int, int | None, str, float]]  # tidy rows (first, second or None, metric, value)


@dataclass(frozen=True)
class ScalarTable:
    """A kind's scalar table ``name``: its index columns ``first`` and ``second`` (-1 = none, read as
    <NA>; the first is read as plain int64 unless ``first_nullable``)."""

    name: str
    first: str
    second: str
    first_nullable: bool = False

    def __post_init__(self) -> None:
        for word in (self.name, self.first, self.second):
            if not IDENTIFIER.fullmatch(word) or word in ("run_id", "metric", "step", "seq", "value"):
                raise ValueError(f"{word!r} cannot name a scalar table or column: a-z, 0-9, _ (first a letter)")

    @property
    def schema(self) -> str:
        return (
            f"CREATE TABLE IF NOT EXISTS {self.name} (run_id TEXT NOT NULL, metric TEXT NOT NULL, "
            f"step INTEGER NOT NULL, seq INTEGER NOT NULL, {self.first} BLOB NOT NULL, {self.second} BLOB NOT NULL, "
            "value BLOB NOT NULL, PRIMARY KEY (run_id, metric, step)) WITHOUT ROWID"
        )

    @property
    def insert(self) -> str:
        return (
            f"INSERT INTO {self.name} (run_id, metric, step, seq, {self.first}, {self.second}, value) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)"
        )

    def select(
        self, run_id: str, metrics: list[str] | None, since_step: int | None, until_step: int | None = None
    ) -> tuple[str, list[Any]]:
        """The query (and its arguments) of a run's blocks (step > ``since_step``, ≤ ``until_step`` where
        given), in step order, then write order."""
        sql = f"SELECT step, metric, {self.first}, {self.second}, value FROM {self.name} WHERE run_id = ?"
        args: list[Any] = [run_id]
        if metrics is not None:
            sql += f" AND metric IN ({','.join('?' * len(metrics))})"
            args += list(metrics)
        if since_step is not None:
            sql += " AND step > ?"
            args.append(int(since_step))
        if until_step is not None:
            sql += " AND step <= ?"
            args.append(int(until_step))
        return sql + " ORDER BY step, seq", args

    def frame(self, rows: list[tuple[int, str, bytes, bytes, bytes]]) -> pd.DataFrame:
        """Table rows (step, metric, first, second, value), in order, as one frame: step, first (int64, or
        Int64 when nullable), second (Int64), metric (object), value (float64); -1 is <NA>."""
        import pandas as pd  # here: a training worker that only writes never pays for its import

        sizes = np.array([len(r[4]) // _FLOAT_LE.dtype.itemsize for r in rows], dtype=np.int64)
        first = _INT_LE.unpack(r[2] for r in rows).astype(np.int64)
        second = _INT_LE.unpack(r[3] for r in rows).astype(np.int64)
        return pd.DataFrame(
            {
                "step": np.repeat(np.array([r[0] for r in rows], dtype=np.int64), sizes),
                self.first: pd.arrays.IntegerArray(first, first == NO_CLASS) if self.first_nullable else first,
                self.second: pd.arrays.IntegerArray(second, second == NO_CLASS),
                "metric": np.repeat(np.array([r[1] for r in rows], dtype=object), sizes),
                "value": _FLOAT_LE.unpack(r[4] for r in rows).astype(np.float64),
            }
        )


IDENTIFIER = re.compile(r"[a-z][a-z0-9_]{0,62}")
SHARED = ScalarTable("scalar_blocks", "replica", "n")  # the synthetic kind's, and any kind's that names none
REGISTRY = """
CREATE TABLE IF NOT EXISTS scalar_tables (
    kind TEXT PRIMARY KEY, name TEXT NOT NULL, first TEXT NOT NULL, second TEXT NOT NULL,
    first_nullable INTEGER NOT NULL)
"""
SCHEMA = SHARED.schema + ";" + REGISTRY


DECLARED: dict[str, ScalarTable] = {}  # a kind's own table, declared by the kind's module


def declare(kind: str, table: ScalarTable) -> ScalarTable:
    """Kind ``kind`` keeps its scalars in ``table`` (its runs are created with it)."""
    DECLARED[kind] = table
    return table


def table_of(con: sqlite3.Connection, kind: str) -> ScalarTable:
    """Kind ``kind``'s table, as the database records it (:data:`SHARED` when it records none)."""
    sql = "SELECT name, first, second, first_nullable FROM scalar_tables WHERE kind = ?"
    row = con.execute(sql, (kind,)).fetchone()
    return SHARED if row is None else ScalarTable(row[0], row[1], row[2], bool(row[3]))


def record_table(con: sqlite3.Connection, kind: str, table: ScalarTable) -> None:
    """Inside the caller's write transaction: create ``table`` for ``kind`` and record it; a kind keeps
    the table it was first given (another one raises ValueError: its stored runs would be lost)."""
    if table == SHARED:
        return
    have = table_of(con, kind)
    if have == table:
        return
    if have != SHARED:
        raise ValueError(f"run kind {kind!r} stores its scalars in {have}, not {table}")
    con.execute(table.schema)
    con.execute(
        "INSERT INTO scalar_tables (kind, name, first, second, first_nullable) VALUES (?, ?, ?, ?, ?)",
        (kind, table.name, table.first, table.second, int(table.first_nullable)),
    )


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


def table_of_run(con: sqlite3.Connection, run_id: str) -> ScalarTable | None:
    """The scalar table of run ``run_id``'s kind, as the database records it (None: no such run)."""
    row = con.execute(
        "SELECT t.name, t.first, t.second, t.first_nullable FROM runs r "
        "LEFT JOIN scalar_tables t ON t.kind = r.kind WHERE r.id = ?",
        (run_id,),
    ).fetchone()
    if row is None:
        return None
    name, first, second, nullable = row
    return SHARED if name is None else ScalarTable(name, first, second, bool(nullable))


# Kinds whose scalars an older release kept in the shared table, and where they go when a store opens:
# (kind, its table, the shared table's columns that held its first and second index).  Until
# 2026-11-26 a real-text run kept its layer in ``n`` and its head in ``replica``.
TEXT_SCALARS = ScalarTable("text_scalars", "layer", "head", True)  # declared by scansnap.kinds.text.service.runs
MOVED_OUT = (("text", TEXT_SCALARS, ("n", "replica")),)
_PENDING = (  # the runs of a kind with rows still in the shared table (a scan of runs, a probe of blocks)
    "SELECT r.id FROM runs r WHERE r.kind = ? AND EXISTS (SELECT 1 FROM scalar_blocks b WHERE b.run_id = r.id) LIMIT 1"
)


def has_moves(con: sqlite3.Connection) -> bool:
    """Whether a run of a kind in :data:`MOVED_OUT` still has rows in the shared table."""
    return any(con.execute(_PENDING, (kind,)).fetchone() for kind, _, _ in MOVED_OUT)


def move_one_run(con: sqlite3.Connection) -> bool:
    """Inside the caller's write transaction: move one such run (:func:`move_run`); False when none is left."""
    for kind, table, columns in MOVED_OUT:
        row = con.execute(_PENDING, (kind,)).fetchone()
        if row is not None:
            record_table(con, kind, table)
            move_run(con, row[0], table, columns)
            return True
    return False


def move_run(con: sqlite3.Connection, run_id: str, dst: ScalarTable, columns: tuple[str, str]) -> None:
    """Inside the caller's write transaction: move run ``run_id``'s blocks from the shared table into
    ``dst``, its ``columns`` of the shared table (each as it is) becoming ``dst``'s first and second."""
    a, b = columns
    con.execute(
        f"INSERT INTO {dst.name} (run_id, metric, step, seq, {dst.first}, {dst.second}, value) "
        f"SELECT run_id, metric, step, seq, {a}, {b}, value FROM {SHARED.name} WHERE run_id = ?",
        (run_id,),
    )
    con.execute(f"DELETE FROM {SHARED.name} WHERE run_id = ?", (run_id,))


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
        con.executemany(SHARED.insert, encode(first[0], step, blocks_from_rows(got)))
    con.execute("DELETE FROM scalars WHERE run_id = ?", first)
    return True
