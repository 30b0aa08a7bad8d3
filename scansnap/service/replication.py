"""A run's rows copied from one store into another: how a run trained on a cluster node reaches the
server's store (:mod:`scansnap.service.cluster`).  The node reads the rows written since the last ones
it sent (:func:`read_rows`) and the server writes them (:func:`write_rows`), each in one transaction,
as they are in the database (nothing decoded, nothing unpickled: BLOBs of ``.npy``/``.npz``)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from scansnap.service import scalar_table
from scansnap.service.store import READ_COLUMNS, SAVE_CHECKPOINT, RunStore

TRAINED = ("status", "message", "device", "updated", "last_step", "pid", "host", "node")  # what training writes


@dataclass(frozen=True)
class RunRows:
    """A run's stored rows written after step ``after`` (-1: all of them): its row in ``runs``
    (:data:`~scansnap.service.store.READ_COLUMNS`), its statics (None: not read), its snapshots and
    scalar rows after ``after``, and its checkpoint (None: it has none)."""

    kind: str
    table: scalar_table.ScalarTable  # where the kind keeps its scalars
    after: int
    run: tuple[Any, ...]
    statics: list[tuple[str, bytes]] | None
    snapshots: list[tuple[int, bytes]]
    scalar_columns: tuple[str, ...]
    scalars: list[tuple[Any, ...]]
    checkpoint: tuple[int, bytes, str] | None

    @property
    def run_id(self) -> str:
        return str(self.run[0])

    @property
    def last_step(self) -> int:
        return max([self.after, *(s for s, _ in self.snapshots)])


def read_rows(store: RunStore, run_id: str, after: int = -1, statics: bool = True) -> RunRows:
    """Run ``run_id``'s rows written after step ``after`` (all for -1), read in one transaction;
    ``statics=False`` leaves its statics out."""
    table = store._table(run_id)
    with store._write(f"reading run {run_id}") as con:  # BEGIN IMMEDIATE: one consistent view
        row = con.execute(f"SELECT {','.join(READ_COLUMNS)} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise KeyError(f"no run {run_id!r}")
        cur = con.execute(f"SELECT * FROM {table.name} WHERE run_id = ? AND step > ?", (run_id, after))
        columns = tuple(d[0] for d in cur.description)
        return RunRows(
            kind=row[READ_COLUMNS.index("kind")],
            table=table,
            after=after,
            run=tuple(row),
            statics=None
            if not statics
            else con.execute("SELECT name, array FROM statics WHERE run_id = ? ORDER BY name", (run_id,)).fetchall(),
            snapshots=con.execute(
                "SELECT step, arrays FROM snapshots WHERE run_id = ? AND step > ? ORDER BY step", (run_id, after)
            ).fetchall(),
            scalar_columns=columns,
            scalars=cur.fetchall(),
            checkpoint=con.execute("SELECT step, arrays, meta FROM checkpoints WHERE run_id = ?", (run_id,)).fetchone(),
        )


def statics_sizes(store: RunStore, run_id: str) -> list[tuple[str, int]]:
    """(name, bytes) of each static of the run: what tells a node whether its statics changed."""
    return store._read("SELECT name, length(array) FROM statics WHERE run_id = ? ORDER BY name", (run_id,))


def write_rows(
    store: RunStore, rows: RunRows, node: str | None = None, create: bool = False, writer_pid: int | None = None
) -> None:
    """Write ``rows`` (:func:`read_rows` of another store) into ``store`` in one transaction: the run's
    row (of a run the store holds: the columns training writes, :data:`TRAINED`; process
    ``writer_pid`` of this host, default this one, its writer; ``node`` where it trains), its statics
    when given, its snapshots and scalars after ``rows.after`` replaced by those given, its checkpoint
    replaced (or dropped).  Idempotent.  A run the store does not hold raises KeyError unless
    ``create`` (it was deleted there)."""
    writer = {"pid": writer_pid or os.getpid(), "host": store._host, "node": node}
    run = dict(zip(READ_COLUMNS, rows.run, strict=True)) | writer
    with store._write(f"writing the rows of run {rows.run_id}") as con:
        scalar_table.record_table(con, rows.kind, rows.table)
        exists = con.execute("SELECT 1 FROM runs WHERE id = ?", (rows.run_id,)).fetchone() is not None
        if not exists and not create:
            raise KeyError(f"no run {rows.run_id!r}")
        if exists:  # what training changes; its name and publication are the server's
            con.execute(
                f"UPDATE runs SET {', '.join(f'{c} = ?' for c in TRAINED)} WHERE id = ?",
                (*(run[c] for c in TRAINED), rows.run_id),
            )
        else:
            con.execute(f"INSERT INTO runs ({','.join(run)}) VALUES ({','.join('?' * len(run))})", tuple(run.values()))
        if rows.statics is not None:
            con.execute("DELETE FROM statics WHERE run_id = ?", (rows.run_id,))
            con.executemany(
                "INSERT INTO statics (run_id, name, array) VALUES (?, ?, ?)",
                [(rows.run_id, n, a) for n, a in rows.statics],
            )
        for name in ("snapshots", rows.table.name):
            con.execute(f"DELETE FROM {name} WHERE run_id = ? AND step > ?", (rows.run_id, rows.after))
        con.executemany(
            "INSERT INTO snapshots (run_id, step, arrays) VALUES (?, ?, ?)",
            [(rows.run_id, s, a) for s, a in rows.snapshots],
        )
        cols, marks = ",".join(rows.scalar_columns), ",".join("?" * len(rows.scalar_columns))
        con.executemany(f"INSERT INTO {rows.table.name} ({cols}) VALUES ({marks})", rows.scalars)
        con.execute("DELETE FROM checkpoints WHERE run_id = ?", (rows.run_id,))
        if rows.checkpoint is not None:
            con.execute(SAVE_CHECKPOINT, (rows.run_id, *rows.checkpoint))
