"""The embedded, durable run store: one SQLite database (stdlib ``sqlite3``, WAL mode).

Layout: ``<data_dir>/runs.sqlite`` (``data_dir`` = ``$SCANSNAP_DATA_DIR`` or ``./data``).

Schema::

    runs(id TEXT PRIMARY KEY, name TEXT, config_json TEXT, status TEXT, device TEXT,
         versions_json TEXT, created REAL, updated REAL, message TEXT, owner TEXT,
         pid INTEGER, host TEXT, last_step INTEGER,
         published INTEGER NOT NULL DEFAULT 0,  -- added by a migration to older databases
         kind TEXT NOT NULL DEFAULT 'synthetic',  -- likewise: every run of an older database is synthetic
         node TEXT)  -- likewise: the cluster node it trained on, NULL on this server's own workers
    statics(run_id TEXT, name TEXT, array BLOB, PRIMARY KEY(run_id, name))   -- once per run
    snapshots(run_id TEXT, step INTEGER, arrays BLOB, PRIMARY KEY(run_id, step))
    scalar_blocks(...), text_scalars(...)  -- a kind's scalars, one row per (run, metric, step)
    scalar_tables(kind, name, first, second, first_nullable)  -- which table each kind uses
    checkpoints(run_id TEXT PRIMARY KEY, step INTEGER, arrays BLOB, meta TEXT)  -- the latest; none once finished
    weights(run_id TEXT, step INTEGER, arrays BLOB, PRIMARY KEY(run_id, step))  -- a few steps' model weights

``kind``: the run kind's name (:mod:`scansnap.service.run_kinds`): ``synthetic`` (a RunConfig) or ``text`` (a
TextRunConfig, :mod:`scansnap.kinds.text.service.runs`).
``status`` is one of :data:`STATUSES`.  ``published`` (0/1) marks a run its owner broadcasts:
anyone with its link watches it live (:meth:`RunStore.list_published` lists them).
``created``/``updated`` are Unix times; ``pid`` and ``host`` identify the writer process so
that a run whose writer died can be marked ``interrupted`` when a store is next opened (same
host and pid no longer alive; a run of another host is never touched because its pid means
nothing here).

Arrays: a static is one ``.npy`` buffer, a snapshot an ``.npz`` buffer (:mod:`scansnap.service.blobs`:
written and read with ``allow_pickle=False`` only, so nothing stored is ever unpickled).

Scalars: each snapshot's metrics as columns, one table row per metric (:mod:`scansnap.service.scalar_table`,
which also converts the per-value ``scalars`` table of older databases when a store is opened);
NaN and ±inf are stored as they are (a diverged metric is NaN, never "missing").

Size bound: the writer picks full rows or top-k per snapshot; the store caps a snapshot at
:data:`MAX_SNAPSHOT_BYTES` (8 MiB compressed) and a run at :data:`MAX_SNAPSHOTS_PER_RUN` (2000)
snapshots; exceeding a cap raises :class:`StoreError`.

Concurrency and errors: see :mod:`scansnap.service.sqlite`.
"""

from __future__ import annotations

import json
import os
import re
import secrets
import socket
import time
from collections.abc import Iterable
from contextlib import suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from scansnap.service import scalar_table
from scansnap.service.blobs import pack_npy, pack_npz, unpack_npy, unpack_npz
from scansnap.service.sqlite import SqliteDB, StoreError
from scansnap.service.writers import dead_writers

if TYPE_CHECKING:
    import pandas as pd

    from scansnap.core.scalar_columns import ScalarBlocks

STATUSES = ("queued", "running", "paused", "finished", "stopped", "diverged", "failed", "interrupted")
KIND_NAME = re.compile(r"[a-z][a-z0-9_]{0,31}")  # a run kind's name (the kinds: scansnap/service/run_kinds.py)
LIVE_STATUSES = ("queued", "running", "paused")  # a run some process is (or will be) writing
MAX_SNAPSHOT_BYTES = 8 * 1024 * 1024
MAX_SNAPSHOTS_PER_RUN = 2000
DB_NAME = "runs.sqlite"

