"""Atomic file writes shared by the exports: a file appears whole or not at all (written to a temporary
name in the same folder, then renamed)."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path

import pandas as pd


def atomic_write(path: Path, write: Callable[[Path], object]) -> Path:
    """Call ``write`` on a temporary path beside ``path``, then rename it to ``path`` (removed on failure)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        write(Path(tmp))
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_table(df: pd.DataFrame, path: Path, fmt: str) -> Path:
    """``df`` as ``fmt`` (parquet via pyarrow, or csv), written atomically."""
    if fmt == "parquet":
        return atomic_write(path, lambda p: df.to_parquet(p, engine="pyarrow", index=False))
    return atomic_write(path, lambda p: df.to_csv(p, index=False))
