"""The Reproduce page through AppTest (AppTest never fires run_every timers: poll the job manager,
then rerun).  The manager's reproductions themselves are tested in tests/service/test_reproductions.py."""

from __future__ import annotations

import json
import shutil

import pytest
from streamlit.testing.v1 import AppTest

from scansnap.paper.items.catalog import ITEMS
from scansnap.paper.items.costs import about, estimated_seconds
from scansnap.service.jobs import get_manager
from tests.apphelp import run_app, wait_for
from tests.guards import GUARD_S
from tests.stored_repro import setting, store_reproduction, without

LONG_ITEM = "fig6"  # 640 runs × 100 steps in full mode: long enough to watch and stop


# ----------------------------------------------------------------- the page (AppTest)
@pytest.fixture(scope="module")
def page_dir(data_dir):
    return data_dir


def page(params: dict[str, str] | None = None) -> AppTest:
    at = run_app()
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.switch_page("app_pages/reproduce.py").run()


def texts(elements) -> str:
    return " ".join(e.value for e in elements)


def test_page_renders_with_all_items_selected(page_dir):
    at = page()
    assert not at.exception
    assert at.title[0].value == "Reproduce the paper"
    assert at.multiselect(key="rp.items").value == [
        "fig4",
        "fig5",
        "fig6",
        "fig9",
        "theorems",
        "joma",
        "fig7",
        "joma-real",
    ]
    assert not at.button(key="rp.run").disabled
    assert at.toggle(key="rp.quick").value is True  # the page opens on the quick mode (a minute, not hours)
    assert "No stored reproductions yet" in texts(at.info)


def test_run_fig9_from_the_page_then_reopen_the_link(page_dir):
    at = page()
    at.multiselect(key="rp.items").set_value(["fig9"]).run()
    at.button(key="rp.run").click().run()
    assert not at.exception
    rid = at.session_state["rp.watch"]
    assert get_manager(page_dir).wait(rid, GUARD_S) == "finished"
    at.run()
    assert not at.exception
    assert "4 pass · 0 n/a · 0 fail" in texts(at.success)
    table = at.dataframe[0].value
    assert list(table["item"]) == ["fig9"] * 4 and list(table["verdict"]) == ["✅ PASS"] * 4
    downloads = {d.proto.label: d.proto for d in at.get("download_button")}
    assert set(downloads) == {"⬇ report.html (self-contained)", "⬇ verdicts.json"}
    assert all(d.ignore_rerun and d.deferred_file_id for d in downloads.values())  # data=callable, no rerun
    assert [t.label for t in at.tabs] == ["✅ fig9"]
    assert at.query_params["report"] in (rid, [rid])
    assert at.selectbox(key="rp.pick").value == rid
    assert len(at.get("plotly_chart")) == 1
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["layout"]["font"]["size"] >= 15 and "Fig. 9" in fig["layout"]["title"]["text"]
    again = page({"report": rid})  # a second tab opening the link
    assert not again.exception and again.selectbox(key="rp.pick").value == rid
    assert "4 pass · 0 n/a · 0 fail" in texts(again.success) and not again.warning


def test_a_visitor_gets_the_quick_mode_only(page_dir):
    at = page()
    assert at.toggle(key="rp.quick").disabled and at.toggle(key="rp.quick").value is True
    assert "only the operator starts it" in at.toggle(key="rp.quick").help


