"""The synthetic kind's P(l|n) table upload (CSV), parsed with the stdlib ``csv`` module; every problem
raises :class:`~scansnap.core.config.ConfigError` saying what is wrong (the row and column) and what is allowed.

CSV format (also what :func:`table_to_csv` writes)::

    psi,l0,l1,l2          <- optional header row: its first cell is "psi"
    0,0.5,0.5,0           <- one row per next token n: psi = its query index, then P(l|n)
    1,0,0.25,0.75            for each contextual token l (rows are normalised; 0 or an empty
                             cell = l not in supp(n))
"""

from __future__ import annotations

import csv
import io
import math
from typing import Any

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.service.uploads import UploadKind, decoded_text

MAX_CSV_BYTES = 512 * 1024
MAX_CSV_ROWS = 1000  # next tokens (classes) K
MAX_CSV_COLUMNS = 20_000  # contextual tokens M_ctx
TABLE_UPLOAD = UploadKind(".csv", "P(l|n) as CSV: one row per next token n, its psi, then P(l|n) per token l")


def table_from_csv(data: bytes) -> tuple[list[list[float]], list[int]]:
    """(table, psi) from the bytes of a CSV file (format in the module docstring)."""
    rows = _records(decoded_text(data, MAX_CSV_BYTES, "CSV file"))
    if rows and rows[0][1][0].strip().lower() == "psi":
        header, rows = rows[0], rows[1:]
    else:
        header = None
    if not rows:
        raise ConfigError("the CSV has no data rows: write one row per next token n: psi, then P(l|n) per token l")
    if len(rows) > MAX_CSV_ROWS:
        raise ConfigError(f"the CSV has {len(rows)} data rows; at most {MAX_CSV_ROWS} next tokens are allowed")
    width = _width(header, rows)
    table, psi = [], []
    for line, cells in rows:
        if len(cells) != width:
            raise ConfigError(f"row {line} has {len(cells)} columns; every row needs {width} (psi + tokens)")
        psi.append(_query_index(cells[0], line))
        table.append([_probability(cell, line, col) for col, cell in enumerate(cells[1:], start=2)])
    try:  # the schema's own checks (psi uses every query index, each row has mass, ...)
        RunConfig.from_dict({"data": {"source": "table", "table": table, "psi": psi}})
    except ConfigError as e:
        raise ConfigError(f"the table in the CSV is not a valid P(l|n): {e}") from None
    return table, psi


def table_to_csv(table: list[list[float]], psi: list[int]) -> str:
    """The CSV that :func:`table_from_csv` reads back exactly (floats in shortest repr)."""
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["psi", *(f"l{j}" for j in range(len(table[0]) if table else 0))])
    for q, row in zip(psi, table, strict=True):
        w.writerow([int(q), *(repr(float(x)) for x in row)])
    return buf.getvalue()


def _records(text: str) -> list[tuple[int, list[str]]]:
    """(row number, cells) of every non-blank CSV record; the row count is bounded."""
    out: list[tuple[int, list[str]]] = []
    try:
        for line, cells in enumerate(csv.reader(io.StringIO(text, newline="")), start=1):
            if not any(c.strip() for c in cells):
                continue
            if len(out) > MAX_CSV_ROWS:
                raise ConfigError(
                    f"the CSV has more than {MAX_CSV_ROWS} rows: at most {MAX_CSV_ROWS} "
                    "next tokens (plus a header) are allowed"
                )
            out.append((line, cells))
    except csv.Error as e:
        raise ConfigError(f"the CSV cannot be read: {e}") from None
    return out


def _width(header: tuple[int, list[str]] | None, rows: list[tuple[int, list[str]]]) -> int:
    line, first = header or rows[0]
    width = len(first)
    if width < 2:
        raise ConfigError(f"row {line} has {width} column: need psi and at least one token column")
    if width - 1 > MAX_CSV_COLUMNS:
        raise ConfigError(f"row {line} has {width - 1:,} token columns; at most {MAX_CSV_COLUMNS:,} are allowed")
    return width


def _query_index(cell: str, line: int) -> int:
    x = _number(cell)
    if x is None or not x.is_integer() or not 0 <= x <= MAX_CSV_ROWS:
        raise ConfigError(
            f"row {line}, column 1 (psi): {_shown(cell)} is not allowed: psi is the query index of "
            f"the row's next token, an integer from 0 to {MAX_CSV_ROWS}"
        )
    return int(x)


def _probability(cell: str, line: int, col: int) -> float:
    if not cell.strip():
        return 0.0
    x = _number(cell)
    if x is None or not math.isfinite(x) or x < 0:
        raise ConfigError(
            f"row {line}, column {col} (token l{col - 2}): {_shown(cell)} is not allowed: "
            "P(l|n) entries are finite numbers ≥ 0 (empty = 0)"
        )
    return x


def _number(cell: str) -> float | None:
    try:
        return float(cell.strip())
    except ValueError:
        return None


def _shown(cell: Any) -> str:
    s = repr(cell)
    return s if len(s) <= 40 else s[:37] + "..."
