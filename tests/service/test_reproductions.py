"""Reproductions as jobs of the one job manager (each in a worker process), their storage, ids,
stop and shutdown; and the in-worker runner (run_and_store) with a patched item runner."""

from __future__ import annotations

import json
import os
import re
import signal

import pytest

from scansnap.paper.verdicts import Tally
from scansnap.service import reproduction_run
from scansnap.service.control import RunControl
from scansnap.service.jobs import JobManager, get_manager
from scansnap.service.reproductions import DamagedError, Reproductions, check_id
from scansnap.service.store import RunStore
from scansnap.service.writers import pid_alive
from tests.apphelp import wait_for
from tests.guards import GUARD_S
from tests.stored_repro import setting, store_reproduction, without

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
LONG = "fig6"  # 4 panels × 100 steps of 160 replicas (full mode): seconds to minutes, stoppable at every step


@pytest.fixture
def mgr(tmp_path):
    m = JobManager(RunStore(tmp_path), max_concurrent=1)
    yield m
    m.shutdown()


def stored(m: JobManager) -> Reproductions:
    return Reproductions(m.store.data_dir)


def test_start_wait_stores_report_figures_and_lists(mgr):
    rid = mgr.start_reproduction(["joma", "fig9"])
    check_id(rid)
    assert mgr.wait(rid, GUARD_S) == "finished"
    s = mgr.status(rid)
    assert (s.kind, s.items, s.items_done, s.current, s.message) == ("reproduce", ("fig9", "joma"), 2, None, None)
    assert s.fraction == 1.0
    assert s.elapsed_s > 0 and mgr.running_reproduction() is None
    repro = stored(mgr)
    d = repro.path(rid)
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
    assert [x.name for x in repro.root.iterdir()] == [rid]  # no temporary directory left behind
    [summary] = repro.stored()
    assert (summary.id, summary.items, summary.counts) == (rid, ("fig9", "joma"), Tally(8, 0, 0))
    rep = repro.load(rid)
    assert rep.doc["all_passed"] and set(rep.configs) == {"fig9", "joma"}
    assert [(f.item, f.caption) for f in rep.figures] == [
        ("fig9", "Fig. 9 (paper layout)"),
        ("joma", "JoMA (science §7)"),
    ]
    assert rep.figures[0].figure["data"] and "Fig. 9" in rep.figures[0].figure["layout"]["title"]["text"]
    assert json.loads(repro.file(rid, "verdicts.json").read_text())["n_verdicts"] == 8


def test_second_start_while_running_returns_the_running_id(mgr):
    rid = mgr.start_reproduction([LONG])
    assert mgr.start_reproduction(["joma"], quick=True) == rid
    assert mgr.running_reproduction().run_id == rid and mgr.status(rid).status == "running"
    wait_for(lambda: mgr.status(rid).step >= 2)
    s = mgr.status(rid)
    assert s.current == LONG and s.total_steps == 400 and 0 < s.fraction < 1
    mgr.stop(rid)
    assert mgr.wait(rid, GUARD_S) == "stopped"
    assert stored(mgr).stored() == [] and not list(stored(mgr).root.glob("*"))  # nothing half-written


def test_a_killed_worker_fails_the_reproduction_and_stores_nothing(mgr):
    rid = mgr.start_reproduction([LONG])
    wait_for(lambda: mgr.status(rid).step >= 1)
    [pid] = mgr.worker_pids()
    os.kill(pid, signal.SIGKILL)
    assert mgr.wait(rid, GUARD_S) == "failed"
    assert "worker process ended" in mgr.status(rid).message
    assert stored(mgr).stored() == [] and not pid_alive(pid)


def test_run_and_store_reports_a_failing_item_and_leaves_nothing(tmp_path, monkeypatch):
    def broken(name, quick, progress=None, corpus_loader=None):
        raise FloatingPointError("diverged")

    monkeypatch.setattr(reproduction_run, "run_item", broken)
    seen = []
    state, error = reproduction_run.run_and_store(
        str(tmp_path), "20000101-000000-abcdef", ["joma"], False, RunControl(), lambda *m: seen.append(m)
    )
    assert (state, error) == ("failed", "joma: FloatingPointError: diverged") and seen == [("joma", 0)]
    assert not list((tmp_path / "reproductions").glob("*"))


def test_run_and_store_stops_between_items(tmp_path, monkeypatch):
    ran = []
    monkeypatch.setattr(reproduction_run, "run_item", lambda name, quick, progress=None, **_: ran.append(name))
    control = RunControl()
    control.stop()
    state, _ = reproduction_run.run_and_store(
        str(tmp_path), "20000101-000000-abcdef", ["fig9", "joma"], False, control, lambda *m: None
    )
    assert state == "stopped" and ran == []


@pytest.mark.parametrize("bad", BAD_IDS)
def test_invalid_ids_are_refused(tmp_path, bad):
    repro = Reproductions(tmp_path)
    with pytest.raises(ValueError, match="not a reproduction id"):
        check_id(bad)
    for call in (repro.path, repro.load, repro.exists):
        with pytest.raises(ValueError):
            call(bad)
    with pytest.raises(ValueError):
        repro.file(bad, "report.html")


