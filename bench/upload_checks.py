"""How long the upload checks take on the worst inputs a visitor can send (scansnap.service.uploads, the
synthetic kind's table_upload and the facade's config check): each case at or just past a size limit,
timed ``--repeats`` times (the slowest kept), set beside the bound the uploads are meant to keep
(``QUICK_S``: every parse, valid or not, answers within it). tests/service/test_uploads.py checks what
each parse says; this measures how soon.

    .venv/bin/python -m bench.upload_checks [--repeats 5]       # prints JSON (bench.run_all keeps it)
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.service.table_upload import MAX_CSV_BYTES, MAX_CSV_COLUMNS, MAX_CSV_ROWS, table_from_csv
from scansnap.paper.presets import get_preset
from scansnap.service.facade import get_service
from scansnap.service.jobs import get_manager
from scansnap.service.uploads import MAX_CONFIG_BYTES

QUICK_S = 2.0  # the bound: a visitor's upload is answered within this, whatever it holds


def _table_config_at_limit() -> bytes:
    """A table config (K = 100 next tokens over 1,200 tokens) just under MAX_CONFIG_BYTES."""
    k, m = 100, 1200
    data = {"source": "table", "table": [[1] * m for _ in range(k)], "psi": [n % 2 for n in range(k)]}
    text = json.dumps({"data": data}, separators=(",", ":")).encode()
    assert len(text) <= MAX_CONFIG_BYTES, len(text)
    return text


def cases(config_from_upload: Callable[[bytes], object]) -> dict[str, tuple[Callable[[bytes], object], bytes]]:
    """Each case: (the check, the bytes a visitor uploads); ``config_from_upload``: the facade's, of a synthetic run."""
    row = b"0" + b",1" * (MAX_CSV_COLUMNS // 4) + b"\n"
    return {
        "config: a valid preset": (config_from_upload, get_preset("syn-small").config.to_json().encode()),
        "config: a table just under the size limit": (config_from_upload, _table_config_at_limit()),
        "config: one byte over the size limit": (config_from_upload, b" " * (MAX_CONFIG_BYTES + 1)),
        "config: nested lists to the size limit": (config_from_upload, b"[" * (MAX_CONFIG_BYTES // 2)),
        "config: a number of 200,000 digits": (config_from_upload, b'{"seed": ' + b"9" * 200_000 + b"}"),
        "csv: one byte over the size limit": (table_from_csv, b"0,1\n" * (MAX_CSV_BYTES // 4 + 1)),
        "csv: the most rows, each valid": (table_from_csv, b"".join(b"%d,1\n" % (k % 2) for k in range(MAX_CSV_ROWS))),
        "csv: rows past the row limit": (table_from_csv, b"0,1\n" * (MAX_CSV_ROWS + 2)),
        "csv: columns past the column limit": (table_from_csv, b"0" + b",1" * (MAX_CSV_COLUMNS + 1) + b"\n"),
        "csv: wide rows to the size limit": (table_from_csv, row * (MAX_CSV_BYTES // len(row))),
        "csv: one field past the csv module's limit": (table_from_csv, b'0,"' + b"1" * 200_000 + b'"\n'),
    }


def slowest_s(check: Callable[[bytes], object], data: bytes, repeats: int) -> tuple[float, str]:
    """The slowest of ``repeats`` timings of ``check(data)``, and what it answered (ok, or its message)."""
    worst, said = 0.0, ""
    for _ in range(repeats):
        t0 = time.perf_counter()
        try:
            check(data)
            said = "accepted"
        except ConfigError as e:
            said = str(e)[:120]
        worst = max(worst, time.perf_counter() - t0)
    return worst, said


def main(argv: list[str] | None = None) -> dict[str, object]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as data_dir:
        service = get_service(data_dir)
        try:
            upload = lambda data: service.config_from_upload(data, "synthetic")
            for label, (check, data) in cases(upload).items():
                seconds, said = slowest_s(check, data, args.repeats)
                rows.append({"case": label, "bytes": len(data), "slowest_s": round(seconds, 4), "answer": said})
        finally:
            get_manager(data_dir).shutdown()
    res = {
        "bound_s": QUICK_S,
        "repeats": args.repeats,
        "cases": rows,
        "slowest_s": max(r["slowest_s"] for r in rows),
        "within_bound": all(r["slowest_s"] < QUICK_S for r in rows),
    }
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
