"""The mean-field twins already trained, kept by their config: runs with the same twin (every run of a
preset, whatever its seed or length past 1,500 steps) reuse it instead of training it again before
their first step (~0.5 s of a slot each; a hall of students running the Lecture preset trains it once).

One table in the run store's database (``meanfield_twins``), its own connection; at most
:data:`MAX_TWINS` entries, the oldest dropped first.  The arrays are stored as the run statics are
(:mod:`scansnap.service.blobs`: never unpickled)."""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np

from scansnap.service.blobs import pack_npz, unpack_npz
from scansnap.service.sqlite import SqliteDB
from scansnap.service.store import DB_NAME

MAX_TWINS = 200  # a twin is at most 8 MB (MEANFIELD_MAX_FLOATS); most are a few KB

_SCHEMA = "CREATE TABLE IF NOT EXISTS meanfield_twins (key TEXT PRIMARY KEY, arrays BLOB NOT NULL, created REAL)"


def twin_key(twin_json: str) -> str:
    """The cache key of a twin config (its JSON, as :meth:`RunConfig.to_json` writes it)."""
    return hashlib.sha256(twin_json.encode()).hexdigest()


class TwinCache(SqliteDB):
    def __init__(self, data_dir: str | Path):
        super().__init__(Path(data_dir) / DB_NAME)
        with self._write("creating the twin cache") as con:
            con.execute(_SCHEMA)

    def get(self, key: str) -> dict[str, np.ndarray] | None:
        rows = self._read("SELECT arrays FROM meanfield_twins WHERE key = ?", (key,))
        return unpack_npz(rows[0][0]) if rows else None

    def put(self, key: str, arrays: dict[str, np.ndarray]) -> None:
        """Keep a twin (replacing one of the same key), dropping the oldest beyond :data:`MAX_TWINS`."""
        with self._write("keeping a mean-field twin") as con:
            con.execute("INSERT OR REPLACE INTO meanfield_twins VALUES (?, ?, ?)", (key, pack_npz(arrays), time.time()))
            con.execute(
                "DELETE FROM meanfield_twins WHERE key NOT IN "
                "(SELECT key FROM meanfield_twins ORDER BY created DESC LIMIT ?)",
                (MAX_TWINS,),
            )
