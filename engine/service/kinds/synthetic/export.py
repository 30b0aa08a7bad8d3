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
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from engine.core.config import ConfigError, RunConfig
from engine.paper.history import RunHistory, run_verdicts
from engine.service.files import atomic_write, write_table

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


def trajectory_frame(store: Any, run_id: str) -> pd.DataFrame:
    """Tidy per-token trajectories: step, replica, m, n, l, kind, P, z, c (see module doc)."""
    steps = store.steps(run_id)
    if not steps:
        return _empty_trajectory()
    st = store.statics(run_id)
    missing = [k for k in REQUIRED_STATICS if k not in st]
    if missing:
        raise ValueError(f"run {run_id} lacks the statics {missing} needed for a trajectory")
    st["query_of_class_id"] = np.asarray(st["query_of_class_id"], dtype=np.int64)
    qrow = _query_rows(st["query_of_class_id"], np.asarray(st["query_tokens"], dtype=np.int64))
    supp_n, supp_l = np.nonzero(np.asarray(st["token_kind"]) != 0)  # row-major: n, then l
    parts: list[dict[str, Any]] = []
    for step in steps:
        snap = store.snapshot(run_id, step)
        if "z" in snap and "c" in snap:
            z, c = snap["z"], snap["c"]
            R, S = z.shape[0], len(supp_n)
            parts.append(
                _frame(
                    step,
                    np.repeat(np.arange(R), S),
                    np.tile(supp_n, R),
                    np.tile(supp_l, R),
                    st,
                    z[:, qrow[supp_n], supp_l].ravel(),
                    c[:, supp_n, supp_l].ravel(),
                )
            )
        elif "topk_idx" in snap:
            idx = np.asarray(snap["topk_idx"], dtype=np.int64)
            R, K, _ = idx.shape
            rep = np.broadcast_to(np.arange(R)[:, None, None], idx.shape).ravel()
            n = np.broadcast_to(np.arange(K)[None, :, None], idx.shape).ravel()
            l_, keep = idx.ravel(), idx.ravel() >= 0
            parts.append(
                _frame(
                    step, rep[keep], n[keep], l_[keep], st, snap["topk_z"].ravel()[keep], snap["topk_c"].ravel()[keep]
                )
            )
        else:
            raise ValueError(f"snapshot {step} of run {run_id} has neither z/c nor topk_* arrays (has {sorted(snap)})")
    cols = {k: np.concatenate([p[k] for p in parts]) for k in TRAJECTORY_DTYPES}
    cols["kind"] = _kind(cols["kind"])
    out = pd.DataFrame(cols)
    return out.astype({k: v for k, v in TRAJECTORY_DTYPES.items() if k != "kind"})


def scalars_frame(store: Any, run_id: str) -> pd.DataFrame:
    """step (int64), replica (int32), n (Int64), metric (string), value (float64)."""
    df = store.scalars(run_id)
    return pd.DataFrame(
        {
            "step": df["step"].to_numpy(dtype=np.int64),
            "replica": df["replica"].to_numpy(dtype=np.int32),
            "n": df["n"].astype("Int64").array,
            "metric": df["metric"].astype("string").array,
            "value": df["value"].to_numpy(dtype=np.float64),
        }
    )


def verdicts_json(store: Any, run_id: str) -> str:
    """The run's verdicts (the claims of Theorems 2–4 per replica, :mod:`engine.paper.claims`) as JSON."""
    run = store.get_run(run_id)
    hist = RunHistory(run_id)
    hist.update(store)
    cfg = RunConfig.from_json(run["config_json"])
    return json.dumps(run_verdicts(hist, store.statics(run_id), cfg), indent=2, ensure_ascii=False) + "\n"


def _verdicts_or_none(store: Any, run_id: str) -> str | None:
    """verdicts.json of a run of this lab; None for a stored config that is not a run config (a
    hand-made store)."""
    try:
        return verdicts_json(store, run_id)
    except ConfigError:
        return None


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
        write_table(trajectory_frame(store, run_id), out / f"trajectory.{fmt}", fmt),
        write_table(scalars_frame(store, run_id), out / f"scalars.{fmt}", fmt),
    ]
