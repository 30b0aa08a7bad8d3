"""The budgets issue's findings that came through the websocket, replayed the same way against a real server
(bench/st_client.py speaks Streamlit's protocol, one fresh cookie per client, as a browser tab):

1. fresh cookies pressing ▶ Start, moving the speed slider, one cookie starting again: the queue's limit holds;
6. a visitor guessing operator keys from the operator's own address never locks the operator out;
8. 205 newer runs never push a victim's run out of reach of the Runs page or Compare.

Each test starts its own server; the runs it starts are throttled and never need to finish."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.st_client import StClient
from bench.webserver import serve
from scansnap.kinds.synthetic.service.budget import estimated_seconds
from scansnap.paper.presets import get_preset
from scansnap.service.store import RunStore
from tests.guards import GUARD_S

pytestmark = pytest.mark.server
LINK = "/?preset=syn-small&optim.steps=100000&speed=1"  # 100,000 steps at 1 step/s: light, and never done
FULL = "min of training queued or running"
KEY = "the-operators-key"


@contextmanager
def server(tmp_path: Path, **env: str) -> Iterator[tuple[str, Path]]:
    """A server with one training slot and ``env``: (its url, its data folder)."""
    data = tmp_path / "data"
    with serve(data, tmp_path / "streamlit.log", env={"SCANSNAP_MAX_JOBS": "1", **env}) as srv:
        yield srv.url, data


def _client(url: str, path: str, name: str, cookie: str = "") -> StClient:
    client = StClient(url, name, follow_auto_rerun=False, cookie=cookie)
    client.open(path, timeout=GUARD_S)
    assert not client.exceptions(), client.exceptions()
    return client


PER_RUN = estimated_seconds(get_preset("syn-small").config.with_overrides({"optim.steps": 100_000}))


def test_fresh_cookies_and_the_speed_slider_cannot_stack_runs_past_the_queue(tmp_path):
    with server(tmp_path, SCANSNAP_MAX_QUEUE_S=str(1.5 * PER_RUN)) as (url, data):  # one run fits, two do not
        _stack_runs(url, data)


def _stack_runs(url: str, data: Path) -> None:
    first = _client(url, LINK, "first")
    first.click("▶ Start", timeout=GUARD_S)
    assert "run" in first.query and not first.has_text(FULL), first.texts()
    others = [_client(url, LINK, f"cookie-{k}") for k in range(2, 5)]
    try:
        for other in others:  # a run throttled to 1 step/s holds its whole estimate in the queue
            other.click("▶ Start", timeout=GUARD_S)
            assert other.has_text(FULL) and "run" not in other.query, other.texts()
        first.set_value("speed (steps/s)", "max speed", timeout=GUARD_S)
        others[0].click("▶ Start", timeout=GUARD_S)  # the slider at max frees nothing
        assert others[0].has_text(FULL), others[0].texts()
        first.click("⏸ Pause", timeout=GUARD_S)
        again = _client(url, LINK, "first, another tab", cookie=first.cookie)  # the same browser
        others.append(again)
        again.click("▶ Start", timeout=GUARD_S)  # paused, the first run still holds its place
        assert again.has_text(FULL) and "run" not in again.query, again.texts()
    finally:
        for c in [first, *others]:
            c.close()
    with RunStore(data) as store:
        assert len(store.list_runs()) == 1  # every refused Start stored nothing


def test_a_visitor_guessing_keys_from_the_operators_address_never_locks_the_operator_out(tmp_path):
    """Both clients come from 127.0.0.1.  The operator's browser gave the key once; then, while a visitor
    guesses a wrong key after every refusal, the operator leaves and types the key again, ten times: in every
    time.  The guesser is held by its own wait."""
    with server(tmp_path, SCANSNAP_OPERATOR_KEY=KEY) as (url, _):
        _guess_beside_the_operator(url)


def _guess_beside_the_operator(url: str) -> None:
    operator = _client(url, "/runs", "operator")
    guesser = _client(url, "/runs", "guesser")
    try:
        operator.type_text("operator key", KEY)
        assert operator.has_text("Operator mode: you may manage every run."), operator.texts()
        held = 0
        for k in range(10):
            guesser.type_text("operator key", f"guess {k}")
            held += guesser.has_text("Too many wrong keys")
            operator.click("Leave operator mode")
            operator.type_text("operator key", "")  # the box as a browser leaves it: typed again below
            operator.type_text("operator key", KEY)
            assert operator.has_text("Operator mode: you may manage every run."), (k, operator.texts())
        assert held >= 5, held  # back-to-back guesses: each one after the first waits 1, 2, 4 … s
    finally:
        operator.close()
        guesser.close()


def test_a_victims_run_stays_reachable_under_205_newer_runs(tmp_path):
    """The Runs page finds the victim's run by its name among 206 (and pages them); Compare opens it by
    link and finds it by search."""
    with server(tmp_path) as (url, data):
        _find_the_victim(url, data)


def _find_the_victim(url: str, data: Path) -> None:
    config = get_preset("syn-small").config.to_json()
    with RunStore(data) as store:
        victim = store.create_run("the victim's run", config, "cpu", {}, status="finished", owner="victim")
        store.append_snapshot(victim, 1, {}, [(0, None, "entropy_distinct", 1.0)])
        for i in range(205):
            rid = store.create_run(f"flood {i}", config, "cpu", {}, status="finished", owner="flooder")
            store.append_snapshot(rid, 1, {}, [(0, None, "entropy_distinct", 1.0)])
    runs = _client(url, "/runs", "victim")
    compare = _client(url, f"/compare?runs={victim}", "victim-compare")
    try:
        assert runs.has_text("Runs 1–200 of 206"), runs.texts()
        assert not any("victim" in o for o in runs.options("run"))  # the newest 200: the flood's
        runs.type_text("find a run", "victim")
        assert [o for o in runs.options("run") if "the victim's run" in o], runs.options("run")
        assert any("the victim's run" in o for o in compare.options("runs", "multiselect")), compare.texts()
        compare.type_text("find older runs by name or id", "victim")
        assert any("the victim's run" in o for o in compare.options("runs", "multiselect"))
    finally:
        runs.close()
        compare.close()
