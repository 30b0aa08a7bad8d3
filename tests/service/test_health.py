"""/healthz's store check (scansnap.service.health): a damaged b-tree page is found by quick_check even while the
runs table still answers; the verdict is cached and the check bounded in time."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import numpy as np
import pytest

from scansnap.paper.presets import get_preset
from scansnap.service import health
from scansnap.service.health import CHECK_TTL_S, store_health
from scansnap.service.run_kinds import create_run
from scansnap.service.store import DB_NAME, RunStore


def store_with_runs(folder, runs: int = 30):
    """A real run store with ``runs`` runs of 3 snapshots each (about 80 pages of 4 KiB); returns its file."""
    store = RunStore(folder)
    for i in range(runs):
        rid = create_run(store, get_preset("syn-small").config, name=f"r{i}", status="finished")
        for step in range(3):
            store.append_snapshot(rid, step, {"z": np.random.default_rng(i).random((4, 50))}, [(0, None, "loss", 1.0)])
    store.close()  # the WAL is checkpointed into the file
    return folder / DB_NAME


def damage_a_middle_page(path) -> None:
    """Garbage over one b-tree page half-way through the file (the header page stays intact)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        size, count = con.execute("PRAGMA page_size").fetchone()[0], con.execute("PRAGMA page_count").fetchone()[0]
    assert count > 20
    with open(path, "r+b") as f:
        f.seek(size * (count // 2))
        f.write(np.random.default_rng(0).bytes(size))


def test_a_damaged_btree_page_is_reported_while_the_runs_table_still_answers(tmp_path):
    store_with_runs(tmp_path / "intact")
    ok, why = store_health(tmp_path / "intact", now=0.0)
    assert ok and why.endswith("30 runs, quick_check ok"), why
    path = store_with_runs(tmp_path / "damaged")
    damage_a_middle_page(path)
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:  # the query the old check ran still answers
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (30,)
    ok, why = store_health(tmp_path / "damaged", now=0.0)
    assert not ok and f"the run store {path} is damaged (quick_check: " in why, why
    assert "malformed" in why or "page" in why, why  # SQLite's own words for what is wrong


def test_the_verdict_is_kept_for_a_while_and_renewed_when_the_file_changes(tmp_path, monkeypatch):
    path = store_with_runs(tmp_path)
    checks = []
    real = health._check
    monkeypatch.setattr(health, "_check", lambda p, budget: checks.append(p) or real(p, budget))
    assert store_health(tmp_path, now=1000.0)[0] and len(checks) == 1
    assert store_health(tmp_path, now=1000.0 + CHECK_TTL_S / 2)[0] and len(checks) == 1  # cached
    assert store_health(tmp_path, now=1000.0 + CHECK_TTL_S)[0] and len(checks) == 2  # too old: checked again
    damage_a_middle_page(path)
    ok, why = store_health(tmp_path, now=1000.0 + CHECK_TTL_S)  # the same moment, but the file changed
    assert len(checks) == 3 and not ok and "is damaged" in why, why


def test_a_check_that_takes_too_long_is_stopped_and_says_so(tmp_path, monkeypatch):
    store_with_runs(tmp_path, runs=3)
    monkeypatch.setattr(health, "CHECK_BUDGET_S", 0.0)
    monkeypatch.setattr(health, "PROGRESS_OPS", 1)  # the clock is read at every step of SQLite's machine
    ok, why = store_health(tmp_path, now=0.0)
    assert ok and why.endswith("3 runs (quick_check stopped after 0 s: not verified)"), why


@pytest.fixture(autouse=True)
def _fresh_cache():
    health._cache.clear()
    yield
    health._cache.clear()
