"""Bounded outputs and a read-only damaged store (the budgets issue, findings 4 and 10): an export is
written to a file one snapshot at a time, its size is known before it is built and the dashboard refuses
one over SCANSNAP_MAX_EXPORT_MB; once /healthz finds the store damaged nothing writes to it, and a read
that fails says the one message instead of a StoreError."""

from __future__ import annotations

import hashlib
import io
import sqlite3
import zipfile
from contextlib import closing

import numpy as np
import pytest

from scansnap.kinds.synthetic.service import export as syn_export
from scansnap.kinds.text.service.export import maps_npz, write_maps
from scansnap.paper.presets import get_preset
from scansnap.service import health, runner
from scansnap.service.control import RunControl
from scansnap.service.export import export_size, zip_export
from scansnap.service.facade import Actor, LabService, ServiceError
from scansnap.service.jobs import JobManager
from scansnap.service.store import DB_NAME, RunStore
from tests.service.test_health import damage_a_middle_page, store_with_runs
from tests.service.test_text_runs import SMALL

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ME = Actor("browser-1")


def _trained(store: RunStore, cfg) -> str:
    job = runner.RunJob(cfg, store)
    assert job.run(RunControl()) == "finished"
    return job.run_id


class CountingStore:
    """The store, counting the snapshots read (an export must not read the run whole before writing)."""

    def __init__(self, store: RunStore):
        self._store, self.reads = store, 0

    def snapshot(self, run_id: str, step: int):
        self.reads += 1
        return self._store.snapshot(run_id, step)

    def __getattr__(self, name: str):
        return getattr(self._store, name)


def test_the_trajectory_is_read_one_snapshot_per_part(tmp_path):
    with RunStore(tmp_path) as store:
        rid = _trained(store, get_preset("syn-small").config)
        counting = CountingStore(store)
        parts = syn_export.trajectory_parts(counting, rid)
        first = next(parts)
        assert counting.reads == 1 and first["step"].nunique() == 1
        rest = list(parts)
        assert counting.reads == len(store.steps(rid)) == 1 + len(rest)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize(
    "preset, over",
    [("syn-small", {}), ("syn-medium-1", {"optim.steps": 20}), ("lecture", {"optim.steps": 40})],  # full; top-k
)
def test_the_size_known_before_the_click_bounds_the_zip(tmp_path, fmt, preset, over):
    cfg = get_preset(preset).config.with_overrides(over) if over else get_preset(preset).config
    with RunStore(tmp_path / "data") as store:
        rid = _trained(store, cfg)
        zipped = zip_export(store, rid, fmt, tmp_path / "out.zip")
        assert 0 < zipped.stat().st_size <= export_size(store, rid, fmt)
        with zipfile.ZipFile(zipped) as zf:
            assert f"{rid}/trajectory.{fmt}" in zf.namelist()


def test_a_text_runs_maps_are_streamed_as_the_whole_npz_was_and_its_size_is_bounded(tmp_path):
    cfg = get_preset("text-fig7-1layer", "text").config.with_overrides(SMALL | {"optim.steps": "30"})
    with RunStore(tmp_path / "data") as store:
        rid = _trained(store, cfg)
        write_maps(store, rid, tmp_path / "maps.npz")
        streamed, whole = np.load(tmp_path / "maps.npz"), np.load(io.BytesIO(maps_npz(store, rid)))
        assert sorted(streamed.files) == sorted(whole.files)
        for name in whole.files:
            np.testing.assert_array_equal(streamed[name], whole[name])
        for fmt in ("parquet", "csv"):
            assert zip_export(store, rid, fmt, tmp_path / f"{fmt}.zip").stat().st_size <= export_size(store, rid, fmt)


@pytest.fixture
def service(tmp_path):
    jobs = JobManager(RunStore(tmp_path / "data"), max_concurrent=1)
    yield LabService(jobs)
    jobs.shutdown()


def test_the_dashboard_refuses_an_export_over_its_limit_and_says_how_to_get_it(tmp_path, monkeypatch):
    with RunStore(tmp_path / "data") as store:
        rid = _trained(store, get_preset("syn-medium-1").config.with_overrides({"optim.steps": 20}))
        size = export_size(store, rid, "parquet")
    monkeypatch.setenv("SCANSNAP_MAX_EXPORT_MB", str(size / 2 / 2**20))
    jobs = JobManager(RunStore(tmp_path / "data"), max_concurrent=1)
    try:
        svc = LabService(jobs)
        plan = svc.export_plan(rid, "parquet")
        assert plan.bytes == size and plan.refused is not None
        assert "SCANSNAP_MAX_EXPORT_MB" in plan.refused and f"python -m scansnap export {rid}" in plan.refused
        with pytest.raises(ServiceError, match="SCANSNAP_MAX_EXPORT_MB"):
            svc.export_zip(rid, "parquet")
        svc.max_export_bytes = 2 * size
        assert svc.export_plan(rid, "parquet").refused is None
        with zipfile.ZipFile(io.BytesIO(svc.export_zip(rid, "parquet"))) as zf:
            assert f"{rid}/scalars.parquet" in zf.namelist()
    finally:
        jobs.shutdown()


def damage_the_last_pages(path, pages: int = 20) -> None:
    """Garbage over the file's last ``pages`` pages (as the finding: the runs' newest rows unreadable)."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        size, count = con.execute("PRAGMA page_size").fetchone()[0], con.execute("PRAGMA page_count").fetchone()[0]
    with open(path, "r+b") as f:
        f.seek(size * (count - pages))
        f.write(np.random.default_rng(1).bytes(size * pages))


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_damaged_store_takes_no_write_and_its_reads_say_the_one_message(tmp_path):
    """Finding 10: with /healthz failing, ▶ Start succeeded and wrote into the file, and a failed read
    showed Streamlit's generic error; now every write is refused with /healthz's words and the read says
    the same message."""
    data = tmp_path / "data"
    path = store_with_runs(data)
    jobs = JobManager(RunStore(data), max_concurrent=1)  # the server runs when its file is damaged
    try:
        damage_a_middle_page(path)
        damage_the_last_pages(path)
        health._cache.clear()
        before = _digest(path)
        svc = LabService(jobs)
        assert svc.store_damage() is not None and "read-only" in svc.store_damage()
        rid = svc.runs()[0]["id"] if svc.runs() else None
        with pytest.raises(ServiceError, match=r"(?s)is damaged.*read-only"):
            svc.submit(get_preset("syn-small").config, ME)
        if rid is not None:
            for write in (lambda: svc.rename(rid, "x", ME), lambda: svc.rerun(rid, ME), lambda: svc.delete(rid, ME)):
                with pytest.raises(ServiceError, match="read-only"):
                    write()
        assert _digest(path) == before  # nothing was written into the damaged file
        failures = 0
        for run in svc.runs():
            try:
                svc.stored.scalars(run["id"])
                svc.stored.statics(run["id"])
                svc.stored.snapshot(run["id"], 0)
            except ServiceError as e:
                failures += 1
                assert "read-only" in str(e)
        assert failures > 0  # the damaged page is read by some run, and says the one message
    finally:
        jobs.shutdown()
        health._cache.clear()
    assert (data / DB_NAME).exists()
