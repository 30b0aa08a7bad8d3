"""Broadcast (issue 5 §1): the owner publishes a run; everyone who opens its link watches that
same run live, trains nothing and cannot pause, stop or throttle it.  Store migration of the
``published`` column for databases written before it existed."""

from __future__ import annotations

import sqlite3
import time

import pytest

from scansnap.service.follow import code_problem, follow_code, followed
from scansnap.service.jobs import get_manager
from scansnap.service.store import RunStore
from scansnap.ui.follow import join_link, page_path, qr_png
from tests.apphelp import run_app as app
from tests.guards import GUARD_S


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
STUDENTS = "🎓 Students watch"


def students_switch(at):
    return next(t for t in at.toggle if t.label == STUDENTS)


def test_viewers_watch_the_published_run_without_training_or_controlling_it(data_dir):
    mgr = get_manager(data_dir)
    lecturer = app({"preset": "lecture", "speed": "5"})  # 3000 steps at 5 steps/s: live for the whole test
    lecturer.button(key="btn.start").click().run()
    rid = lecturer.session_state["lab.run"]
    assert mgr.is_live(rid)
    assert students_switch(lecturer).value is False and mgr.store.get_run(rid)["published"] is False
    students_switch(lecturer).set_value(True).run()  # turned on while the run trains: it is published now
    assert mgr.store.get_run(rid)["published"] is True
    try:
        runs_before, active_before = len(mgr.store.list_runs()), mgr.active()
        viewers = [app({"run": rid}) for _ in range(3)]
        for v in viewers:
            assert not v.exception
            assert v.session_state["lab.run"] == rid
            assert v.button(key="btn.pause").disabled and v.button(key="btn.stop").disabled
            assert v.button(key="btn.step").disabled
            assert any("Watching run" in c.value for c in v.caption)
            assert any(f"run `{rid}`" in m.value for m in v.caption)  # the live status line of the same run
            students_switch(v).set_value(True).run()  # a viewer's switch is for the runs it starts, not this one
        assert len(mgr.store.list_runs()) == runs_before and mgr.active() == active_before  # no training
        # a viewer finds it under "Live now", at the step the run is at (not its last snapshot's)
        other = app()
        links = [p for p in other.sidebar.get("page_link") if rid in p.proto.label]
        assert len(links) == 1 and f"run={rid}" in links[0].proto.query_string
        shown_step = int(links[0].proto.label.split(" · step ")[1].split(" ")[0].replace(",", ""))
        assert (mgr.store.get_run(rid)["last_step"] or 0) <= shown_step <= mgr.status(rid).step
        assert mgr.status(rid).status == "running"  # nobody but its owner paused or stopped it
        students_switch(lecturer).set_value(False).run()
        assert mgr.store.list_published() == []
    finally:
        mgr.stop(rid)
        mgr.wait(rid, GUARD_S)


def student_of(code: str, rid: str, guard_s: float = GUARD_S):
    """A student's page (``?follow=code``) once it shows run ``rid``: the service keeps its answer to a
    code for a second, so a page opened just before the run started may still wait; ``guard_s`` bounds it."""
    end = time.monotonic() + guard_s
    while True:
        student = app({"follow": code})
        if student.session_state["lab.run"] == rid or time.monotonic() > end:
            assert student.session_state["lab.run"] == rid
            return student
        time.sleep(0.5)


def test_students_follow_the_lecturers_code_before_and_after_start(data_dir):
    mgr = get_manager(data_dir)
    lecturer = app({"preset": "lecture", "speed": "5"})
    students_switch(lecturer).set_value(True).run()  # before ▶ Start: the join code exists already
    code = mgr_code = follow_code(lecturer.session_state["owner"])
    assert any(code in m.value for m in lecturer.markdown)  # the join box shows the code in letters
    assert any(f"follow={code}" in c.value for c in lecturer.code)  # and the link
    student = app({"follow": code.lower()})  # typed in small letters: the same code
    assert not student.exception
    assert any("Waiting for the lecturer" in i.value for i in student.info)
    assert not [b for b in student.button if b.key == "btn.start"]  # a student's page has no control bar
    lecturer.button(key="btn.start").click().run()
    first = lecturer.session_state["lab.run"]
    try:
        assert mgr.store.get_run(first)["published"] is True  # published as it started
        student = student_of(mgr_code, first)
        assert student.query_params["follow"] == mgr_code  # kept in the URL: the page goes on following
        assert any(code in c.value and "You follow" in c.value for c in student.caption)
        assert mgr.active() == [first]  # the student trains nothing
        lecturer.button(key="btn.reset").click().run()  # the lecturer's next run
        second = lecturer.session_state["lab.run"]
        assert second != first
        student_of(mgr_code, second)
    finally:
        for rid in (first, lecturer.session_state["lab.run"]):
            mgr.stop(rid)
            mgr.wait(rid, GUARD_S)


@pytest.mark.parametrize("code", ["0OIL11", "ABC", "ABCDEFG", "<b>x</b>"])
def test_a_malformed_join_code_is_said_and_the_page_shows_its_own_setup(data_dir, code):
    at = app({"follow": code})
    assert not at.exception
    assert any("is not a join code" in w.value for w in at.warning)
    assert at.button(key="btn.start")  # the page's own controls


# ------------------------------------------------------------------------------ join codes
def test_a_join_code_names_an_owner_not_a_run():
    a, b = follow_code("owner-a"), follow_code("owner-b")
    assert a == follow_code("owner-a") and a != b
    assert code_problem(a) is None and code_problem(a.lower()) is None and code_problem(f" {a} ") is None
    published = [  # newest first, as the store lists them
        {"id": "t1", "kind": "text", "owner": "owner-a"},
        {"id": "s2", "kind": "synthetic", "owner": "owner-b"},
        {"id": "s1", "kind": "synthetic", "owner": "owner-a"},
        {"id": "s0", "kind": "synthetic", "owner": "owner-a"},
        {"id": "x", "kind": "synthetic", "owner": None},
    ]
    assert followed(published, a, "synthetic")["id"] == "s1"
    assert followed(published, a.lower(), "text")["id"] == "t1"
    assert followed(published, b, "text") is None


def test_the_join_link_opens_the_page_of_the_runs_kind():
    assert join_link("http://10.0.0.5:8501", "ABCDEF") == "http://10.0.0.5:8501/?follow=ABCDEF"
    assert join_link("http://10.0.0.5:8501/text", "ABCDEF") == "http://10.0.0.5:8501/text?follow=ABCDEF"
    assert page_path("synthetic") == "" and page_path("text") == "text"
    png = qr_png("http://10.0.0.5:8501/?follow=ABCDEF")
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
