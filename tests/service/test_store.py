"""Tests of scansnap.service.store: round trips, WAL, crash recovery, caps, locking, concurrency."""

from __future__ import annotations

import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scansnap.service.store import (
    MAX_SNAPSHOT_BYTES,
    MAX_SNAPSHOTS_PER_RUN,
    RunStore,
    StoreError,
    default_data_dir,
)
from tests.guards import GUARD_S

ROOT = Path(__file__).resolve().parents[2]


def _snap(step: int) -> dict[str, np.ndarray]:
    return {"z": np.full((2, 3, 4), step, np.float32), "c": np.arange(6, dtype=np.float32) + step}


@pytest.fixture
def store(tmp_path):
    s = RunStore(tmp_path)
    yield s
    s.close()


def _run(store: RunStore, **kw) -> str:
    args = dict(name="r", config_json='{"a": 1}', device="cpu", versions={"numpy": np.__version__})
    args.update(kw)
    return store.create_run(**args)


def test_default_data_dir(monkeypatch):
    monkeypatch.delenv("SCANSNAP_DATA_DIR", raising=False)
    assert default_data_dir() == Path("data")
    monkeypatch.setenv("SCANSNAP_DATA_DIR", "/x/y")
    assert default_data_dir() == Path("/x/y")


def test_round_trip(store):
    P = np.random.default_rng(0).random((3, 5))
    statics = {"P": P, "query_of_class_id": np.array([5, 6, 5]), "kind": np.ones((3, 5), np.int8)}
    rid = _run(store, statics=statics, owner="me")
    assert len(rid) == 12 and rid.isalnum()
    for step in (0, 10, 20):
        store.append_snapshot(rid, step, _snap(step), [(0, None, "loss", 1.0 / (step + 1)), (1, 2, "ent", float(step))])
    st = store.statics(rid)
    np.testing.assert_array_equal(st["P"], P)
    assert st["kind"].dtype == np.int8 and st["query_of_class_id"].tolist() == [5, 6, 5]
    assert store.steps(rid) == [0, 10, 20]
    for step in (0, 10, 20):
        got = store.snapshot(rid, step)
        for k, v in _snap(step).items():
            np.testing.assert_array_equal(got[k], v)
            assert got[k].dtype == v.dtype
    step, latest = store.latest_snapshot(rid)
    assert step == 20 and latest["z"][0, 0, 0] == 20
    with pytest.raises(KeyError):
        store.snapshot(rid, 5)
    df = store.scalars(rid)
    assert list(df.columns) == ["step", "replica", "n", "metric", "value"]
    assert df["step"].tolist() == [0, 0, 10, 10, 20, 20]
    assert str(df["n"].dtype) == "Int64" and df["value"].dtype == np.float64
    assert pd.isna(df["n"].iloc[0]) and df["n"].iloc[1] == 2
    assert store.scalars(rid, metrics=["ent"])["value"].tolist() == [0.0, 10.0, 20.0]
    assert store.scalars(rid, since_step=10)["step"].tolist() == [20, 20]
    assert store.scalars(rid, metrics=["nope"]).empty
    run = store.get_run(rid)
    assert run["config_json"] == '{"a": 1}' and run["versions"] == {"numpy": np.__version__}
    assert run["last_step"] == 20 and run["status"] == "running" and run["owner"] == "me"
    assert run["pid"] == os.getpid() and run["host"]
    assert store.size_bytes(rid) > 0
    assert store.latest_snapshot("missing") is None and store.get_run("missing") is None


def test_list_rename_status_delete(store):
    ids = [_run(store, name=f"r{i}") for i in range(3)]
    assert [r["id"] for r in store.list_runs()] == ids[::-1]
    assert len(store.list_runs(limit=2)) == 2
    store.rename(ids[0], "renamed")
    assert store.get_run(ids[0])["name"] == "renamed"
    store.set_status(ids[1], "diverged", "loss became NaN at step 3")
    run = store.get_run(ids[1])
    assert (run["status"], run["message"]) == ("diverged", "loss became NaN at step 3")
    with pytest.raises(ValueError, match="allowed"):
        store.set_status(ids[1], "exploded")
    with pytest.raises(KeyError):
        store.rename("missing", "x")
    store.append_snapshot(ids[2], 0, _snap(0), [(0, None, "loss", 1.0)])
    assert store.delete(ids[2]) is True and store.delete(ids[2]) is False
    assert store.get_run(ids[2]) is None and store.steps(ids[2]) == []
    assert store.scalars(ids[2]).empty and store.statics(ids[2]) == {}


