"""Tidy exports of a stored synthetic run (pandas + pyarrow): config.json, verdicts.json, trajectory
and scalars.

Statics the engine writes per run: ``P`` (K×M float64, P(l|n)), ``query_of_class_id`` (K int, the
vocabulary id ψ(n) of each class's query token), ``query_tokens`` (Q int; row q of the
stored z arrays is token ``query_tokens[q]``) and ``token_kind`` (K×M int8: 0 = not in
supp(n), 1 = distinct token of n, 2 = common token).  Snapshots use one of two layouts:

* full: ``z`` (R×Q×M float32, the query rows of Z) and ``c`` (R×K×M float32, c_n);
* top-k: ``topk_idx`` (R×K×k int32 token ids), ``topk_c`` and ``topk_z`` (R×K×k float32).

:func:`trajectory_frame` gives one row per (step, replica, n, l): for the full layout
l ranges over supp(n) only; for top-k every stored entry is kept (negative ids are
padding and dropped; a stored token outside supp(n) has ``kind`` missing).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from scansnap.core.config import ConfigError
from scansnap.core.schedule import TOPK, full_snapshots
from scansnap.kinds.synthetic.paper.observe import run_verdicts
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.service.budget import problem_sizes
from scansnap.paper.history import RunHistory
from scansnap.service.files import atomic_write, scalar_parts, write_tables

KIND_CATEGORIES = ("distinct", "common")
_KIND_DTYPE = pd.CategoricalDtype(list(KIND_CATEGORIES))
TRAJECTORY_DTYPES: dict[str, Any] = {
    "step": np.int64,
    "replica": np.int32,
    "m": np.int32,
    "n": np.int32,
    "l": np.int32,
    "kind": _KIND_DTYPE,
    "P": np.float64,
    "z": np.float32,
    "c": np.float32,
}
REQUIRED_STATICS = ("P", "query_of_class_id", "query_tokens", "token_kind")


def _empty_trajectory() -> pd.DataFrame:
    return pd.DataFrame({k: pd.Series([], dtype=v) for k, v in TRAJECTORY_DTYPES.items()})


def _kind(codes: np.ndarray) -> pd.Categorical:
    # token_kind 1 -> "distinct" (code 0), 2 -> "common" (code 1), anything else -> missing
    c = np.asarray(codes, dtype=np.int64)
    cat_codes = np.where((c == 1) | (c == 2), c - 1, -1)
    return pd.Categorical.from_codes(cat_codes, dtype=_KIND_DTYPE)


def _query_rows(query_of: np.ndarray, query_tokens: np.ndarray) -> np.ndarray:
    """Row q of the z arrays for each class n (query_tokens[q] == query_of[n], the token ψ(n))."""
    order = np.argsort(query_tokens, kind="stable")
    pos = np.clip(np.searchsorted(query_tokens[order], query_of), 0, len(order) - 1)
    rows = order[pos]
    bad = query_tokens[rows] != query_of
    if bad.any():
        raise ValueError(f"ψ(n) of classes {np.flatnonzero(bad).tolist()[:10]} is not among the stored query_tokens")
    return rows


def _frame(
    step: int, replica: np.ndarray, n: np.ndarray, l_: np.ndarray, st: dict, z: np.ndarray, c: np.ndarray
) -> dict[str, Any]:
    # a top-k token beyond the columns of P/token_kind has P = 0 and no kind
    P, kind = st["P"], st["token_kind"]
    inside = l_ < P.shape[1]
    lc = np.where(inside, l_, 0)
    return {
        "step": np.full(len(n), step, dtype=np.int64),
        "replica": replica,
        "m": st["query_of_class_id"][n],
        "n": n,
        "l": l_,
        "kind": np.where(inside, kind[n, lc], 0),
        "P": np.where(inside, P[n, lc], 0.0),
        "z": z,
        "c": c,
    }


def trajectory_parts(store: Any, run_id: str) -> Iterator[pd.DataFrame]:
    """The tidy trajectory (see module doc) one stored snapshot at a time, each read when its part is
    asked for: a frame of the columns and dtypes of :data:`TRAJECTORY_DTYPES`."""
    steps = store.steps(run_id)
    if not steps:
        return
    st = store.statics(run_id)
    missing = [k for k in REQUIRED_STATICS if k not in st]
    if missing:
        raise ValueError(f"run {run_id} lacks the statics {missing} needed for a trajectory")
    st["query_of_class_id"] = np.asarray(st["query_of_class_id"], dtype=np.int64)
    qrow = _query_rows(st["query_of_class_id"], np.asarray(st["query_tokens"], dtype=np.int64))
    supp = np.nonzero(np.asarray(st["token_kind"]) != 0)  # row-major: n, then l
    for step in steps:
        yield _typed(_snapshot_rows(run_id, step, store.snapshot(run_id, step), st, qrow, supp))


def _snapshot_rows(
    run_id: str, step: int, snap: dict, st: dict, qrow: np.ndarray, supp: tuple[np.ndarray, ...]
) -> dict[str, Any]:
    """One snapshot's trajectory columns: the support of each class (full layout) or every stored top-k
    entry but the padding."""
    if "z" in snap and "c" in snap:
        z, c = snap["z"], snap["c"]
        supp_n, supp_l = supp
        R, S = z.shape[0], len(supp_n)
        return _frame(
            step,
            np.repeat(np.arange(R), S),
            np.tile(supp_n, R),
            np.tile(supp_l, R),
            st,
            z[:, qrow[supp_n], supp_l].ravel(),
            c[:, supp_n, supp_l].ravel(),
        )
    if "topk_idx" in snap:
        idx = np.asarray(snap["topk_idx"], dtype=np.int64)
        R, K, _ = idx.shape
        rep = np.broadcast_to(np.arange(R)[:, None, None], idx.shape).ravel()
        n = np.broadcast_to(np.arange(K)[None, :, None], idx.shape).ravel()
        l_, keep = idx.ravel(), idx.ravel() >= 0
        return _frame(
            step, rep[keep], n[keep], l_[keep], st, snap["topk_z"].ravel()[keep], snap["topk_c"].ravel()[keep]
        )
    raise ValueError(f"snapshot {step} of run {run_id} has neither z/c nor topk_* arrays (has {sorted(snap)})")


def _typed(cols: dict[str, Any]) -> pd.DataFrame:
    """Trajectory columns as a frame of :data:`TRAJECTORY_DTYPES` (``kind`` from token_kind's codes)."""
    cols["kind"] = _kind(cols["kind"])
    return pd.DataFrame(cols).astype({k: v for k, v in TRAJECTORY_DTYPES.items() if k != "kind"})


def trajectory_frame(store: Any, run_id: str) -> pd.DataFrame:
    """Tidy per-token trajectories: step, replica, m, n, l, kind, P, z, c (see module doc), the whole run
    in one frame (the export writes :func:`trajectory_parts` one by one instead)."""
    parts = list(trajectory_parts(store, run_id))
    return pd.concat(parts, ignore_index=True) if parts else _empty_trajectory()


def scalars_frame(store: Any, run_id: str) -> pd.DataFrame:
    """step (int64), replica (int32), n (Int64), metric (string), value (float64)."""
    return _typed_scalars(store.scalars(run_id))


def _typed_scalars(df: pd.DataFrame) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "step": df["step"].to_numpy(dtype=np.int64),
            "replica": df["replica"].to_numpy(dtype=np.int32),
            "n": df["n"].astype("Int64").array,
            "metric": df["metric"].astype("string").array,
            "value": df["value"].to_numpy(dtype=np.float64),
        }
    )


