"""A stored run's export: its kind's writer (``scansnap/service/kinds/<kind>/export.py``, which documents
its files) writes them to a folder, each moved into place whole; :func:`zipped_export` zips them.
docs/explore.md's export schema lists every kind's files and columns."""

from __future__ import annotations

import json
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

from scansnap.service.files import atomic_write
from scansnap.service.run_kinds import kind_named, resolve

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


def zip_export(store: Any, run_id: str, fmt: str, dest: str | Path) -> Path:
    """:func:`export_run`'s files zipped into the file ``dest``, each under ``<run_id>/`` (written first in
    a temporary folder, removed after): nothing of the export is held in memory but one snapshot's rows."""
    dest = Path(dest)
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in export_run(store, run_id, tmp, fmt):
            zf.write(path, arcname=f"{run_id}/{Path(path).name}")
    return dest


def zipped_export(store: Any, run_id: str, fmt: str) -> bytes:
    """The bytes of :func:`zip_export`'s zip (written to a temporary file first, then read whole)."""
    with tempfile.TemporaryDirectory() as tmp:
        return zip_export(store, run_id, fmt, Path(tmp) / "export.zip").read_bytes()


def export_size(store: Any, run_id: str, fmt: str) -> int:
    """An estimate of the bytes of the run's zipped export, meant to be at least its size: its kind's
    ``export_size`` from the store's counts (no array is read), else :data:`STORED_FACTOR` times the run's
    stored bytes; plus :data:`SMALL_FILES` for config.json, verdicts.json, run.json and the zip's own
    headers."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown export format {fmt!r}; allowed: {', '.join(FORMATS)}")
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}")
    estimate = kind_named(run["kind"]).export_size
    tables = resolve(estimate)(store, run, fmt) if estimate else STORED_FACTOR * store.size_bytes(run_id)
    return int(tables) + SMALL_FILES


STORED_FACTOR = 4  # a kind that estimates nothing: its tables are taken as 4 × what the store holds of the run
SMALL_FILES = 256 * 1024  # config.json, verdicts.json (16 replicas × 4 claims at most), run.json, zip headers


def size_words(nbytes: float) -> str:
    """A size for people: "340 kB", "12 MB", "1.2 GB" (1 kB = 1024 bytes, as the limits count them)."""
    for unit, scale in (("GB", 2**30), ("MB", 2**20)):
        if nbytes >= scale:
            value = nbytes / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:,.0f} {unit}"
    return f"{max(nbytes / 1024, 1):,.0f} kB"