def test_wal_mode(store, tmp_path):
    rid = _run(store)
    store.append_snapshot(rid, 0, _snap(0), [])
    con = sqlite3.connect(tmp_path / "runs.sqlite")
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    con.close()
    assert (tmp_path / "runs.sqlite-wal").exists()


def test_nonfinite_scalars(store):
    rid = _run(store)
    store.append_snapshot(
        rid, 1, _snap(1), [(0, None, "a", math.nan), (0, None, "b", math.inf), (0, None, "c", -math.inf)]
    )
    v = store.scalars(rid)["value"].to_numpy()
    assert np.isnan(v[0]) and v[1] == np.inf and v[2] == -np.inf


def test_object_array_refused(store):
    bad = np.array([1, "a", None], dtype=object)
    rid = _run(store)
    with pytest.raises(ValueError, match="object"):
        store.append_snapshot(rid, 0, {"x": bad}, [])
    with pytest.raises(ValueError, match="object"):
        _run(store, name="bad", statics={"x": bad})
    assert store.steps(rid) == [] and len(store.list_runs()) == 1


def test_caps(store):
    assert MAX_SNAPSHOT_BYTES == 8 * 2**20 and MAX_SNAPSHOTS_PER_RUN == 2000
    rid = _run(store)
    noise = np.random.default_rng(0).random(MAX_SNAPSHOT_BYTES // 8 + 100_000)
    with pytest.raises(StoreError, match="MiB"):
        store.append_snapshot(rid, 0, {"x": noise}, [(0, None, "loss", 1.0)])
    assert store.steps(rid) == [] and store.scalars(rid).empty
    store.max_snapshots_per_run = 3
    for step in range(3):
        store.append_snapshot(rid, step, _snap(step), [(0, None, "loss", 1.0)])
    with pytest.raises(StoreError, match="cap"):
        store.append_snapshot(rid, 3, _snap(3), [(0, None, "loss", 1.0)])
    assert store.steps(rid) == [0, 1, 2] and len(store.scalars(rid)) == 3
    assert store.get_run(rid)["last_step"] == 2


def test_duplicate_step_is_store_error(store):
    rid = _run(store)
    store.append_snapshot(rid, 0, _snap(0), [(0, None, "loss", 1.0)])
    with pytest.raises(StoreError):
        store.append_snapshot(rid, 0, _snap(0), [(0, None, "loss", 2.0)])
    assert store.scalars(rid)["value"].tolist() == [1.0]


def test_locked_database(tmp_path):
    store = RunStore(tmp_path, busy_timeout_s=0.2)
    rid = _run(store)
    other = sqlite3.connect(tmp_path / "runs.sqlite", isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(StoreError, match="locked") as info:
            store.append_snapshot(rid, 0, _snap(0), [(0, None, "loss", 1.0)])
        assert "for more than 0.2 s" in str(info.value) and "retry" in str(info.value)
        # how long sqlite waits for the lock is the store's setting (200 ms), not sqlite3's 5 s default
        assert store._conn().execute("PRAGMA busy_timeout").fetchone()[0] == 200
        assert store.steps(rid) == []  # readers still work under WAL
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert store.steps(rid) == [] and store.scalars(rid).empty
    assert store.get_run(rid)["last_step"] is None
    store.append_snapshot(rid, 0, _snap(0), [(0, None, "loss", 1.0)])
    assert store.steps(rid) == [0]
    store.close()


def test_disk_full_rolls_back(store):
    rid = _run(store)
    store.append_snapshot(rid, 0, _snap(0), [(0, None, "loss", 1.0)])
    con = store._conn()
    pages = con.execute("PRAGMA page_count").fetchone()[0]
    con.execute(f"PRAGMA max_page_count = {pages + 1}")
    noise = np.random.default_rng(1).random(100_000)
    with pytest.raises(StoreError, match="disk is full"):
        store.append_snapshot(rid, 1, {"x": noise}, [(0, None, "loss", 2.0)] * 100)
    assert store.steps(rid) == [0] and len(store.scalars(rid)) == 1
    assert store.get_run(rid)["last_step"] == 0


_CHILD = textwrap.dedent("""
    import os, sys, time
    import numpy as np
    from scansnap.service.store import RunStore
    s = RunStore(sys.argv[1])
    rid = s.create_run("child", "{}", "cpu", {"numpy": np.__version__})
    print(rid, flush=True)
    for step in range(100000):
        s.append_snapshot(rid, step, {"z": np.full((2, 3), step, np.float32)},
                          [(0, None, "loss", float(step))])
        if sys.argv[2] == "exit" and step == 2:
            os._exit(0)
        time.sleep(0.02)  # a slow writer: the test has time to kill it mid-run
""")


def _zombie(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.parametrize("how", ["kill", "exit", "zombie"])
def test_interrupted_detection(tmp_path, how):
    """A writer that died is detected: killed, exited, or killed and not yet reaped (a zombie)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(tmp_path), how], stdout=subprocess.PIPE, env=env, text=True
    )
    try:
        rid = proc.stdout.readline().strip()
        assert rid, "child did not create a run"
        reader = RunStore(tmp_path)
        deadline = time.monotonic() + GUARD_S
        while len(reader.steps(rid)) < 3:
            assert time.monotonic() < deadline, "child wrote no snapshots"
            time.sleep(0.01)
        if how in ("kill", "zombie"):
            assert reader.get_run(rid)["status"] == "running"  # writer alive: untouched
            proc.send_signal(signal.SIGKILL)
        if how == "zombie":  # killed, but this parent has not reaped it yet
            while not _zombie(proc.pid):
                assert time.monotonic() < deadline, "the killed child did not become a zombie"
                time.sleep(0.01)
            assert RunStore(tmp_path).get_run(rid)["status"] == "interrupted"
    finally:
        if proc.poll() is None and how == "exit":
            proc.wait(timeout=GUARD_S)
        proc.kill()
        proc.wait(timeout=GUARD_S)  # reap, so the pid is gone rather than a zombie
        proc.stdout.close()
    reader.close()
    store = RunStore(tmp_path)
    run = store.get_run(rid)
    assert run["status"] == "interrupted" and "ended without finishing" in run["message"]
    steps = store.steps(rid)
    assert len(steps) >= 3 and steps == list(range(len(steps)))
    assert run["last_step"] == steps[-1]
    for step in steps:
        np.testing.assert_array_equal(store.snapshot(rid, step)["z"], np.full((2, 3), step))
    assert store.scalars(rid)["value"].tolist() == [float(s) for s in steps]
    store.close()


def test_live_run_of_this_process_stays_running(tmp_path):
    with RunStore(tmp_path) as a:
        rid = _run(a)
        a.set_status(_run(a), "paused")
    with RunStore(tmp_path) as b:
        assert b.get_run(rid)["status"] == "running"
        assert [r["status"] for r in b.list_runs()] == ["paused", "running"]


def test_concurrent_reader_and_writer(store):
    rid = _run(store)
    errors: list[BaseException] = []
    done = threading.Event()
    finals: list[int] = []

    def writer():
        try:
            for step in range(150):
                store.append_snapshot(rid, step, _snap(step), [(r, None, "loss", 1.0) for r in range(4)])
        except BaseException as exc:
            errors.append(exc)
        finally:
            done.set()

    def reader():
        seen: list[int] = []
        try:
            while True:
                finished = done.is_set()
                steps = store.steps(rid)
                assert steps == list(range(len(steps)))
                assert not seen or len(steps) >= seen[-1]
                seen.append(len(steps))
                latest = store.latest_snapshot(rid)
                if latest is not None:
                    assert latest[0] >= len(steps) - 1
                    assert latest[1]["z"][0, 0, 0] == latest[0]
                    json.dumps(store.get_run(rid)["versions"])
                    assert len(store.scalars(rid, metrics=["loss"])) >= 4 * len(steps)
                if finished:
                    finals.append(seen[-1])
                    return
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=writer)] + [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=GUARD_S)
    assert not errors, errors
    assert finals == [150, 150, 150] and store.steps(rid) == list(range(150))


def test_queued_run_of_a_dead_server_is_interrupted(tmp_path):
    """A server killed with runs still queued leaves them to no one: on reopen they are
    ``interrupted`` (resumable from the start), not ``queued`` forever; this process's stay queued."""
    script = (
        "import sys; from scansnap.service.store import RunStore; "
        "print(RunStore(sys.argv[1]).create_run('q', '{}', 'cpu', {}, status='queued'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
        timeout=GUARD_S,
    )
    orphan = out.stdout.strip()
    with RunStore(tmp_path) as s:
        mine = s.create_run("mine", "{}", "cpu", {}, status="queued")
    with RunStore(tmp_path) as s:
        assert s.get_run(orphan)["status"] == "interrupted"
        assert "ended without finishing" in s.get_run(orphan)["message"]
        assert "it had written no snapshot" in s.get_run(orphan)["message"]
        assert s.get_run(mine)["status"] == "queued"
