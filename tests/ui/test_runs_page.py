"""The Runs page (AppTest): each button acts on its first click and says what it did, once; the picker shows a
renamed run's new name in the same script run, keeps the run picked when its label changes (rename, status),
and lets a deleted run go; the rename box and the delete check belong to the run on screen; a queued run's
step reads "—"; a bad name is refused with a message, never Streamlit's error."""

from __future__ import annotations

import pytest

from scansnap.paper.presets import get_preset
from scansnap.service.jobs import get_manager
from scansnap.service.run_kinds import create_run
from scansnap.service.runner import RunJob
from tests.apphelp import run_app, stopped_run, wait_for
from tests.guards import GUARD_S

LONG = {"optim.steps": 100_000, "optim.batch": 8, "data.T": 16}


@pytest.fixture
def runs_page(data_dir):
    """The Runs page of a browser that owns three runs (newest first): queued, stopped (checkpoint), finished."""
    at = run_app().switch_page("app_pages/runs.py").run()
    owner, store = at.session_state["owner"], get_manager(data_dir).store
    cfg = get_preset("syn-small").config
    done = RunJob(cfg.with_overrides({"optim.steps": "30"}), store, name="finished one", owner=owner)
    assert done.run() == "finished"
    stopped = stopped_run(store, cfg.with_overrides(LONG), "stopped one", owner=owner, at_step=100)
    queued = create_run(store, cfg, name="queued one", owner=owner, status="queued")
    ids = {"finished": done.run_id, "stopped": stopped, "queued": queued}
    yield at.run(), ids
    for rid in ids.values():  # a resumed run trains in a worker: stopped and joined
        if get_manager(data_dir).is_live(rid):
            get_manager(data_dir).stop(rid)
            get_manager(data_dir).wait(rid, GUARD_S)
    for rid in ids.values():
        store.delete(rid)


def _label(at, rid: str) -> str:
    picker = at.selectbox(key="runs.pick")
    return next(o for o in picker.options if f" · {rid} · " in o)


def _said(at) -> list[str]:
    return [s.value.replace("\\", "") for s in at.success]


def test_a_queued_run_reads_a_dash_in_the_table_and_the_picker(runs_page):
    at, ids = runs_page
    table = at.dataframe[0].value.set_index("id")
    assert table.loc[ids["queued"], "step"] == "—" and table.loc[ids["stopped"], "step"] == "100"
    assert at.selectbox(key="runs.pick").value == ids["queued"]  # the newest first
    assert _label(at, ids["queued"]) == f"queued one · {ids['queued']} · queued · step —"
    assert "None" not in " ".join(at.selectbox(key="runs.pick").options)


def test_rename_shows_the_new_name_in_the_picker_at_once(runs_page):
    at, ids = runs_page
    at.selectbox(key="runs.pick").set_value(ids["finished"]).run()
    assert at.text_input(key="runs.newname").value == "finished one"  # its own name, not the queued run's
    at.text_input(key="runs.newname").input("  renamed one ")
    at.button(key="runs.rename").click().run()
    assert not at.exception
    assert _said(at) == ["Renamed 'finished one' to 'renamed one'."]
    assert at.selectbox(key="runs.pick").value == ids["finished"]
    assert _label(at, ids["finished"]).startswith("renamed one · ")
    assert at.dataframe[0].value.set_index("id").loc[ids["finished"], "name"] == "renamed one"
    at.run()
    assert not at.success  # said once
    assert at.selectbox(key="runs.pick").value == ids["finished"]  # the next rerun keeps it picked


@pytest.mark.parametrize("typed", ["", "   ", "finished one"])
def test_a_bad_name_is_refused_with_a_message(runs_page, typed):
    at, ids = runs_page
    at.selectbox(key="runs.pick").set_value(ids["finished"]).run()
    at.text_input(key="runs.newname").input(typed)
    at.button(key="runs.rename").click().run()
    assert not at.exception and not at.success
    assert len(at.error) == 1 and "Rename" in at.error[0].value
    assert _label(at, ids["finished"]).startswith("finished one · ")


def test_resume_from_checkpoint_acts_on_one_click_right_after_a_rename(runs_page, data_dir):
    at, ids = runs_page
    rid = ids["stopped"]
    at.selectbox(key="runs.pick").set_value(rid).run()
    at.text_input(key="runs.newname").input("lecture")
    at.button(key="runs.rename").click().run()  # its label changes: the picker keeps it all the same
    at.button(key="runs.ckpt").click().run()
    assert not at.exception and not at.error
    [said] = _said(at)
    assert said.startswith("Resumed 'lecture' from step 100; it is "), said
    assert at.selectbox(key="runs.pick").value == rid
    assert at.dataframe[0].value.set_index("id").loc[rid, "status"] in ("queued", "running")
    assert get_manager(data_dir).is_live(rid)
    wait_for(lambda: get_manager(data_dir).status(rid).step > 100)
    at.run()
    at.button(key="runs.stop").click().run()
    [said] = _said(at)
    assert said.startswith(("Stopped 'lecture' at step ", "Stopping 'lecture'")), said


def test_delete_says_what_it_deleted_and_the_run_leaves_the_picker(runs_page, data_dir):
    at, ids = runs_page
    rid = ids["finished"]
    snapshots = len(get_manager(data_dir).store.steps(rid))
    at.selectbox(key="runs.pick").set_value(rid).run()
    at.checkbox(key="runs.sure").check().run()
    at.selectbox(key="runs.pick").set_value(ids["stopped"]).run()
    assert not at.checkbox(key="runs.sure").value  # the check was for the other run
    at.selectbox(key="runs.pick").set_value(rid).run()
    at.checkbox(key="runs.sure").check().run()
    at.button(key="runs.delete").click().run()
    assert not at.exception
    assert _said(at) == [f"Deleted run 'finished one' ({rid}) and all its data: {snapshots} snapshots."]
    assert not [o for o in at.selectbox(key="runs.pick").options if f" · {rid} · " in o]
    assert rid not in set(at.dataframe[0].value["id"])
    assert at.selectbox(key="runs.pick").value == ids["queued"]
    assert not at.checkbox(key="runs.sure").value


def _report_button(at):
    return next(b for b in at.get("download_button") if b.proto.label == "HTML report")


def test_the_html_report_is_offered_for_a_kind_whose_view_has_one(runs_page, data_dir):
    """A synthetic run's view renders its report (the button is on); a real-text run's has none: the button
    is off and says why, in the kind's words."""
    at, ids = runs_page
    at.selectbox(key="runs.pick").set_value(_label(at, ids["finished"])).run()
    assert not _report_button(at).proto.disabled
    store = get_manager(data_dir).store
    text = create_run(
        store, get_preset("text-fig7-1layer-live", "text").config, name="a text one", owner=at.session_state["owner"]
    )
    try:
        at.run()
        at.selectbox(key="runs.pick").set_value(_label(at, text)).run()
        button = _report_button(at)
        assert button.proto.disabled and button.proto.help.startswith("real text runs have no HTML report")
    finally:
        store.delete(text)
