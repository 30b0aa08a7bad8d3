"""What the exports share: atomic file writes (a file appears whole or not at all: written to a temporary
name in the same folder, then renamed), a table written whole (:func:`write_table`) or part by part
(:func:`write_tables`: Parquet row groups, CSV rows appended), and a run's scalars read one snapshot's steps
at a time (:func:`scalar_parts`), so that an export holds one snapshot's rows at a time."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

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


def write_tables(parts: Iterable[pd.DataFrame], empty: pd.DataFrame, path: Path, fmt: str) -> Path:
    """The frames ``parts`` (same columns and dtypes) one after another as one table in ``fmt``, written
    atomically and one part at a time; the file reads back as :func:`write_table` of their concatenation
    would (``empty``, a frame of no rows with their columns, is written when no part has a row)."""
    write = _parquet_parts if fmt == "parquet" else _csv_parts
    return atomic_write(path, lambda p: write(parts, empty, p))


ROW_GROUP_ROWS = 1 << 20  # rows gathered into one Parquet row group: its dictionaries span many snapshots


def _parquet_parts(parts: Iterable[pd.DataFrame], empty: pd.DataFrame, path: Path) -> None:
    """The parts gathered into row groups of about :data:`ROW_GROUP_ROWS` rows (a row group per snapshot
    would give each its own dictionaries: a zip twice as large), in the schema of the first part with rows
    (pandas' metadata included, as ``DataFrame.to_parquet`` writes it).  At most one row group is held."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    writer: pq.ParquetWriter | None = None
    held: list[pd.DataFrame] = []

    def flush() -> None:
        nonlocal writer
        df = pd.concat(held, ignore_index=True) if len(held) > 1 else held[0]
        held.clear()
        if writer is None:
            table = pa.Table.from_pandas(df, preserve_index=False)
            writer = pq.ParquetWriter(path, table.schema, compression="snappy")
        else:
            table = pa.Table.from_pandas(df, schema=writer.schema, preserve_index=False)
        writer.write_table(table, row_group_size=max(len(df), 1))

    try:
        for df in parts:
            if not df.empty:
                held.append(df)
                if sum(len(h) for h in held) >= ROW_GROUP_ROWS:
                    flush()
        if held:
            flush()
    finally:
        if writer is not None:
            writer.close()
    if writer is None:
        empty.to_parquet(path, engine="pyarrow", index=False)


def _csv_parts(parts: Iterable[pd.DataFrame], empty: pd.DataFrame, path: Path) -> None:
    """The header once, then every part's rows appended (pandas formats each value on its own, so the
    text is that of the whole frame's ``to_csv``)."""
    with open(path, "w", encoding="utf-8", newline="") as f:
        header = True
        for df in parts:
            if not df.empty:
                df.to_csv(f, index=False, header=header)
                header = False
        if header:
            empty.to_csv(f, index=False)


def step_windows(steps: list[int]) -> list[tuple[int | None, int | None]]:
    """(after, until) windows of steps that cover every step once, in order: one up to each stored
    snapshot's step, and one past the last."""
    bounds: list[int | None] = [None, *steps]
    return [*zip(bounds, steps, strict=False), (bounds[-1], None)]


def scalar_parts(store: Any, run_id: str) -> Iterator[pd.DataFrame]:
    """The run's scalar rows as ``store.scalars(run_id)`` gives them, one window of :func:`step_windows`
    at a time (scalars are written with snapshots: one snapshot's rows a part); concatenated, the whole
    run's frame."""
    for after, until in step_windows(store.steps(run_id)):
        yield store.scalars(run_id, since_step=after, until_step=until)
