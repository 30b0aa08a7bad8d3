"""Whether the run store can be used: what the server's ``/healthz`` reports (``/_stcore/health``
only says that the web server answers).

Besides a query on the runs table, SQLite's ``PRAGMA quick_check`` reads every b-tree page, so a
store whose pages are damaged is reported even while its first table still answers.  The check is
bounded in time (:data:`CHECK_BUDGET_S`: a progress handler stops it; a store too large to check
in time is reported healthy, saying so) and its verdict is kept for :data:`CHECK_TTL_S` seconds
or until the file changes, so a health probe every few seconds does not read the store each time.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from contextlib import closing
from pathlib import Path

from scansnap.service.store import DB_NAME

CHECK_TTL_S = 30.0  # a verdict is reused this long (unless the file's size or mtime changes)
CHECK_BUDGET_S = 5.0  # quick_check is stopped after this long
CHECK_ERRORS = 3  # problems quick_check lists at most (the first one is the reason given)
PROGRESS_OPS = 10_000  # SQLite virtual-machine steps between two looks at the clock

_cache: dict[Path, tuple[float, tuple[int, int], tuple[bool, str]]] = {}
_lock = threading.Lock()
_refreshing: set[Path] = set()  # stores whose verdict a thread renews now


def store_health(data_dir: str | Path, now: float | None = None, stale_ok: bool = False) -> tuple[bool, str]:
    """(ok, detail): the store opens read-only, its tables answer a query and ``quick_check`` finds no
    damage.  A missing store is healthy (it is created on first use); a damaged or unreadable one is not.
    ``stale_ok`` (a page drawing its notice): the last verdict, however old, while a fresh one is checked
    in a thread of its own; only the first check is waited for."""
    path = Path(data_dir) / DB_NAME
    if not path.exists():
        return True, f"no run store yet at {path} (created on first use)"
    now = time.monotonic() if now is None else now
    with _lock:  # concurrent probes wait for one check instead of each running it
        try:
            st = path.stat()
        except OSError as e:
            return False, f"the run store {path} cannot be read: {e}"
        stamp = (st.st_size, st.st_mtime_ns)
        kept = _cache.get(path)
        if kept is not None and kept[1] == stamp and now - kept[0] < CHECK_TTL_S:
            return kept[2]
        if stale_ok and kept is not None:
            _refresh_later(data_dir, path)
            return kept[2]
        verdict = _check(path, CHECK_BUDGET_S)
        _cache[path] = (now, stamp, verdict)
        return verdict


def _refresh_later(data_dir: str | Path, path: Path) -> None:
    """Check the store again in a daemon thread (one at a time per store; the caller holds ``_lock``)."""
    if path in _refreshing:
        return
    _refreshing.add(path)

    def refresh() -> None:
        try:
            store_health(data_dir)
        finally:
            with _lock:
                _refreshing.discard(path)

    threading.Thread(target=refresh, name="store-health", daemon=True).start()


def _check(path: Path, budget_s: float) -> tuple[bool, str]:
    """Count the runs, then ``quick_check`` the whole file within ``budget_s`` seconds."""
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0)) as con:
            (runs,) = con.execute("SELECT count(*) FROM runs").fetchone()
            problem = _quick_check(con, time.monotonic() + budget_s)
    except sqlite3.Error as e:
        return False, f"the run store {path} cannot be read: {e}"
    if problem is None:
        return True, f"run store {path}: {runs} runs (quick_check stopped after {budget_s:g} s: not verified)"
    if problem != "ok":
        return False, f"the run store {path} is damaged (quick_check: {problem}); {runs} runs are listed"
    return True, f"run store {path}: {runs} runs, quick_check ok"


def _quick_check(con: sqlite3.Connection, deadline: float) -> str | None:
    """What ``PRAGMA quick_check`` says ("ok", or the first problems it lists); None when it was stopped
    at ``deadline``."""
    con.set_progress_handler(lambda: time.monotonic() > deadline, PROGRESS_OPS)
    try:
        return "; ".join(row[0] for row in con.execute(f"PRAGMA quick_check({CHECK_ERRORS})"))
    except sqlite3.DatabaseError as e:  # stopped by the handler, or a page it cannot even parse
        return None if str(e) == "interrupted" else str(e)