_NO_SCALARS = pd.DataFrame({"step": [], "replica": [], "n": [], "metric": [], "value": []})  # a run with none


VERDICT_METRICS = ("entropy_distinct", "share_common_down", "share_distinct_up", "dz_common", "dz_common_theory")
KEPT_Z = 4  # snapshots' z the verdicts hold at once: the claims read z at step 0, near step 10 and the last


class _VerdictReads:
    """The store as the verdicts read it (:class:`~scansnap.paper.history.RunHistory` reads through it):
    the metrics the claims judge only, and a snapshot's z only when a claim indexes it, the last
    :data:`KEPT_Z` of them kept; so the verdicts never hold the whole run's arrays.  The layout (full or
    top-k) is the first snapshot's: a run's writer keeps one layout (:func:`scansnap.core.schedule.full_snapshots`)."""

    def __init__(self, store: Any, run_id: str):
        self._store, self._run_id = store, run_id
        self._kept: OrderedDict[int, np.ndarray] = OrderedDict()
        self._full: bool | None = None

    def steps(self, run_id: str) -> list[int]:
        return list(self._store.steps(run_id))

    def scalars(self, run_id: str, metrics: list[str] | None = None, since_step: int | None = None) -> pd.DataFrame:
        return self._store.scalars(run_id, metrics=list(VERDICT_METRICS), since_step=since_step)

    def snapshot(self, run_id: str, step: int) -> dict[str, Any]:
        """``z`` read when indexed (no ``c``: no claim reads it), or nothing for a top-k run."""
        if self._full is None:
            self._full = "z" in self._store.snapshot(run_id, step)
        return {"z": _StepZ(self, step), "c": None} if self._full else {}

    def z(self, step: int) -> np.ndarray:
        """The z of the snapshot at ``step``, read now unless it is among the last few read."""
        if step not in self._kept:
            self._kept[step] = self._store.snapshot(self._run_id, step)["z"]
            while len(self._kept) > KEPT_Z:
                self._kept.popitem(last=False)
        self._kept.move_to_end(step)
        return self._kept[step]