_SCHEMA = (
    scalar_table.SCHEMA
    + """;
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, name TEXT, config_json TEXT, status TEXT, device TEXT,
    versions_json TEXT, created REAL, updated REAL, message TEXT, owner TEXT,
    pid INTEGER, host TEXT, last_step INTEGER);
CREATE TABLE IF NOT EXISTS statics (
    run_id TEXT NOT NULL, name TEXT NOT NULL, array BLOB NOT NULL, PRIMARY KEY (run_id, name));
CREATE TABLE IF NOT EXISTS snapshots (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, arrays BLOB NOT NULL, PRIMARY KEY (run_id, step));
CREATE TABLE IF NOT EXISTS checkpoints (
    run_id TEXT PRIMARY KEY, step INTEGER NOT NULL, arrays BLOB NOT NULL, meta TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS weights (
    run_id TEXT NOT NULL, step INTEGER NOT NULL, arrays BLOB NOT NULL, PRIMARY KEY (run_id, step));
"""
)
SAVE_CHECKPOINT = "INSERT OR REPLACE INTO checkpoints (run_id, step, arrays, meta) VALUES (?, ?, ?, ?)"
_RUN_COLUMNS = (
    "id",
    "name",
    "config_json",
    "status",
    "device",
    "versions_json",
    "created",
    "updated",
    "message",
    "owner",
    "pid",
    "host",
    "last_step",
)
READ_COLUMNS = (*_RUN_COLUMNS, "published", "kind", "node")
ANY_OWNER = "*any*"  # find_runs: everyone's runs (None: those with no owner, made by the command line)


def _run_filter(search: str, owner: str | None) -> tuple[str, tuple[Any, ...]]:
    """The WHERE clause (and its arguments) of :meth:`RunStore.find_runs`."""
    clauses, args = [], []
    if search:
        pattern = "%" + search.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        clauses.append("(name LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\')")
        args += [pattern, pattern]
    if owner is None:
        clauses.append("owner IS NULL")
    elif owner != ANY_OWNER:
        clauses.append("owner = ?")
        args.append(owner)
    return (" WHERE " + " AND ".join(clauses) if clauses else ""), tuple(args)


# Columns added after the first release: (name, definition) for ALTER TABLE on older databases.
_MIGRATIONS = (
    ("published", "INTEGER NOT NULL DEFAULT 0"),
    ("kind", "TEXT NOT NULL DEFAULT 'synthetic'"),
    ("node", "TEXT"),
)
RENAMED_STATICS = (("synthetic", "psi", "query_of_class_id"),)  # (kind, old, new): ψ(n)'s id, not a query index
RENAME_STATIC = "UPDATE statics SET name = ? WHERE name = ? AND run_id IN (SELECT id FROM runs WHERE kind = ?)"


def stopped_message(step: int) -> str:
    """A stopped run's status message: the step it reached (:meth:`RunStore.stopped_at`), the one its row,
    its job's status and this message all say."""
    return f"stopped at step {int(step)}"


def default_data_dir() -> Path:
    """``$SCANSNAP_DATA_DIR`` if set and non-empty, else ``./data``."""
    return Path(os.environ.get("SCANSNAP_DATA_DIR") or "data")


