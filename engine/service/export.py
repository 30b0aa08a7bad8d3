"""A stored run's export: its kind's writer (``engine/service/kinds/<kind>/export.py``, which documents
its files) writes them to a folder, each moved into place whole; :func:`zipped_export` zips them.
The README's export schema lists every kind's files and columns."""

from __future__ import annotations

import io
import json
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from engine.service.files import atomic_write
from engine.service.run_kinds import kind_named, resolve

FORMATS = ("parquet", "csv")


def export_run(store: Any, run_id: str, out_dir: str | Path, fmt: str = "parquet") -> list[Path]:
    """Write the run's export files into ``out_dir`` with its kind's writer (a synthetic run: config.json,
    verdicts.json, trajectory.<fmt>, scalars.<fmt>; a real-text run: config.json, scalars.<fmt>,
    attn_maps.npz), then run.json (:func:`run_info`); each file is written to a temporary name in the
    same folder and moved into place."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; allowed: {', '.join(FORMATS)}")
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    config = json.dumps(json.loads(run["config_json"]), indent=2) + "\n"
    written: list[Path] = resolve(kind_named(run["kind"]).export)(store, run_id, out, config, fmt)
    info = json.dumps(run_info(run), indent=2, ensure_ascii=False) + "\n"
    written.append(atomic_write(out / "run.json", lambda p: p.write_text(info, encoding="utf-8")))
    return written


def run_info(run: dict[str, Any]) -> dict[str, Any]:
    """What run.json records of a stored run: its id, name, kind, status, last step, and where it
    trained: the device, the cluster node (null: the server's own workers) and library versions."""
    keys = ("id", "name", "kind", "status", "last_step", "device", "node", "host", "versions")
    return {k: run[k] for k in keys} | {"created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(run["created"]))}


def zipped_export(store: Any, run_id: str, fmt: str) -> bytes:
    """:func:`export_run`'s files in one zip, each under ``<run_id>/`` (written in a temporary folder)."""
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in export_run(store, run_id, tmp, fmt):
            zf.write(path, arcname=f"{run_id}/{Path(path).name}")
    return buf.getvalue()
