"""Exports of a stored real-text run: config.json, ``scalars.<fmt>`` and ``attn_maps.npz``.

* ``scalars``: step (int64), layer (Int64: 0 = the lowest layer; missing for a run-level
  metric), head (Int64; missing = the mean over the layer's heads), metric (string), value
  (float64).  Metrics: ``attn_entropy`` (nats, mean over the probe set's query positions of
  −Σ_j a_ij ln a_ij), ``attn_share_frequent`` (attention mass on the most frequent training
  tokens), ``attn_share_common`` and ``attn_share_distinct`` (on Scan & Snap's common and
  distinct words, :mod:`scansnap.kinds.text.science.contexts`), per layer (and per head when a layer has
  several); ``train_loss`` (mean mini-batch loss since the previous snapshot), ``val_loss``
  (nats) and ``val_ppl``, per run.  The store keeps them in the kind's table ``text_scalars``
  (:mod:`scansnap.kinds.text.service.runs`).
* ``attn_maps.npz``: ``steps`` (S,), ``attn_map_mean`` (S, L, T′, T′) float32 = a_ij of the probe
  window averaged over heads (row i = query, column j = key, zero above the diagonal),
  ``attn_map`` (S, L, H, T′, T′) per head when L·H ≤ 16, and ``tokens`` (T′,) the probe window's
  words; T′ = min(bptt, 64): the first T′ positions of the window.
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scansnap.kinds.text.paper.text_view import live_verdict
from scansnap.service.files import atomic_write, scalar_parts, write_tables

MAPS_FILE = "attn_maps.npz"
MAP_NAMES = ("attn_map_mean", "attn_map")  # in the order np.savez_compressed wrote them


def text_scalars_frame(store: Any, run_id: str) -> pd.DataFrame:
    """step, layer, head, metric, value (the text kind's, :data:`scansnap.kinds.text.service.runs.TEXT_SCALARS`)."""
    return store.scalars(run_id)


def attention_arrays(store: Any, run_id: str) -> dict[str, np.ndarray]:
    """Every stored snapshot's maps stacked on a leading step axis: ``steps`` (S,), ``attn_map_mean``
    (S, L, T′, T′), ``attn_map`` (S, L, H, T′, T′) when stored, and ``tokens`` (T′,): the probe
    window's words (query i and key j are ``tokens[i]`` and ``tokens[j]``).  The whole run in memory:
    the export streams them instead (:func:`write_maps`)."""
    steps = store.steps(run_id)
    snaps = [store.snapshot(run_id, s) for s in steps]
    out: dict[str, np.ndarray] = {"steps": np.asarray(steps, dtype=np.int64)}
    for name in MAP_NAMES:
        if snaps and all(name in s for s in snaps):
            out[name] = np.stack([s[name] for s in snaps])
    out["tokens"] = _tokens(store, run_id, out["attn_map_mean"].shape[-1] if "attn_map_mean" in out else 0)
    return out


def _tokens(store: Any, run_id: str, t: int) -> np.ndarray:
    """The probe window's first ``t`` words."""
    words = store.statics(run_id).get("probe_window_tokens", np.array([], dtype=str))
    return np.asarray(words[:t], dtype=str)


def stacked_maps(store: Any, run_id: str, steps: list[int]) -> dict[str, tuple[tuple[int, ...], np.dtype]]:
    """The maps every snapshot stores, each with the shape and dtype ``np.stack`` gives them (S first);
    one snapshot read at a time.  Such a map whose shape differs between snapshots raises ValueError, as
    stacking it does."""
    shapes: dict[str, set[tuple[int, ...]]] = {}
    dtypes: dict[str, np.dtype] = {}
    for i, step in enumerate(steps):
        snap = store.snapshot(run_id, step)
        for name in MAP_NAMES if i == 0 else list(shapes):
            if name not in snap:
                shapes.pop(name, None)
                continue
            a = np.asarray(snap[name])
            shapes.setdefault(name, set()).add(a.shape)
            dtypes[name] = np.result_type(dtypes.get(name, a.dtype), a.dtype)
    if bad := [f"{name} ({' vs '.join(map(str, sorted(got)))})" for name, got in shapes.items() if len(got) > 1]:
        raise ValueError(
            f"the snapshots of run {run_id} differ in the shape of {', '.join(bad)}: they cannot be stacked"
        )
    return {name: ((len(steps), *next(iter(got))), dtypes[name]) for name, got in shapes.items()}


def write_maps(store: Any, run_id: str, path: Path) -> None:
    """``attn_maps.npz`` as :func:`maps_npz` writes it (``np.savez_compressed`` of :func:`attention_arrays`),
    streamed: each map's ``.npy`` header, then one snapshot's map after another (read twice: first for
    which maps every snapshot has)."""
    steps = store.steps(run_id)
    maps = stacked_maps(store, run_id, steps)
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        _put(zf, "steps", np.asarray(steps, dtype=np.int64))
        for name, (shape, dtype) in maps.items():
            with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
                header = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False, "shape": shape}
                np.lib.format.write_array_header_1_0(f, header)
                for step in steps:
                    f.write(np.ascontiguousarray(store.snapshot(run_id, step)[name], dtype=dtype).tobytes())
        _put(zf, "tokens", _tokens(store, run_id, maps["attn_map_mean"][0][-1] if "attn_map_mean" in maps else 0))