class RunStore(SqliteDB):
    """Durable store of runs, their statics, snapshots and scalar time series.

    ``synchronous=NORMAL``: in WAL mode a committed transaction survives any crash or kill
    of the application (it is in the WAL file); only an OS crash or power loss can lose the
    last few commits, and never corrupts the database.  Snapshots are periodic training
    progress, so that trade is worth not fsyncing on every snapshot (``FULL`` would).
    """

    def __init__(self, data_dir: str | Path | None = None, busy_timeout_s: float = 5.0):
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the data directory {self.data_dir}: {exc}; set "
                "SCANSNAP_DATA_DIR to a writable directory"
            ) from exc
        super().__init__(self.data_dir / DB_NAME, busy_timeout_s)
        self.max_snapshot_bytes = MAX_SNAPSHOT_BYTES
        self.max_snapshots_per_run = MAX_SNAPSHOTS_PER_RUN
        self._host = socket.gethostname()
        with self._write("creating the schema") as con:
            for stmt in filter(str.strip, _SCHEMA.split(";")):
                con.execute(stmt)
            have = {row[1] for row in con.execute("PRAGMA table_info(runs)")}
            for col, decl in _MIGRATIONS:  # inside the same transaction: two openers cannot both add it
                if col not in have:
                    con.execute(f"ALTER TABLE runs ADD COLUMN {col} {decl}")
            for kind, before, after in RENAMED_STATICS:
                con.execute(RENAME_STATIC, (after, before, kind))
        self._migrate_scalar_rows()
        with suppress(StoreError):  # best effort: if locked right now, the next open retries
            self.recover_interrupted()

    def _migrate_scalar_rows(self) -> None:
        """Convert an older database's scalars, one run per transaction (a run is moved whole or not at
        all; an interrupted conversion goes on at the next open): per-value rows into blocks, then each
        kind's blocks out of the shared table into the kind's own (:data:`scalar_table.MOVED_OUT`)."""
        for pending, move_one in (
            (scalar_table.has_row_table, scalar_table.migrate_one_run),
            (scalar_table.has_moves, scalar_table.move_one_run),
        ):
            moved = pending(self._conn())
            while moved:
                with self._write("converting stored scalars") as con:
                    moved = pending(con) and move_one(con)

    def _table(self, run_id: str) -> scalar_table.ScalarTable:
        """The scalar table of run ``run_id``'s kind (the shared one for no such run: it has no scalars)."""
        return scalar_table.table_of_run(self._conn(), run_id) or scalar_table.SHARED

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- runs ---------------------------------------------------------------------------
    def create_run(
        self,
        name: str,
        config_json: str,
        device: str,
        versions: dict[str, str],
        owner: str | None = None,
        statics: dict[str, np.ndarray] | None = None,
        status: str = "running",
        kind: str = "synthetic",
    ) -> str:
        """Insert a run (and its static arrays) in one transaction; returns its id.  The kind's scalar
        table (:func:`scansnap.service.scalar_table.declare`) is created with its first run."""
        self._check_status(status)
        if not KIND_NAME.fullmatch(kind):
            raise ValueError(f"run kind {kind!r} is not a kind's name: 1-32 of a-z, 0-9, _; first a letter")
        try:
            json.loads(config_json)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"config_json must be a JSON string: {exc}") from exc
        blobs = [(k, pack_npy(k, v)) for k, v in (statics or {}).items()]
        run_id = secrets.token_hex(6)
        now = time.time()
        with self._write("creating a run") as con:
            scalar_table.record_table(con, kind, scalar_table.DECLARED.get(kind, scalar_table.SHARED))
            row = (
                run_id,
                name,
                config_json,
                status,
                device,
                json.dumps(dict(versions), sort_keys=True),
                now,
                now,
                None,
                owner,
                os.getpid(),
                self._host,
                None,
                kind,
            )
            con.execute(f"INSERT INTO runs ({','.join(_RUN_COLUMNS)}, kind) VALUES ({','.join('?' * 14)})", row)
            con.executemany(
                "INSERT INTO statics (run_id, name, array) VALUES (?, ?, ?)", [(run_id, k, b) for k, b in blobs]
            )
        return run_id

    def append_snapshot(
        self,
        run_id: str,
        step: int,
        arrays: dict[str, np.ndarray],
        scalars: ScalarBlocks | scalar_table.Rows,
        checkpoint: tuple[dict[str, np.ndarray], str] | None = None,
    ) -> None:
        """Write one snapshot, its scalars (blocks by metric, or tidy rows ``(replica, n, metric, value)``),
        the run's ``last_step``/``updated`` and, optionally, the training state to resume from
        (arrays, JSON metadata; one checkpoint per run, replaced), all in ONE transaction."""
        step = int(step)
        blob = pack_npz(arrays)
        ckpt = None if checkpoint is None else (pack_npz(checkpoint[0]), checkpoint[1])
        if len(blob) > self.max_snapshot_bytes:
            raise StoreError(
                f"snapshot at step {step} is {len(blob) / 2**20:.1f} MiB compressed, "
                f"over the cap of {self.max_snapshot_bytes / 2**20:g} MiB per snapshot; "
                "store fewer arrays (e.g. top-k instead of full rows) or fewer replicas"
            )
        rows = scalar_table.encode(run_id, step, scalar_table.as_blocks(scalars))
        table = self._table(run_id)
        with self._write(f"writing the snapshot of step {step}") as con:
            if con.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise KeyError(f"no run {run_id!r}")
            count = con.execute("SELECT count(*) FROM snapshots WHERE run_id = ?", (run_id,)).fetchone()[0]
            if count >= self.max_snapshots_per_run:
                raise StoreError(
                    f"run {run_id} already has {count} snapshots, the cap per run; "
                    "snapshot less often (a larger snapshot interval)"
                )
            con.execute("INSERT INTO snapshots (run_id, step, arrays) VALUES (?, ?, ?)", (run_id, step, blob))
            con.executemany(table.insert, rows)
            con.execute(
                "UPDATE runs SET last_step = max(coalesce(last_step, ?), ?), updated = ? WHERE id = ?",
                (step, step, time.time(), run_id),
            )
            if ckpt is not None:
                con.execute(SAVE_CHECKPOINT, (run_id, step, *ckpt))

    def stopped_at(self, run_id: str) -> int:
        """The step a stopped run reached, as its row shows it: ``last_step``, its last stored snapshot's
        (0 before the first).  The steps trained after that snapshot are not kept (a stop stores no
        training state): Resume from checkpoint computes them again.  KeyError: no such run."""
        rows = self._read("SELECT last_step FROM runs WHERE id = ?", (run_id,))
        if not rows:
            raise KeyError(f"no run {run_id!r}")
        return int(rows[0][0] or 0)

    def checkpoint(self, run_id: str) -> tuple[int, dict[str, np.ndarray], str] | None:
        """The latest (step, arrays, JSON metadata) saved to resume the run, or None."""
        rows = self._read("SELECT step, arrays, meta FROM checkpoints WHERE run_id = ?", (run_id,))
        return None if not rows else (int(rows[0][0]), unpack_npz(rows[0][1]), rows[0][2])

    def park(self, run_id: str, step: int, checkpoint: tuple[dict[str, np.ndarray], str], writer_pid: int) -> None:
        """A paused run whose worker ends: its training state at ``step`` (between snapshots) becomes the
        checkpoint it resumes from, and ``writer_pid`` (the server, which keeps the run) its writer,
        in one transaction.  The run stays ``paused``."""
        blob, meta = pack_npz(checkpoint[0]), checkpoint[1]
        with self._write(f"parking run {run_id} at step {step}") as con:
            cur = con.execute(
                "UPDATE runs SET status = 'paused', pid = ?, host = ?, updated = ? WHERE id = ?",
                (int(writer_pid), self._host, time.time(), run_id),
            )
            if cur.rowcount == 0:
                raise KeyError(f"no run {run_id!r}")
            con.execute(SAVE_CHECKPOINT, (run_id, int(step), blob, meta))

    def truncate_after(self, run_id: str, step: int, status: str = "running") -> None:
        """Drop snapshots and scalars after ``step`` (before resuming from a checkpoint there)."""
        with self._write(f"rewinding run {run_id} to step {step}") as con:
            for table in ("snapshots", "weights", self._table(run_id).name):
                con.execute(f"DELETE FROM {table} WHERE run_id = ? AND step > ?", (run_id, step))
            con.execute(
                "UPDATE runs SET last_step = ?, status = ?, message = NULL, pid = ?, host = ?, updated = ? "
                "WHERE id = ?",
                (step, status, os.getpid(), self._host, time.time(), run_id),
            )

    @staticmethod
    def _check_status(status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; allowed: {', '.join(STATUSES)}")

    def _update_run(self, run_id: str, sets: str, args: tuple, what: str) -> None:
        with self._write(what) as con:
            cur = con.execute(f"UPDATE runs SET {sets}, updated = ? WHERE id = ?", (*args, time.time(), run_id))
            if cur.rowcount == 0:
                raise KeyError(f"no run {run_id!r}")

    def set_status(self, run_id: str, status: str, message: str | None = None) -> None:
        """Set the status and message (``None`` clears the previous message).  A ``finished`` run is
        never resumed (only interrupted and stopped ones are), so its checkpoint is dropped with it."""
        self._check_status(status)
        with self._write("setting the status") as con:
            cur = con.execute(
                "UPDATE runs SET status = ?, message = ?, updated = ? WHERE id = ?",
                (status, message, time.time(), run_id),
            )
            if cur.rowcount == 0:
                raise KeyError(f"no run {run_id!r}")
            if status == "finished":
                con.execute("DELETE FROM checkpoints WHERE run_id = ?", (run_id,))

    def set_device(self, run_id: str, device: str) -> None:
        """The device the run trains on (known once a worker has chosen it)."""
        self._update_run(run_id, "device = ?", (device,), "recording the device")

    def add_statics(self, run_id: str, statics: dict[str, np.ndarray]) -> None:
        """Add (or replace) static arrays of a run, in one transaction (e.g. its mean-field twin)."""
        blobs = [(run_id, k, pack_npy(k, v)) for k, v in statics.items()]
        with self._write("adding statics") as con:
            if con.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise KeyError(f"no run {run_id!r}")
            con.executemany("INSERT OR REPLACE INTO statics (run_id, name, array) VALUES (?, ?, ?)", blobs)

    def save_weights(self, run_id: str, step: int, arrays: dict[str, np.ndarray]) -> None:
        """Keep the model's weights at ``step`` (a kind chooses the few steps it keeps them at)."""
        blob = pack_npz(arrays)
        with self._write("keeping the weights") as con:
            if con.execute("SELECT 1 FROM runs WHERE id = ?", (run_id,)).fetchone() is None:
                raise KeyError(f"no run {run_id!r}")
            con.execute("INSERT OR REPLACE INTO weights (run_id, step, arrays) VALUES (?, ?, ?)", (run_id, step, blob))

    def weight_steps(self, run_id: str) -> list[int]:
        """The steps whose weights are kept, ascending."""
        return [r[0] for r in self._read("SELECT step FROM weights WHERE run_id = ? ORDER BY step", (run_id,))]

    def weights(self, run_id: str, step: int) -> dict[str, np.ndarray]:
        rows = self._read("SELECT arrays FROM weights WHERE run_id = ? AND step = ?", (run_id, int(step)))
        if not rows:
            raise KeyError(f"run {run_id!r} keeps no weights at step {step}")
        return unpack_npz(rows[0][0])

    def rename(self, run_id: str, name: str) -> None:
        self._update_run(run_id, "name = ?", (name,), "renaming a run")

    def delete(self, run_id: str) -> bool:
        """Delete a run and all its rows in one transaction; False if it did not exist."""
        scalars = self._table(run_id).name
        with self._write("deleting a run") as con:
            for table in (scalars, "snapshots", "statics", "checkpoints", "weights"):
                con.execute(f"DELETE FROM {table} WHERE run_id = ?", (run_id,))
            return con.execute("DELETE FROM runs WHERE id = ?", (run_id,)).rowcount > 0

    def set_published(self, run_id: str, published: bool) -> None:
        """Broadcast a run (or stop); ``updated`` is left alone (it dates the run's data)."""
        with self._write("publishing a run") as con:
            if con.execute("UPDATE runs SET published = ? WHERE id = ?", (int(bool(published)), run_id)).rowcount == 0:
                raise KeyError(f"no run {run_id!r}")

    def list_published(self, statuses: Iterable[str] | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Published runs, newest first; ``statuses`` keeps only those (e.g. the live ones)."""
        sql = f"SELECT {','.join(READ_COLUMNS)} FROM runs WHERE published = 1"
        args: list[Any] = []
        if statuses is not None:
            args = list(statuses)
            sql += f" AND status IN ({','.join('?' * len(args))})"
        rows = self._read(sql + " ORDER BY created DESC, rowid DESC LIMIT ?", (*args, int(limit)))
        return [self._run_dict(r) for r in rows]

    def recover_interrupted(self, keep: Iterable[str] = ()) -> list[str]:
        """Mark ``queued``/``running``/``paused`` runs whose writer (same host) is dead as ``interrupted``
        (a queued run's writer is the server that queued it); ``keep``: runs a live job manager holds."""
        q = f"SELECT id, pid, last_step FROM runs WHERE status IN ({','.join('?' * len(LIVE_STATUSES))}) AND host = ?"
        done = []
        for rid, msg in dead_writers(self._read(q, (*LIVE_STATUSES, self._host)), self._host, set(keep)):
            with self._write("marking an interrupted run") as con:
                cur = con.execute(
                    "UPDATE runs SET status = 'interrupted', message = ?, updated = ? "
                    f"WHERE id = ? AND status IN ({','.join('?' * len(LIVE_STATUSES))})",
                    (msg, time.time(), rid, *LIVE_STATUSES),
                )
            if cur.rowcount:
                done.append(rid)
        return done

    @staticmethod
    def _run_dict(row: tuple) -> dict[str, Any]:
        d = dict(zip(READ_COLUMNS, row, strict=True))
        d["versions"] = json.loads(d.pop("versions_json") or "{}")
        d["published"] = bool(d["published"])
        return d

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        """All columns (``config_json`` as stored text, ``versions`` as a dict), or None."""
        rows = self._read(f"SELECT {','.join(READ_COLUMNS)} FROM runs WHERE id = ?", (run_id,))
        return self._run_dict(rows[0]) if rows else None

    def list_runs(self, limit: int = 200) -> list[dict[str, Any]]:
        return self.find_runs(limit=limit)

    def find_runs(
        self, search: str = "", owner: str | None = ANY_OWNER, offset: int = 0, limit: int = 200
    ) -> list[dict[str, Any]]:
        """Runs newest first whose name or id contains ``search`` (case-insensitive; ``%`` and ``_`` are
        plain characters), of ``owner`` (:data:`ANY_OWNER`: everyone's; None: the command line's, which
        have none), ``limit`` of them after the first ``offset``."""
        where, args = _run_filter(search, owner)
        rows = self._read(
            f"SELECT {','.join(READ_COLUMNS)} FROM runs{where} ORDER BY created DESC, rowid DESC LIMIT ? OFFSET ?",
            (*args, int(limit), int(offset)),
        )
        return [self._run_dict(r) for r in rows]

    def count_runs(self, search: str = "", owner: str | None = ANY_OWNER) -> int:
        """How many runs :meth:`find_runs` finds, all pages together."""
        where, args = _run_filter(search, owner)
        return int(self._read(f"SELECT count(*) FROM runs{where}", args)[0][0])

    # -- arrays -------------------------------------------------------------------------
    def statics(self, run_id: str) -> dict[str, np.ndarray]:
        rows = self._read("SELECT name, array FROM statics WHERE run_id = ? ORDER BY name", (run_id,))
        return {name: unpack_npy(blob) for name, blob in rows}

    def steps(self, run_id: str) -> list[int]:
        return [r[0] for r in self._read("SELECT step FROM snapshots WHERE run_id = ? ORDER BY step", (run_id,))]

    def snapshot(self, run_id: str, step: int) -> dict[str, np.ndarray]:
        rows = self._read("SELECT arrays FROM snapshots WHERE run_id = ? AND step = ?", (run_id, int(step)))
        if not rows:
            raise KeyError(f"run {run_id!r} has no snapshot at step {step}")
        return unpack_npz(rows[0][0])

    def latest_snapshot(self, run_id: str) -> tuple[int, dict[str, np.ndarray]] | None:
        rows = self._read("SELECT step, arrays FROM snapshots WHERE run_id = ? ORDER BY step DESC LIMIT 1", (run_id,))
        return (rows[0][0], unpack_npz(rows[0][1])) if rows else None

    def scalars(
        self,
        run_id: str,
        metrics: list[str] | None = None,
        since_step: int | None = None,
        until_step: int | None = None,
    ) -> pd.DataFrame:
        """Scalar rows as a frame (step, the kind's two index columns: replica, n for a synthetic run,
        layer, head for a text run; metric, value) sorted by step, then by metric in write order, each
        metric's rows in write order; ``since_step`` keeps step > since_step, ``until_step`` step ≤ until_step."""
        table = self._table(run_id)
        return table.frame(self._read(*table.select(run_id, metrics, since_step, until_step)))

    def export_counts(self, run_id: str) -> tuple[int, int, int]:
        """(snapshots, their stored bytes, scalar values) of the run, from SQLite's record headers (no
        array is read): what an export's size is estimated from."""
        t = self._table(run_id)
        ((count, blob_bytes, value_bytes),) = self._read(
            "SELECT (SELECT count(*) FROM snapshots WHERE run_id = ?1),"
            " (SELECT coalesce(sum(length(arrays)), 0) FROM snapshots WHERE run_id = ?1),"
            f" (SELECT coalesce(sum(length(value)), 0) FROM {t.name} WHERE run_id = ?1)",
            (run_id,),
        )
        return int(count), int(blob_bytes), int(value_bytes) // 8

    def upload_names(self) -> set[str]:
        """The uploaded texts stored runs train on (their configs' ``data.upload_name``)."""
        rows = self._read(
            "SELECT DISTINCT json_extract(config_json, '$.data.upload_name') FROM runs"
            " WHERE kind = 'text' AND json_valid(config_json)"
        )
        return {name for (name,) in rows if isinstance(name, str)}

    def owner_bytes(self, owner: str) -> int:
        """Stored bytes of every run of ``owner``: :meth:`size_bytes` of each, and its checkpoint."""
        ids = [r for (r,) in self._read("SELECT id FROM runs WHERE owner = ?", (owner,))]
        (ckpt,) = self._read(
            "SELECT coalesce(sum(length(c.arrays)), 0) FROM checkpoints c JOIN runs r ON r.id = c.run_id"
            " WHERE r.owner = ?",
            (owner,),
        )[0]
        return sum(self.size_bytes(r) for r in ids) + int(ckpt)

    def size_bytes(self, run_id: str) -> int:
        """Stored bytes of the run's arrays and scalar columns (SQLite's page overhead not counted)."""
        t = self._table(run_id)
        ((total,),) = self._read(
            "SELECT (SELECT coalesce(sum(length(arrays)), 0) FROM snapshots WHERE run_id = ?1)"
            " + (SELECT coalesce(sum(length(array)), 0) FROM statics WHERE run_id = ?1)"
            " + (SELECT coalesce(sum(length(arrays)), 0) FROM weights WHERE run_id = ?1)"
            f" + (SELECT coalesce(sum(length({t.first}) + length({t.second}) + length(value)), 0)"
            f" FROM {t.name} WHERE run_id = ?1)",
            (run_id,),
        )
        return int(total)