def test_unknown_id_file_and_item_are_refused(mgr):
    repro = stored(mgr)
    with pytest.raises(KeyError, match="no stored reproduction"):
        repro.load("20000101-000000-abcdef")
    assert not repro.exists("20000101-000000-abcdef")
    with pytest.raises(ValueError):
        repro.file("20000101-000000-abcdef", "../runs.sqlite")
    with pytest.raises(ValueError, match="unknown item"):
        mgr.start_reproduction(["fig8"])
    assert mgr.running_reproduction() is None


def test_stored_skips_junk(tmp_path):
    repro = Reproductions(tmp_path)
    repro.root.mkdir(parents=True)
    (repro.root / "not-an-id").mkdir()
    (repro.root / "20000101-000000-000000").mkdir()  # an id without verdicts.json
    assert repro.stored() == []


def test_shutdown_stops_and_joins_the_worker(tmp_path):
    m = get_manager(str(tmp_path))
    assert get_manager(str(tmp_path)) is m
    rid = m.start_reproduction([LONG])
    wait_for(lambda: m.status(rid).step > 0)
    [pid] = m.worker_pids()
    m.shutdown()
    assert not pid_alive(pid) and m.status(rid).status == "stopped"
    with pytest.raises(RuntimeError, match="shut down"):
        m.start_reproduction(["fig9"])
    assert get_manager(str(tmp_path)) is not m  # a fresh manager after a shutdown
    get_manager(str(tmp_path)).shutdown()


# ----------------------------------------------------------------- damaged stored reproductions
GOOD, DAMAGED = "20990101-000000-000001", "20990101-000000-000002"


def test_a_stored_reproduction_reads_back_as_written(tmp_path):
    """The check of stored documents accepts what the worker writes (report.summary), defaults filled in."""
    store_reproduction(tmp_path, GOOD)
    [s] = Reproductions(tmp_path).stored()
    assert s.problem is None and s.items == ("fig9",) and s.counts == Tally(1, 0, 0)
    rep = Reproductions(tmp_path).load(GOOD)
    assert (
        rep.doc["wall_s"] == 0.5 and rep.doc["items"][0]["wall_s"] == 0.5 and rep.doc["verdicts"][0]["status"] == "pass"
    )
    assert rep.doc["schema"] == 2  # fields the check does not name are kept
    assert [f.caption for f in rep.figures] == ["the curve"] and rep.configs == {"fig9": {"eta_z": [1, 2]}}


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (without("wall_s"), "wall_s: missing"),  # the report of the issue: KeyError 'wall_s' on the page
        (setting("many", "n_verdicts"), "n_verdicts: input should be a valid integer"),
        (without("items", 0, "wall_s"), "items[0].wall_s: missing"),
        (setting("high", "verdicts", 0, "value"), "verdicts[0].value: input should be a valid number"),
        (setting(None, "created"), "created: input should be a valid string"),
        (lambda doc: [doc], "the document: not a JSON object"),
    ],
)
def test_a_damaged_verdicts_json_is_listed_with_what_is_wrong(tmp_path, damage, said):
    """Listed (newest first, beside the good one) with its problem; loading it says the same."""
    store_reproduction(tmp_path, GOOD)
    store_reproduction(tmp_path, DAMAGED, damage)
    repro = Reproductions(tmp_path)
    bad, good = repro.stored()
    assert (bad.id, good.id) == (DAMAGED, GOOD) and good.problem is None
    assert bad.problem is not None and said in bad.problem and "verdicts.json" in bad.problem
    with pytest.raises(DamagedError, match=re.escape(said)):
        repro.load(DAMAGED)


def test_a_verdicts_json_that_is_not_json_is_listed_with_what_is_wrong(tmp_path):
    (store_reproduction(tmp_path, DAMAGED) / "verdicts.json").write_text('{"created": ', encoding="utf-8")
    [s] = Reproductions(tmp_path).stored()
    assert s.problem is not None and s.problem.startswith("verdicts.json is not JSON")


@pytest.mark.parametrize(
    ("file", "text", "said"),
    [
        ("configs.json", None, "configs.json cannot be read"),
        ("configs.json", "[1, 2]", "configs.json holds a list, not a JSON object"),
        (
            "figures/index.json",
            '[{"item": "fig9", "caption": "x"}]',
            "figures/index.json has an entry that is not a figure: k: missing",
        ),
        ("figures/fig9_0.json", "{", "figures/fig9_0.json is not JSON"),
    ],
)
def test_damaged_configs_or_figures_say_which_file(tmp_path, file, text, said):
    path = store_reproduction(tmp_path, DAMAGED) / file
    if text is None:
        path.unlink()
    else:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(DamagedError, match=re.escape(said)):
        Reproductions(tmp_path).load(DAMAGED)
