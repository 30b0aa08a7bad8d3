"""Whether the run store can be used: what the server's ``/healthz`` reports (``/_stcore/health``
only says that the web server answers)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from engine.service.store import DB_NAME


def store_health(data_dir: str | Path) -> tuple[bool, str]:
    """(ok, detail): the store opens read-only and its tables answer a query.  A missing store is
    healthy (it is created on first use); a damaged or unreadable one is not."""
    path = Path(data_dir) / DB_NAME
    if not path.exists():
        return True, f"no run store yet at {path} (created on first use)"
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=2.0) as con:
            (runs,) = con.execute("SELECT count(*) FROM runs").fetchone()
    except sqlite3.Error as e:
        return False, f"the run store {path} cannot be read: {e}"
    return True, f"run store {path}: {runs} runs"