class _StepZ:
    """One snapshot's z (R, Q, M_ctx), read from the store when indexed."""

    def __init__(self, reads: _VerdictReads, step: int):
        self._reads, self._step = reads, step

    def __getitem__(self, key: Any) -> np.ndarray:
        return self._reads.z(self._step)[key]


def verdicts_json(store: Any, run_id: str) -> str:
    """The run's verdicts (the claims of Theorems 2–4 per replica, :mod:`scansnap.kinds.synthetic.paper.claims`) as
    JSON, read through :class:`_VerdictReads` (a few snapshots at a time)."""
    run = store.get_run(run_id)
    hist = RunHistory(run_id)
    hist.update(_VerdictReads(store, run_id))
    cfg = RunConfig.from_json(run["config_json"])
    return json.dumps(run_verdicts(hist, store.statics(run_id), cfg), indent=2, ensure_ascii=False) + "\n"


def _verdicts_or_none(store: Any, run_id: str) -> str | None:
    """verdicts.json of a run of this lab; None for a stored config that is not a run config (a
    hand-made store)."""
    try:
        return verdicts_json(store, run_id)
    except ConfigError:
        return None


# Bytes a row takes in the zip at most, measured on runs of random numbers (the worst case for compression,
# bench/export_memory.py): trajectory rows 8-19 B in Parquet, 15-23 B in CSV; scalar rows 8-15 B and 13 B.
TRAJECTORY_ROW_BYTES = {"parquet": 24, "csv": 28}
SCALAR_ROW_BYTES = {"parquet": 20, "csv": 16}


def snapshot_rows(config_json: str, snapshot_bytes: float) -> int:
    """Trajectory rows of one snapshot at most: R · Σ_n |supp(n)| (full layout) or R · K · k (top-k), from the
    run's config; for a stored config that is no run config, a quarter of the snapshot's stored bytes (each
    row takes at least one float32 of z or c)."""
    try:
        cfg = RunConfig.from_json(config_json)
    except ConfigError:
        return int(snapshot_bytes // 4)
    K, Q, M, _, s = problem_sizes(cfg)
    R = cfg.n_replicas
    return R * K * s if full_snapshots(R, Q, K, M) else R * K * min(TOPK, M)


def export_size(store: Any, run: dict[str, Any], fmt: str) -> int:
    """An estimate of the zipped trajectory and scalars of the run, at least their size: its snapshots
    times :func:`snapshot_rows` and its scalar values, each at the most bytes a row takes in ``fmt``."""
    snapshots, blob_bytes, values = store.export_counts(run["id"])
    rows = snapshots * snapshot_rows(run["config_json"], blob_bytes / max(snapshots, 1))
    return rows * TRAJECTORY_ROW_BYTES[fmt] + values * SCALAR_ROW_BYTES[fmt]


def export_synthetic_run(store: Any, run_id: str, out: Path, config: str, fmt: str) -> list[Path]:
    """A synthetic run's config.json, verdicts.json (when its claims can be judged), trajectory and scalars."""
    verdicts = _verdicts_or_none(store, run_id)
    return [
        atomic_write(out / "config.json", lambda p: p.write_text(config, encoding="utf-8")),
        *(
            [atomic_write(out / "verdicts.json", lambda p: p.write_text(verdicts, encoding="utf-8"))]
            if verdicts
            else []
        ),
        write_tables(trajectory_parts(store, run_id), _empty_trajectory(), out / f"trajectory.{fmt}", fmt),
        write_tables(
            map(_typed_scalars, scalar_parts(store, run_id)), _typed_scalars(_NO_SCALARS), out / f"scalars.{fmt}", fmt
        ),
    ]


def table(store: Any, run_id: str, name: str) -> pd.DataFrame:
    """The export's table ``name`` as one frame: ``scalars`` (:func:`scalars_frame`) or ``trajectory``
    (:func:`trajectory_frame`)."""
    return {"scalars": scalars_frame, "trajectory": trajectory_frame}[name](store, run_id)


def run_verdicts_of(store: Any, run_id: str) -> list[dict[str, Any]]:
    """verdicts.json of the run, as a list: the claims of Theorems 2–4 per replica."""
    verdicts: list[dict[str, Any]] = json.loads(verdicts_json(store, run_id))
    return verdicts
