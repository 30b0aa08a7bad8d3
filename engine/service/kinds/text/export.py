"""Exports of a stored real-text run: config.json, ``scalars.<fmt>`` and ``attn_maps.npz``.

* ``scalars``: step (int64), layer (Int64: 0 = the lowest layer; missing for a run-level
  metric), head (Int64; missing = the mean over the layer's heads), metric (string), value
  (float64).  Metrics: ``attn_entropy`` (nats, mean over the probe set's query positions of
  −Σ_j a_ij ln a_ij), ``attn_share_frequent`` (attention mass on the most frequent training
  tokens), ``attn_share_common`` and ``attn_share_distinct`` (on Scan & Snap's common and
  distinct words, :mod:`engine.core.text.contexts`), per layer (and per head when a layer has
  several); ``train_loss`` (mean mini-batch loss since the previous snapshot), ``val_loss``
  (nats) and ``val_ppl``, per run.  The store keeps them in the kind's table ``text_scalars``
  (:mod:`engine.service.kinds.text.runs`).
* ``attn_maps.npz``: ``steps`` (S,), ``attn_map_mean`` (S, L, T′, T′) float32 = a_ij of the probe
  window averaged over heads (row i = query, column j = key, zero above the diagonal),
  ``attn_map`` (S, L, H, T′, T′) per head when L·H ≤ 16, and ``tokens`` (T′,) the probe window's
  words; T′ = min(bptt, 64): the first T′ positions of the window.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.service.files import atomic_write, write_table

MAPS_FILE = "attn_maps.npz"


def text_scalars_frame(store: Any, run_id: str) -> pd.DataFrame:
    """step, layer, head, metric, value (the text kind's table, :data:`engine.service.kinds.text.runs.TEXT_SCALARS`)."""
    return store.scalars(run_id)


def attention_arrays(store: Any, run_id: str) -> dict[str, np.ndarray]:
    """Every stored snapshot's maps stacked on a leading step axis: ``steps`` (S,), ``attn_map_mean``
    (S, L, T′, T′), ``attn_map`` (S, L, H, T′, T′) when stored, and ``tokens`` (T′,): the probe
    window's words (query i and key j are ``tokens[i]`` and ``tokens[j]``)."""
    steps = store.steps(run_id)
    snaps = [store.snapshot(run_id, s) for s in steps]
    out: dict[str, np.ndarray] = {"steps": np.asarray(steps, dtype=np.int64)}
    for name in ("attn_map_mean", "attn_map"):
        if snaps and all(name in s for s in snaps):
            out[name] = np.stack([s[name] for s in snaps])
    words = store.statics(run_id).get("probe_window_tokens", np.array([], dtype=str))
    t = out["attn_map_mean"].shape[-1] if "attn_map_mean" in out else 0
    out["tokens"] = np.asarray(words[:t], dtype=str)
    return out


def maps_npz(store: Any, run_id: str) -> bytes:
    buf = io.BytesIO()
    arrays: dict[str, Any] = attention_arrays(store, run_id)
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def export_text_run(store: Any, run_id: str, out: Path, config: str, fmt: str) -> list[Path]:
    """config.json (``config``), scalars.<fmt> and attn_maps.npz into the folder ``out`` (each written
    atomically); :func:`engine.service.export.export_run` checks the format and the run first."""
    maps = maps_npz(store, run_id)
    return [
        atomic_write(out / "config.json", lambda p: p.write_text(config, encoding="utf-8")),
        write_table(text_scalars_frame(store, run_id), out / f"scalars.{fmt}", fmt),
        atomic_write(out / MAPS_FILE, lambda p: p.write_bytes(maps)),
    ]
