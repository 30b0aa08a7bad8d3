"""Broadcast (issue 5 §1): the owner publishes a run; everyone who opens its link watches that
same run live, trains nothing and cannot pause, stop or throttle it.  Store migration of the
``published`` column for databases written before it existed."""

from __future__ import annotations

import sqlite3

import pytest

from engine.service.jobs import get_manager
from engine.service.store import RunStore
from tests.apphelp import run_app as app


# ------------------------------------------------------------------------------ store
def test_set_published_and_list_published(tmp_path):
    with RunStore(tmp_path) as store:
        a = store.create_run("a", "{}", "cpu", {})
        b = store.create_run("b", "{}", "cpu", {}, status="finished")
        assert store.get_run(a)["published"] is False and store.list_published() == []
        updated = store.get_run(a)["updated"]
        store.set_published(a, True)
        store.set_published(b, True)
        assert store.get_run(a)["updated"] == updated  # publishing does not touch the run's data time
        assert [r["id"] for r in store.list_published()] == [b, a]
        assert [r["id"] for r in store.list_published(statuses=("running",))] == [a]
        store.set_published(b, False)
        assert [r["id"] for r in store.list_published()] == [a]
        with pytest.raises(KeyError):
            store.set_published("missing", True)


def test_published_column_is_added_to_an_older_database(tmp_path):
    with RunStore(tmp_path) as store:
        rid = store.create_run("old", "{}", "cpu", {}, status="finished")
    con = sqlite3.connect(tmp_path / "runs.sqlite")  # rebuild the runs table as the first release wrote it
    con.executescript("""
        CREATE TABLE runs_old AS SELECT id, name, config_json, status, device, versions_json, created, updated,
            message, owner, pid, host, last_step FROM runs;
        DROP TABLE runs; ALTER TABLE runs_old RENAME TO runs;""")
    con.close()
    with RunStore(tmp_path) as store:  # opening migrates
        run = store.get_run(rid)
        assert run["name"] == "old" and run["published"] is False
        store.set_published(rid, True)
        assert [r["id"] for r in store.list_published()] == [rid]
    with RunStore(tmp_path) as store:  # and opening again is a no-op
        assert store.get_run(rid)["published"] is True


# ------------------------------------------------------------------------------ dashboard
def test_viewers_watch_the_published_run_without_training_or_controlling_it(data_dir):
    mgr = get_manager(data_dir)
    lecturer = app({"preset": "lecture", "speed": "5"})  # 300 steps at 5 steps/s: live for the whole test
    lecturer.button(key="btn.start").click().run()
    rid = lecturer.session_state["lab.run"]
    assert mgr.is_live(rid)
    publish = next(t for t in lecturer.toggle if t.label.startswith("📡 Publish"))
    assert publish.value is False
    publish.set_value(True).run()
    assert mgr.store.get_run(rid)["published"] is True
    try:
        runs_before, active_before = len(mgr.store.list_runs()), mgr.active()
        viewers = [app({"run": rid}) for _ in range(3)]
        for v in viewers:
            assert not v.exception
            assert v.session_state["lab.run"] == rid
            assert not [t for t in v.toggle if t.label.startswith("📡 Publish")]  # only the owner publishes
            assert v.button(key="btn.pause").disabled and v.button(key="btn.stop").disabled
            assert v.button(key="btn.step").disabled
            assert any("Watching run" in c.value for c in v.caption)
            assert any(f"run `{rid}`" in m.value for m in v.caption)  # the live status line of the same run
        assert len(mgr.store.list_runs()) == runs_before and mgr.active() == active_before  # no training
        # a viewer finds it under "Live now"
        other = app()
        links = [p for p in other.sidebar.get("page_link") if rid in p.proto.label]
        assert len(links) == 1 and f"run={rid}" in links[0].proto.query_string
        assert mgr.status(rid).status == "running"  # nobody but its owner paused or stopped it
        publish = next(t for t in lecturer.toggle if t.label.startswith("📡 Publish"))
        publish.set_value(False).run()
        assert mgr.store.list_published() == []
    finally:
        mgr.stop(rid)
        mgr.wait(rid, 10)
