"""Tests of scansnap.service.export: tidy trajectory/scalars frames and atomic file exports."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scansnap.kinds.synthetic.service.export import scalars_frame, trajectory_frame
from scansnap.service.export import export_run
from scansnap.service.store import RunStore

K, M, Q, R = 3, 8, 2, 2
DTYPES = {
    "step": "int64",
    "replica": "int32",
    "m": "int32",
    "n": "int32",
    "l": "int32",
    "kind": "category",
    "P": "float64",
    "z": "float32",
    "c": "float32",
}


def _statics() -> dict[str, np.ndarray]:
    # class n has distinct tokens {2n, 2n+1} and the common token 7; queries are ids 5 and 6
    kind = np.zeros((K, M), np.int8)
    P = np.zeros((K, M))
    for n in range(K):
        kind[n, [2 * n, 2 * n + 1]] = 1
        kind[n, 7] = 2
        P[n, [2 * n, 2 * n + 1, 7]] = [0.5, 0.3, 0.2]
    return {"P": P, "query_of_class_id": np.array([6, 5, 6]), "query_tokens": np.array([5, 6]), "token_kind": kind}


def _full(step: int) -> dict[str, np.ndarray]:
    z = np.arange(R * Q * M, dtype=np.float32).reshape(R, Q, M) + 1000 * step
    c = -np.arange(R * K * M, dtype=np.float32).reshape(R, K, M) - step
    return {"z": z, "c": c}


@pytest.fixture
def store(tmp_path):
    s = RunStore(tmp_path / "db")
    yield s
    s.close()


def _make(store: RunStore, layout: str) -> str:
    rid = store.create_run("e", json.dumps({"seed": 1, "K": K}), "cpu", {"numpy": np.__version__}, statics=_statics())
    rng = np.random.default_rng(0)
    for step in (0, 5):
        if layout == "full":
            arrays = _full(step)
        else:
            idx = np.stack([rng.permutation(M)[:4] for _ in range(R * K)]).reshape(R, K, 4)
            idx[1, 2, 3] = -1  # padding
            arrays = {
                "topk_idx": idx.astype(np.int32),
                "topk_c": rng.random((R, K, 4)).astype(np.float32),
                "topk_z": rng.random((R, K, 4)).astype(np.float32),
            }
        store.append_snapshot(
            rid,
            step,
            arrays,
            [(r, n, "entropy", 0.1 * step + (n or 0)) for r in range(R) for n in (None, 0)]
            + [(0, None, "loss", np.nan)],
        )
    return rid


def _check_schema(df: pd.DataFrame) -> None:
    assert list(df.columns) == list(DTYPES)
    assert {k: str(v) for k, v in df.dtypes.items()} == DTYPES
    assert list(df["kind"].cat.categories) == ["distinct", "common"]


def test_trajectory_full_layout(store):
    rid = _make(store, "full")
    df = trajectory_frame(store, rid)
    _check_schema(df)
    assert len(df) == 2 * R * K * 3  # supp-only rows: 3 tokens per class
    st = _statics()
    assert (st["token_kind"][df["n"], df["l"]] != 0).all()
    np.testing.assert_array_equal(df["P"], st["P"][df["n"], df["l"]])
    np.testing.assert_array_equal(df["m"], st["query_of_class_id"][df["n"]])
    expect_kind = np.where(st["token_kind"][df["n"], df["l"]] == 1, "distinct", "common")
    assert (df["kind"].astype(str).to_numpy() == expect_kind).all()
    assert (df.loc[df["l"] == 7, "kind"] == "common").all()
    qrow = {5: 0, 6: 1}
    for row in df.sample(20, random_state=0).itertuples():
        snap = _full(row.step)
        assert row.z == snap["z"][row.replica, qrow[row.m], row.l]
        assert row.c == snap["c"][row.replica, row.n, row.l]
    assert df[["step", "replica", "n", "l"]].drop_duplicates().shape[0] == len(df)
    assert df["step"].is_monotonic_increasing


def test_trajectory_topk_layout(store):
    rid = _make(store, "topk")
    df = trajectory_frame(store, rid)
    _check_schema(df)
    assert len(df) == 2 * R * K * 4 - 2  # every stored top-4 entry but the padding (one a step)
    for step in (0, 5):
        snap = store.snapshot(rid, step)
        sub = df[df["step"] == step]
        for r in range(R):
            for n in range(K):
                cell = sub[(sub["replica"] == r) & (sub["n"] == n)]
                keep = snap["topk_idx"][r, n] >= 0
                np.testing.assert_array_equal(cell["l"], snap["topk_idx"][r, n][keep])
                np.testing.assert_array_equal(cell["c"], snap["topk_c"][r, n][keep])
                np.testing.assert_array_equal(cell["z"], snap["topk_z"][r, n][keep])
    st = _statics()
    np.testing.assert_array_equal(df["P"], st["P"][df["n"], df["l"]])
    outside = st["token_kind"][df["n"], df["l"]] == 0
    assert df.loc[outside, "kind"].isna().all() and df.loc[~outside, "kind"].notna().all()


def test_trajectory_empty_run(store):
    rid = store.create_run("empty", "{}", "cpu", {})
    df = trajectory_frame(store, rid)
    assert df.empty
    _check_schema(df)


def test_scalars_frame(store):
    rid = _make(store, "full")
    df = scalars_frame(store, rid)
    assert list(df.columns) == ["step", "replica", "n", "metric", "value"]
    assert str(df["step"].dtype) == "int64" and str(df["n"].dtype) == "Int64"
    assert pd.api.types.is_string_dtype(df["metric"]) and df["value"].dtype == np.float64
    # per step (2 of them): an "entropy" row per replica for the run (n = None) and for class 0, and one loss row
    assert len(df) == 2 * (2 * R + 1) and df["n"].isna().sum() == 2 * (R + 1)
    assert df.loc[df["metric"] == "loss", "value"].isna().all()


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("layout", ["full", "topk"])
def test_export_run(store, tmp_path, fmt, layout):
    rid = _make(store, layout)
    out = tmp_path / "out" / "nested"
    paths = export_run(store, rid, out, fmt=fmt)
    assert [p.name for p in paths] == ["config.json", f"trajectory.{fmt}", f"scalars.{fmt}", "run.json"]
    info = json.loads(paths[-1].read_text())
    assert info["id"] == rid and info["node"] is None and info["device"] == store.get_run(rid)["device"]
    assert sorted(p.name for p in out.iterdir()) == sorted(p.name for p in paths)  # no temp files
    text = paths[0].read_text()
    assert json.loads(text) == {"seed": 1, "K": K} and "\n  " in text
    traj, scal = trajectory_frame(store, rid), scalars_frame(store, rid)
    if fmt == "parquet":
        got = pd.read_parquet(paths[1])
        _check_schema(got)
        pd.testing.assert_frame_equal(got, traj)
        got_s = pd.read_parquet(paths[2])
        assert str(got_s["n"].dtype) == "Int64"
        pd.testing.assert_frame_equal(got_s, scal, check_dtype=False)
    else:
        got = pd.read_csv(paths[1])
        assert list(got.columns) == list(DTYPES) and len(got) == len(traj)
        assert got["kind"].fillna("").tolist() == traj["kind"].astype(object).fillna("").tolist()
        np.testing.assert_allclose(got["z"], traj["z"])
        got_s = pd.read_csv(paths[2])
        assert list(got_s.columns) == ["step", "replica", "n", "metric", "value"]
        assert len(got_s) == len(scal)


def test_export_bad_format_and_missing_run(store, tmp_path):
    rid = _make(store, "full")
    with pytest.raises(ValueError, match="parquet, csv"):
        export_run(store, rid, tmp_path / "x", fmt="xlsx")
    assert not (tmp_path / "x").exists()
    with pytest.raises(KeyError):
        export_run(store, "missing", tmp_path / "y")
