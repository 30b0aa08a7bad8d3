"""The Reproduce page: the engine's ReproduceManager (background run, storage, ids, stop, shutdown)
and the page through AppTest (AppTest never fires run_every timers: poll the manager, then rerun)."""

from __future__ import annotations

import json
import threading
import time

import pytest
from streamlit.testing.v1 import AppTest

from engine.service import reproductions as jobs
from engine.service.reproductions import ReproduceManager, check_id, get_repro_manager
from tests.apphelp import run_app

BAD_IDS = [
    "../x",
    "/etc",
    "",
    "..",
    "20240101-000000-abcdef/../../x",
    "20240101-000000-abcdef\n",
    "20240101-000000-ABCDEF",
    "x20240101-000000-abcdef",
]


@pytest.fixture
def mgr(tmp_path):
    m = ReproduceManager(tmp_path)
    yield m
    m.shutdown()


@pytest.fixture
def gate(monkeypatch):
    """run_item waits for the returned event before running the real item."""
    ev, real = threading.Event(), jobs.run_item

    def gated(name, quick, progress=None):
        assert ev.wait(20), "the test never opened the gate"
        return real(name, quick, progress=progress)

    monkeypatch.setattr(jobs, "run_item", gated)
    return ev


@pytest.fixture
def endless(monkeypatch):
    """run_item reports one optimiser step every 5 ms and never ends (until stopped)."""

    def train_forever(name, quick, progress=None):
        for _ in range(4000):
            progress(1)
            time.sleep(0.005)
        raise AssertionError("the stop request was never honoured")

    monkeypatch.setattr(jobs, "run_item", train_forever)


def worker_alive(rid: str) -> bool:
    return any(t.name == f"reproduce-{rid}" and t.is_alive() for t in threading.enumerate())


