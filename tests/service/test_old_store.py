"""A run store written by the previous release (tests/fixtures/store-2026-11-26: main at 2cca0e0, by the
``make_store.py`` beside it) opens, compares, exports and resumes with this code: a finished and a
stopped synthetic run, a stopped real-text run, each stopped one with its checkpoint."""

from __future__ import annotations

import io
import json
import shutil
import sqlite3
import zipfile
from pathlib import Path

import numpy as np
import pytest

from scansnap.kinds.synthetic.paper.observe import problem_from_statics
from scansnap.kinds.synthetic.paper.theory_view import THEORY_STATICS, calibrated_overlay, stored_overlay
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.history import RunHistory
from scansnap.service.export import zipped_export
from scansnap.service.run_kinds import stored_config
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.service.test_theory_overlay import assert_same_overlay

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "store-2026-11-26"


@pytest.fixture
def old_store(tmp_path):
    shutil.copytree(FIXTURE, tmp_path / "data", ignore=shutil.ignore_patterns("*.py"))
    with RunStore(tmp_path / "data") as store:
        yield store


def _by_name(store: RunStore) -> dict[str, dict]:
    return {r["name"]: r for r in store.list_runs()}


def test_the_old_runs_open_with_their_configs_and_histories(old_store):
    runs = _by_name(old_store)
    assert {n: (r["kind"], r["status"], r["last_step"]) for n, r in runs.items()} == {
        "finished synthetic": ("synthetic", "finished", 40),
        "stopped synthetic": ("synthetic", "stopped", 30),
        "stopped text": ("text", "stopped", 7),
    }
    assert isinstance(stored_config(runs["stopped text"]), TextRunConfig)
    hist = RunHistory(runs["finished synthetic"]["id"])
    hist.update(old_store)
    entropy = hist.scalars[hist.scalars["metric"] == "entropy_distinct"]["value"]
    assert hist.steps[-1] == 40 and len(hist.c) == len(hist.steps) and len(entropy) and np.isfinite(entropy).all()
    text = runs["stopped text"]["id"]
    maps = old_store.snapshot(text, old_store.steps(text)[-1])["attn_map_mean"]
    assert maps.shape[0] == 2 and np.allclose(maps.sum(-1), 1, atol=1e-5)  # 2 layers, rows of attention


def test_the_old_runs_compare_on_their_shared_metric(old_store, monkeypatch):
    from types import SimpleNamespace

    from scansnap.ui import page_data

    monkeypatch.setattr(page_data, "service", lambda: SimpleNamespace(stored=old_store))
    runs = _by_name(old_store)
    for name in ("finished synthetic", "stopped text"):
        ((_, steps, values),) = page_data.compare_series.__wrapped__(runs[name]["id"], "train_loss", 0)
        assert len(steps) > 1 and np.isfinite(values[1:]).all(), name


def test_the_old_runs_export(old_store):
    runs = _by_name(old_store)
    want = {
        "finished synthetic": {"config.json", "verdicts.json", "trajectory.csv", "scalars.csv", "run.json"},
        "stopped text": {"config.json", "scalars.csv", "attn_maps.npz", "run.json"},
    }
    for name, files in want.items():
        rid = runs[name]["id"]
        with zipfile.ZipFile(io.BytesIO(zipped_export(old_store, rid, "csv"))) as zf:
            assert {Path(n).name for n in zf.namelist()} == files, name
            assert json.loads(zf.read(f"{rid}/config.json")) == json.loads(runs[name]["config_json"])


def _statics_rows(db: Path) -> dict[tuple[str, str], bytes]:
    con = sqlite3.connect(db)
    rows = {(r, n): bytes(a) for r, n, a in con.execute("SELECT run_id, name, array FROM statics")}
    con.close()
    return rows


def test_the_old_synthetic_runs_psi_is_renamed_for_what_it_holds(tmp_path):
    """A synthetic run's "psi" held ψ(n) as a vocabulary id (the config's psi is a query index): on
    open it is "query_of_class_id", byte for byte; nothing else is renamed."""
    shutil.copytree(FIXTURE, tmp_path / "data", ignore=shutil.ignore_patterns("*.py"))
    db = tmp_path / "data" / "runs.sqlite"
    before = _statics_rows(db)
    assert {n for _, n in before} >= {"psi", "P"}
    RunStore(tmp_path / "data").close()
    after = _statics_rows(db)
    renamed = {(r, "query_of_class_id" if n == "psi" else n): a for (r, n), a in before.items()}
    assert after == renamed


