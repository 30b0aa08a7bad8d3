"""One SQLite database shared by many threads: connections, transactions, and errors with a message.

Concurrency: one connection per thread (``threading.local``), so one writer thread and
many reader threads can share a :class:`RunStore`.  WAL lets readers proceed while a
write transaction is open; writers take ``BEGIN IMMEDIATE`` and wait up to the busy
timeout (5 s by default).  Every write is one transaction: on any error it is rolled back,
and "database is locked" / "database or disk is full" / ``ENOSPC`` become
:class:`StoreError` with a message saying what happened and what to do.
"""

from __future__ import annotations

import errno
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any


class StoreError(RuntimeError):
    """The store could not do what was asked; the message says why and what to do."""


class DiskFullError(StoreError):
    """The disk under the store is full: nothing of the transaction was written (freeing space mends it)."""


class SqliteDB:
    """A database file in WAL mode with one connection per thread (``threading.local``)."""

    def __init__(self, path: Path, busy_timeout_s: float = 5.0):
        self.path = path
        self.busy_timeout_s = float(busy_timeout_s)
        self._local = threading.local()
        self._all: list[tuple[threading.Thread, sqlite3.Connection]] = []  # (the thread that opened it, it)
        self._lock = threading.Lock()

    def _conn(self) -> sqlite3.Connection:
        con = getattr(self._local, "con", None)
        if con is None:
            try:
                con = sqlite3.connect(
                    self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
                )
                con.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
                mode = con.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                con.execute("PRAGMA synchronous = NORMAL")
            except (sqlite3.Error, OSError) as exc:
                raise self._translate(exc, "opening the store") from exc
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"{self.path} could not be switched to WAL mode (got {mode!r}); "
                    "put the data directory on a local file system"
                )
            self._local.con = con
            with self._lock:
                self._close_orphans()
                self._all.append((threading.current_thread(), con))
        return con

    def _close_orphans(self) -> None:
        """Close the connections of threads that have ended (the caller holds ``_lock``).  A web
        server runs every page script in a fresh thread: without this, each would leave an open
        connection, with its page cache, behind for as long as the store lives."""
        alive = []
        for thread, con in self._all:
            if thread.is_alive():
                alive.append((thread, con))
            else:
                con.close()
        self._all = alive

    def _translate(self, exc: BaseException, what: str) -> StoreError:
        msg = str(exc)
        if (isinstance(exc, OSError) and exc.errno == errno.ENOSPC) or "disk is full" in msg:
            return DiskFullError(
                f"disk is full while {what} ({msg}) in {self.path}; the transaction "
                "was rolled back and nothing was written. Free disk space (delete or "
                "export old runs) or point SCANSNAP_DATA_DIR at a larger volume."
            )
        if "locked" in msg or "busy" in msg:
            return StoreError(
                f"database is locked while {what}: another connection held the write "
                f"lock on {self.path} for more than {self.busy_timeout_s:g} s, so "
                "nothing was written. Close the other writer (another process or an "
                "open sqlite shell) and retry."
            )
        if "not a database" in msg or "malformed" in msg:
            return StoreError(
                f"the run store {self.path} is damaged ({msg}): runs cannot be listed, shown or started. "
                "The operator can move the file aside (a new, empty store is then created) or restore it "
                "from a backup; the Theory page works without it."
            )
        if isinstance(exc, sqlite3.IntegrityError):
            return StoreError(f"conflicting data while {what}: {msg}")
        return StoreError(f"run store error while {what}: {msg} ({self.path})")

    @contextmanager
    def _write(self, what: str = "writing") -> Iterator[sqlite3.Connection]:
        con = self._conn()
        try:
            con.execute("BEGIN IMMEDIATE")
            yield con
            con.execute("COMMIT")
        except BaseException as exc:
            if con.in_transaction:
                with suppress(sqlite3.Error):
                    con.execute("ROLLBACK")
            if isinstance(exc, (sqlite3.Error, OSError)):
                raise self._translate(exc, what) from exc
            raise

    def _read(self, sql: str, args: Iterable[Any] = ()) -> list[tuple]:
        try:
            return self._conn().execute(sql, tuple(args)).fetchall()
        except (sqlite3.Error, OSError) as exc:
            raise self._translate(exc, "reading") from exc

    def close(self) -> None:
        """Close every connection this store opened (any thread)."""
        with self._lock:
            cons, self._all = self._all, []
        for _thread, con in cons:
            con.close()
        self._local = threading.local()