def wait_for(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


# ----------------------------------------------------------------- the manager
def test_start_wait_stores_report_figures_and_lists(mgr):
    rid = mgr.start(["joma", "fig9"])
    check_id(rid)
    assert mgr.wait(rid, 60) == "finished"
    s = mgr.status(rid)
    assert (s.items, s.items_done, s.current, s.error, s.fraction) == (("fig9", "joma"), 2, None, None, 1.0)
    assert s.elapsed_s > 0 and mgr.running() is None
    d = mgr.path(rid)
    for f in (
        "report.html",
        "verdicts.json",
        "configs.json",
        "figures/index.json",
        "figures/fig9_0.json",
        "figures/joma_0.json",
        "data/fig9_t0.parquet",
    ):
        assert (d / f).is_file(), f
    assert [x.name for x in mgr.root.iterdir()] == [rid]  # no temporary directory left behind
    [summary] = mgr.stored()
    assert (summary.id, summary.items, summary.n_verdicts, summary.n_failed) == (rid, ("fig9", "joma"), 8, 0)
    rep = mgr.load(rid)
    assert rep.doc["all_passed"] and set(rep.configs) == {"fig9", "joma"}
    assert [(f.item, f.caption) for f in rep.figures] == [
        ("fig9", "Fig. 9 (paper layout)"),
        ("joma", "JoMA (science §7)"),
    ]
    assert rep.figures[0].figure["data"] and "Fig. 9" in rep.figures[0].figure["layout"]["title"]["text"]
    assert json.loads(mgr.file(rid, "verdicts.json").read_text())["n_verdicts"] == 8


def test_stored_is_newest_first_and_skips_junk(mgr):
    first = mgr.start(["fig9"])
    assert mgr.wait(first, 60) == "finished"
    time.sleep(1.05)  # ids carry the start second
    second = mgr.start(["fig9"])
    assert second != first and mgr.wait(second, 60) == "finished"
    (mgr.root / "not-an-id").mkdir()
    (mgr.root / "20000101-000000-000000").mkdir()  # an id without verdicts.json
    assert [s.id for s in mgr.stored()] == [second, first]


def test_second_start_while_running_returns_the_running_id(mgr, gate):
    rid = mgr.start(["fig9"])
    assert mgr.start(["joma"], quick=True) == rid
    assert mgr.running().id == rid and mgr.status(rid).state == "running"
    other = ReproduceManager(mgr.root.parent / "elsewhere")
    with pytest.raises(RuntimeError, match="another data directory"):
        other.start(["fig9"])  # one reproduction per process, whatever the data directory
    gate.set()
    assert mgr.wait(rid, 60) == "finished"
    assert mgr.status(rid).items == ("fig9",)
    assert len(mgr.stored()) == 1


def test_stop_between_items_stores_nothing(mgr, gate):
    rid = mgr.start(["fig9", "joma"])
    mgr.stop()
    gate.set()
    assert mgr.wait(rid, 60) == "stopped"
    assert mgr.status(rid).items_done <= 1
    assert mgr.stored() == [] and not list(mgr.root.glob("*"))


def test_stop_during_training_and_progress_counts_steps(mgr, endless):
    rid = mgr.start(["fig4"])
    wait_for(lambda: mgr.status(rid).steps_done >= 5)
    s = mgr.status(rid)
    assert s.current == "fig4" and s.steps_total == 100 and 0 < s.fraction < 1
    mgr.stop(rid)
    assert mgr.wait(rid, 10) == "stopped"
    assert mgr.stored() == [] and not worker_alive(rid)


def test_failure_is_reported_and_nothing_stored(mgr, monkeypatch):
    def broken(name, quick, progress=None):
        raise FloatingPointError("diverged")

    monkeypatch.setattr(jobs, "run_item", broken)
    rid = mgr.start(["joma"])
    assert mgr.wait(rid, 10) == "failed"
    assert mgr.status(rid).error == "joma: FloatingPointError: diverged"
    assert mgr.stored() == []


@pytest.mark.parametrize("bad", BAD_IDS)
def test_invalid_ids_are_refused(mgr, bad):
    with pytest.raises(ValueError, match="not a reproduction id"):
        check_id(bad)
    for call in (mgr.path, mgr.load, mgr.exists):
        with pytest.raises(ValueError):
            call(bad)
    with pytest.raises(ValueError):
        mgr.file(bad, "report.html")


def test_unknown_id_file_and_item_are_refused(mgr):
    with pytest.raises(KeyError, match="no stored reproduction"):
        mgr.load("20000101-000000-abcdef")
    assert not mgr.exists("20000101-000000-abcdef")
    with pytest.raises(ValueError):
        mgr.file("20000101-000000-abcdef", "../runs.sqlite")
    with pytest.raises(ValueError, match="unknown item"):
        mgr.start(["fig7"])
    assert mgr.running() is None


def test_shutdown_stops_and_joins_the_worker(tmp_path, endless):
    m = get_repro_manager(tmp_path)
    assert get_repro_manager(tmp_path) is m
    rid = m.start(["theorems"])
    wait_for(lambda: m.status(rid).steps_done > 0)
    assert worker_alive(rid)
    m.shutdown()
    assert not worker_alive(rid) and m.status(rid).state == "stopped"
    with pytest.raises(RuntimeError, match="shut down"):
        m.start(["fig9"])
    assert get_repro_manager(tmp_path) is not m  # a fresh manager after a shutdown


# ----------------------------------------------------------------- the page (AppTest)
@pytest.fixture(scope="module")
def page_dir(data_dir):
    yield data_dir
    get_repro_manager(data_dir).shutdown()


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
    assert at.multiselect(key="rp.items").value == ["fig4", "fig5", "fig6", "fig9", "theorems", "joma"]
    assert not at.button(key="rp.run").disabled
    assert at.toggle(key="rp.quick").value is False
    assert "No stored reproductions yet" in texts(at.info)


def test_run_fig9_from_the_page_then_reopen_the_link(page_dir):
    at = page()
    at.multiselect(key="rp.items").set_value(["fig9"]).run()
    at.button(key="rp.run").click().run()
    assert not at.exception
    rid = at.session_state["rp.watch"]
    assert get_repro_manager(page_dir).wait(rid, 60) == "finished"
    at.run()
    assert not at.exception
    assert "4/4 verdicts pass" in texts(at.success)
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
    assert "4/4 verdicts pass" in texts(again.success) and not again.warning


def test_progress_and_stop_from_the_page(page_dir, endless):
    mgr = get_repro_manager(page_dir)
    before = mgr.stored()
    at = page()
    at.multiselect(key="rp.items").set_value(["fig4"]).run()
    at.button(key="rp.run").click().run()
    rid = at.session_state["rp.watch"]
    wait_for(lambda: mgr.status(rid).steps_done >= 3)
    at.run()
    assert not at.exception and at.button(key="rp.run").disabled
    [bar] = at.get("progress")
    assert "item 1 / 1: fig4 · step" in bar.proto.text and "/ 100" in bar.proto.text
    other = page()  # another browser watches the progress but may not stop someone else's reproduction
    assert other.get("progress") and other.button(key="rp.stop").disabled
    assert not at.button(key="rp.stop").disabled
    at.button(key="rp.stop").click().run()
    assert mgr.wait(rid, 10) == "stopped"
    at.run()
    assert not at.exception and not at.get("progress")
    assert f"Reproduction {rid} was stopped" in texts(at.info)
    assert mgr.stored() == before and not at.button(key="rp.run").disabled


@pytest.mark.parametrize("bad", ["../../etc", "20990101-000000-abcdef"])
def test_bad_report_link_warns_without_traceback(page_dir, bad):
    at = page({"report": bad})
    assert not at.exception
    assert bad in texts(at.warning)