def test_an_old_synthetic_run_gets_its_theorem4_overlay_once(old_store, monkeypatch):
    """The old release stored no overlay (its charts computed it on every view, from the run's first
    stored logits): the first read through the facade computes it from those, stores it, and the next
    read finds it stored.  A text run has none to derive."""
    from scansnap.kinds.synthetic.service import theory as yz_theory
    from scansnap.service.facade import StoredRuns

    runs = _by_name(old_store)
    rid = runs["finished synthetic"]["id"]
    before = old_store.statics(rid)
    assert "theory_step" not in before
    cfg = stored_config(runs["finished synthetic"])
    z0 = old_store.snapshot(rid, old_store.steps(rid)[0])["z"].astype(np.float64)
    problem = problem_from_statics(before, cfg)
    read = StoredRuns(old_store).statics(rid)
    stored = old_store.statics(rid)
    assert set(THEORY_STATICS) <= stored.keys()
    for r in range(cfg.n_replicas):
        want = calibrated_overlay(cfg, problem, z0[r], r)
        assert_same_overlay(stored_overlay(stored, r), want)
        assert_same_overlay(stored_overlay(read, r), want)
    monkeypatch.setattr(yz_theory, "overlay_statics", lambda *a: pytest.fail("computed twice"))
    assert "theory_step" in StoredRuns(old_store).statics(rid)
    text = runs["stopped text"]["id"]
    assert StoredRuns(old_store).statics(text).keys() == old_store.statics(text).keys()
    assert not any(k.startswith("theory_") for k in old_store.statics(text))


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize(("name", "steps"), [("stopped synthetic", 80), ("stopped text", 12)])
def test_the_old_stopped_runs_resume_from_their_checkpoints_to_the_end(old_store, name, steps):
    rid = _by_name(old_store)[name]["id"]
    job = RunJob.resume(old_store, rid)
    assert job.step > 0  # from the checkpoint, not from scratch
    assert job.run() == "finished"
    info = old_store.get_run(rid)
    assert info["status"] == "finished" and info["last_step"] == steps
    assert ("theory_step" in old_store.statics(rid)) is (info["kind"] == "synthetic")  # its worker stored it


def _shared_rows(db: Path, run_id: str) -> list[tuple]:
    """The run's scalar blocks in the shared table, as the old release wrote them (raw bytes)."""
    con = sqlite3.connect(db)
    rows = con.execute(
        "SELECT metric, step, seq, replica, n, value FROM scalar_blocks WHERE run_id = ? ORDER BY metric, step",
        (run_id,),
    ).fetchall()
    con.close()
    return rows


def test_the_old_text_run_moves_to_its_own_table_with_every_value(tmp_path):
    """The old release kept a text run's head in ``replica`` and its layer in ``n`` of the shared table;
    opening moves them, byte for byte, into the text kind's table (layer, head), and nothing stays behind."""
    data = tmp_path / "data"
    shutil.copytree(FIXTURE, data, ignore=shutil.ignore_patterns("*.py"))
    con = sqlite3.connect(data / "runs.sqlite")
    (text,) = con.execute("SELECT id FROM runs WHERE kind = 'text'").fetchone()
    con.close()
    before = _shared_rows(data / "runs.sqlite", text)
    assert before  # the fixture holds the old layout
    with RunStore(data) as store:
        frame = store.scalars(text)
    con = sqlite3.connect(data / "runs.sqlite")
    after = con.execute(
        "SELECT metric, step, seq, head, layer, value FROM text_scalars WHERE run_id = ? ORDER BY metric, step",
        (text,),
    ).fetchall()
    con.close()
    assert after == before and _shared_rows(data / "runs.sqlite", text) == []
    assert list(frame.columns) == ["step", "layer", "head", "metric", "value"]
    entropy = frame[(frame["metric"] == "attn_entropy") & frame["head"].isna()]
    assert sorted(entropy["layer"].unique()) == [0, 1]  # per layer, the mean over its 2 heads
    assert frame[frame["metric"] == "val_loss"]["layer"].isna().all()  # a run-level metric has no layer


def test_a_move_cut_short_goes_on_at_the_next_open(tmp_path, monkeypatch):
    """Two old text runs: the move of the second fails (a kill); the first moved whole, the second is
    still whole in the shared table, and the next open moves it."""
    from scansnap.service import scalar_table

    data = tmp_path / "data"
    shutil.copytree(FIXTURE, data, ignore=shutil.ignore_patterns("*.py"))
    con = sqlite3.connect(data / "runs.sqlite")  # a second old text run: a copy of the first, under another id
    (text,) = con.execute("SELECT id FROM runs WHERE kind = 'text'").fetchone()
    cols = [r[1] for r in con.execute("PRAGMA table_info(runs)")]
    con.execute(
        f"INSERT INTO runs SELECT {', '.join('?' if c == 'id' else c for c in cols)} FROM runs WHERE id = ?",
        ("copy", text),
    )
    con.execute(
        "INSERT INTO scalar_blocks SELECT 'copy', metric, step, seq, replica, n, value FROM scalar_blocks "
        "WHERE run_id = ?",
        (text,),
    )
    con.commit()
    con.close()
    real, calls = scalar_table.move_run, []

    def fail_on_the_second_run(*args):
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("killed mid-way")
        return real(*args)

    monkeypatch.setattr(scalar_table, "move_run", fail_on_the_second_run)
    with pytest.raises(RuntimeError, match="killed"):
        RunStore(data)
    left = {rid for rid in (text, "copy") if _shared_rows(data / "runs.sqlite", rid)}
    assert len(left) == 1  # one moved whole, the other rolled back whole
    monkeypatch.setattr(scalar_table, "move_run", real)
    with RunStore(data) as store:
        frames = [store.scalars(rid) for rid in (text, "copy")]
    assert not any(_shared_rows(data / "runs.sqlite", rid) for rid in (text, "copy"))
    assert frames[0].equals(frames[1]) and len(frames[0])
