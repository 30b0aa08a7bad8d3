"""Parsers for user uploads: a run config (JSON) and a P(l|n) table (CSV).

Uploads are bytes from a browser under any file name (the uploaders accept every name, as Streamlit's
own extension check would answer a wrong one with its generic error: :func:`check_upload_name` is the
check); they are size-limited, decoded as UTF-8 and parsed with the stdlib ``json`` and ``csv``
modules only; nothing user-supplied is ever unpickled or given to ``torch.load``.  Every problem
raises :class:`~scansnap.core.config.ConfigError` with one message
saying what is wrong (the row and column, for a CSV) and what is allowed.

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
from typing import Any, NamedTuple

from scansnap.core.config import ConfigError, RootConfig
from scansnap.kinds.synthetic.science.config import RunConfig

MAX_CONFIG_BYTES = 256 * 1024
MAX_CSV_BYTES = 512 * 1024
MAX_CSV_ROWS = 1000  # next tokens (classes) K
MAX_CSV_COLUMNS = 20_000  # contextual tokens M_ctx
MAX_NAME_SHOWN = 100  # characters of a file name shown back


class UploadKind(NamedTuple):
    """What an uploader takes: the file name's suffix, and what to upload (for the message)."""

    suffix: str
    what: str


CONFIG_UPLOAD = UploadKind(".json", "a run config as JSON, as the Runs page's 'config JSON' download writes it")
TABLE_UPLOAD = UploadKind(".csv", "P(l|n) as CSV: one row per next token n, its psi, then P(l|n) per token l")
TEXT_UPLOAD = UploadKind(".txt", "a UTF-8 .txt file of English text")


def check_upload_name(name: str, kind: UploadKind) -> None:
    """Refuse a file whose name does not end with ``kind.suffix`` (in any case), naming it and what is allowed."""
    if not str(name).lower().endswith(kind.suffix):
        shown = str(name) if len(str(name)) <= MAX_NAME_SHOWN else str(name)[:MAX_NAME_SHOWN] + "…"
        raise ConfigError(f"{shown!r} is not a {kind.suffix} file: upload {kind.what}")


def parse_config_upload(data: bytes, config: type[RootConfig]) -> Any:
    """A validated ``config`` (a kind's config class) from the bytes of a JSON file (its limits are checked
    by the caller: :meth:`scansnap.service.facade.LabService.config_from_upload`)."""
    return config.from_json(_text(data, MAX_CONFIG_BYTES, "config file"))  # every problem a ConfigError


def table_from_csv(data: bytes) -> tuple[list[list[float]], list[int]]:
    """(table, psi) from the bytes of a CSV file (format in the module docstring)."""
    rows = _records(_text(data, MAX_CSV_BYTES, "CSV file"))
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


def _text(data: bytes, limit: int, what: str) -> str:
    if len(data) > limit:
        raise ConfigError(f"the {what} is {len(data):,} bytes, over the limit of {limit:,} bytes ({limit // 1024} KiB)")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ConfigError(
            f"the {what} is not UTF-8 text (invalid byte at position {e.start}); save it as UTF-8"
        ) from None


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