def test_progress_and_stop_from_the_page(page_dir, monkeypatch):
    """The operator starts a full reproduction (a visitor's is the quick one)."""
    monkeypatch.setenv("SCANSNAP_OPERATOR_KEY", "the-key")
    mgr = get_manager(page_dir)
    before = mgr.store.data_dir / "reproductions"
    stored_before = sorted(before.glob("*")) if before.exists() else []
    at = page()
    at.session_state["operator"] = True  # the operator key was typed in this session
    at.run()
    assert not at.toggle(key="rp.quick").disabled
    at.toggle(key="rp.quick").set_value(False)
    at.multiselect(key="rp.items").set_value([LONG_ITEM]).run()
    at.button(key="rp.run").click().run()
    rid = at.session_state["rp.watch"]
    wait_for(lambda: mgr.status(rid).step >= 3)
    at.run()
    assert not at.exception and at.button(key="rp.run").disabled
    [bar] = at.get("progress")
    assert f"item 1 / 1: {LONG_ITEM} · step" in bar.proto.text and "/ 400" in bar.proto.text
    other = page()  # another browser watches the progress but may not stop someone else's reproduction
    assert other.get("progress") and other.button(key="rp.stop").disabled
    assert not at.button(key="rp.stop").disabled
    at.button(key="rp.stop").click().run()
    assert mgr.wait(rid, GUARD_S) == "stopped"
    at.run()
    assert not at.exception and not at.get("progress")
    assert f"Reproduction {rid} was stopped" in texts(at.info)
    assert sorted(before.glob("*")) == stored_before and not at.button(key="rp.run").disabled


@pytest.mark.parametrize("bad", ["../../etc", "20990101-000000-abcdef"])
def test_bad_report_link_warns_without_traceback(page_dir, bad):
    at = page({"report": bad})
    assert not at.exception
    assert bad in texts(at.warning)


# ----------------------------------------------------------------- damaged stored reproductions
@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (without("wall_s"), "wall_s: missing"),  # the issue: KeyError 'wall_s' in verdict_line for everyone
        (setting("fast", "wall_s"), "wall_s: input should be a valid number"),
        (without("items", 0, "title"), "items[0].title: missing"),
        (setting("high", "verdicts", 0, "value"), "verdicts[0].value: input should be a valid number"),
    ],
)
def test_a_damaged_stored_reproduction_is_one_message_and_the_page_still_works(page_dir, damage, said):
    """The damaged reproduction is the newest, so it is the one shown by default: one message naming it
    and what is wrong, no exception; the good one beside it can still be picked and is shown whole."""
    good, bad = "29990101-000000-00000a", "29990101-000001-00000b"  # newer than any the tests start
    paths = [store_reproduction(page_dir, good), store_reproduction(page_dir, bad, damage)]
    try:
        at = page()
        assert not at.exception
        assert at.selectbox(key="rp.pick").value == bad
        assert "damaged" in at.selectbox(key="rp.pick").format_func(bad)
        [error] = at.error
        assert bad in error.value and said in error.value.replace("\\", "")
        at.selectbox(key="rp.pick").set_value(good).run()
        assert not at.exception and not at.error
        assert "1 pass · 0 n/a · 0 fail" in texts(at.success) and [t.label for t in at.tabs] == ["✅ fig9"]
    finally:
        for p in paths:
            shutil.rmtree(p)


def test_the_estimate_names_the_item_count_and_the_measured_seconds(page_dir, monkeypatch):
    """Before Start: how many items will run and how long they take, from their measured seconds (the
    page said "all six items take about 30 s" for eight items that took 75 s); the operator's full mode too."""
    monkeypatch.setenv("SCANSNAP_OPERATOR_KEY", "the-key")
    at = page()
    at.session_state["operator"] = True
    at.run()
    said = texts(at.caption)
    assert "Quick mode · 8 items ·" in said and about(estimated_seconds(list(ITEMS), True)) in said
    at.multiselect(key="rp.items").set_value(["fig6", "fig9"]).run()
    said = texts(at.caption)
    assert "Quick mode · 2 items ·" in said and about(estimated_seconds(["fig6", "fig9"], True)) in said
    at.toggle(key="rp.quick").set_value(False)
    at.multiselect(key="rp.items").set_value(["fig7"]).run()
    said = texts(at.caption)
    assert "Full mode · 1 item ·" in said and about(estimated_seconds(["fig7"], False)) in said
    assert "Fig. 7 (real text) at full size is a GPU run" in said