def _put(zf: zipfile.ZipFile, name: str, array: np.ndarray) -> None:
    with zf.open(f"{name}.npy", "w", force_zip64=True) as f:
        np.lib.format.write_array(f, array, allow_pickle=False)


def maps_npz(store: Any, run_id: str) -> bytes:
    buf = io.BytesIO()
    arrays: dict[str, Any] = attention_arrays(store, run_id)
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def export_text_run(store: Any, run_id: str, out: Path, config: str, fmt: str) -> list[Path]:
    """config.json (``config``), scalars.<fmt> and attn_maps.npz into the folder ``out`` (each written
    atomically, the tables and the maps one snapshot at a time); :func:`scansnap.service.export.export_run`
    checks the format and the run first."""
    return [
        atomic_write(out / "config.json", lambda p: p.write_text(config, encoding="utf-8")),
        write_tables(scalar_parts(store, run_id), store.scalars(run_id, until_step=-1), out / f"scalars.{fmt}", fmt),
        atomic_write(out / MAPS_FILE, lambda p: write_maps(store, run_id, p)),
    ]


SCALAR_ROW_BYTES = {"parquet": 20, "csv": 16}  # a scalar row in the zip at most (as the synthetic kind's)


def export_size(store: Any, run: dict[str, Any], fmt: str) -> int:
    """An estimate of the zipped scalars and attn_maps.npz of the run, at least their size: its scalar
    values at the most bytes a row takes in ``fmt``, and the maps as the snapshots store them (their arrays
    uncompressed: the npz deflates them)."""
    _, blob_bytes, values = store.export_counts(run["id"])
    return values * SCALAR_ROW_BYTES[fmt] + blob_bytes


def table(store: Any, run_id: str, name: str) -> pd.DataFrame:
    """The export's table ``name``: ``scalars`` (step, layer, head, metric, value) is the kind's only one."""
    if name != "scalars":
        raise KeyError(name)
    return text_scalars_frame(store, run_id)


def layer_readings(store: Any, run_id: str) -> list[dict[str, Any]]:
    """JoMA's sparser-then-denser of each layer, as the Real text page reads it
    (:func:`scansnap.kinds.text.paper.text_view.live_verdict` on the layer's entropy, mean over heads): whether the
    entropy dropped and rebounded (``measured``, ``too early`` while the run trains, ``not measured``), the
    figures, and the page's sentence."""
    run = store.get_run(run_id)
    if run is None:
        raise KeyError(f"no run {run_id!r}")
    rows = store.scalars(run_id, metrics=["attn_entropy"])
    layers = rows[rows["head"].isna() & rows["layer"].notna()]
    if layers.empty:
        return []
    wide = layers.pivot_table(index="step", columns="layer", values="value", aggfunc="first").sort_index()
    steps, H, finished = wide.index.to_numpy(np.int64), wide.to_numpy(np.float64), run["status"] == "finished"
    out = []
    for k in range(H.shape[1]):
        v = live_verdict(steps, H[:, k], finished)
        d = v.reading
        out.append(
            {
                "layer": k,
                "drop": v.drop,
                "rebound": v.rebound,
                "drop_nats": d.drop,
                "rebound_nats": d.rebound,
                "min_step": d.min_step,
                "sentence": v.sentence(k),
            }
        )
    return out
