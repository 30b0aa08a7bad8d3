"""The Runs page in Debian's Chromium, as an operator: every button acts on its first click and says what it
did.  A renamed run shows its new name in the picker at once; Resume from checkpoint, pressed once right
after that rename, resumes it (the picker's label had changed: before scansnap/ui/runs_manage.py, that click landed on
a page that had fallen back to another run and did nothing); Stop, once, stops it again; Delete says what it
deleted and the run leaves the picker; a queued run's step reads "—".  Screenshots of the page after those
actions (runs-resumed-1280x720.png, runs-deleted-1280x720.png, runs-deleted-1920x1080.png) go to
test-artifacts/."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from scansnap.paper.presets import get_preset
from scansnap.service.run_kinds import create_run
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.apphelp import stopped_run
from tests.e2e.watching import serve_watched
from tests.guards import GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
KEY = "runs-page-operator-" + "k" * 16
LONG = {"optim.steps": 100_000, "optim.batch": 8, "data.T": 16}  # still training when the test stops it
IDLE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"
PICKED = "document.querySelector('[data-testid=stMain] [data-testid=stSelectbox] input')?.value || ''"
TABLE = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')[0].querySelectorAll('[role=row]')]
  .map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.textContent)).filter(r => r.length)"""


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A data directory with a finished run to delete, a stopped run with a checkpoint, a queued one (newest
    first: waiting, stopped lecture, to delete)."""
    data = tmp_path_factory.mktemp("runs-data")
    cfg = get_preset("syn-small").config
    with RunStore(data) as store:
        doomed = RunJob(cfg.with_overrides({"optim.steps": "30"}), store, name="to delete")
        assert doomed.run() == "finished"
        stopped = stopped_run(store, cfg.with_overrides(LONG), "stopped lecture", at_step=100)
        queued = create_run(store, cfg, name="waiting", status="queued")
        ids = {"doomed": doomed.run_id, "stopped": stopped, "queued": queued}
        return data, ids, store.checkpoint(stopped)[0], len(store.steps(doomed.run_id))


@pytest.fixture(scope="module")
def server(seeded, tmp_path_factory):
    data = seeded[0]
    with serve_watched(data, tmp_path_factory.mktemp("log") / "streamlit.log", SCANSNAP_OPERATOR_KEY=KEY) as srv:
        yield srv.url


@pytest.fixture
def page(browser, server):
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    pg.set_default_timeout(GUARD_MS)
    pg.goto(f"{server}/runs")
    pg.get_by_role("heading", name="Runs").wait_for()
    box = pg.get_by_label("operator key", exact=True)
    box.fill(KEY)
    box.press("Enter")
    pg.get_by_text("Operator mode: you may manage every run.").wait_for()
    yield pg
    pg.close()


def _idle(pg) -> None:
    pg.wait_for_function(IDLE)


def _picked(pg) -> str:
    return pg.evaluate(f"() => {PICKED}")


def _pick(pg, name: str) -> None:
    """Choose the run called ``name`` in the picker, as a user does, and wait until the page shows it.  A box
    opened while a rerun lands is redrawn and closes its list: each try waits for the pick and tries again."""
    landed = f"() => ({PICKED}).startsWith({json.dumps(name + ' · ')})"
    for _ in range(5):
        _idle(pg)
        pg.locator("[data-testid=stMain] [data-testid=stSelectbox]").click()
        try:
            pg.get_by_role("option", name=re.compile(f"^{re.escape(name)} · ")).click(timeout=10_000)
            pg.wait_for_function(landed, timeout=10_000)
            _idle(pg)
            return
        except PlaywrightTimeout:
            pg.keyboard.press("Escape")
    pytest.fail(f"five tries did not pick the run {name!r}")


def _options(pg) -> list[str]:
    """The picker's options, as its opened list shows them (opened again if a rerun closed it)."""
    for _ in range(5):
        _idle(pg)
        pg.locator("[data-testid=stMain] [data-testid=stSelectbox]").click()
        try:
            pg.get_by_role("option").first.wait_for(timeout=10_000)
            return pg.get_by_role("option").all_inner_texts()
        except PlaywrightTimeout:
            continue
        finally:
            pg.keyboard.press("Escape")
    pytest.fail("five tries did not open the run picker")


def _said(pg, text: str) -> None:
    """The page's notice says ``text``, and the script run that drew it has ended (the guard for what follows)."""
    pg.locator("[data-testid=stMain] [data-testid=stAlertContentSuccess]").filter(has_text=text).wait_for()
    _idle(pg)


def _table(pg) -> dict[str, dict[str, str]]:
    """The runs table's cells as drawn now, by run id: {column: text}."""
    cols = ["id", "name", "status", "step"]
    return {r[0]: dict(zip(cols, r[:4], strict=True)) for r in pg.evaluate(TABLE) if len(r) > 4}


def _shows(pg, rid: str, column: str, pattern: str) -> None:
    """The runs table's row of ``rid`` shows ``pattern`` (a regex) in ``column``.  The grid draws its cells
    once it is in view: it is scrolled there, and its cells are read until they are drawn (a guard)."""
    pg.locator("[data-testid=stDataFrame]").first.scroll_into_view_if_needed()
    drawn = f"""() => {{ const rows = ({TABLE})(); const cols = ["id", "name", "status", "step"];
      const row = rows.find(r => r[0] === {json.dumps(rid)});
      return !!row && new RegExp({json.dumps(pattern)}).test(row[cols.indexOf({json.dumps(column)})]); }}"""
    try:
        pg.wait_for_function(drawn, timeout=GUARD_MS)
    except PlaywrightTimeout:
        pytest.fail(f"run {rid}'s {column} is not {pattern!r}: the table shows {_table(pg)}")


def _absent(pg, rid: str) -> None:
    """The runs table has no row of ``rid`` once drawn (read as :func:`_shows` does)."""
    pg.locator("[data-testid=stDataFrame]").first.scroll_into_view_if_needed()
    rows = f"({TABLE})()"
    drawn = f"() => {{ const rows = {rows}; return rows.length > 0 && !rows.some(r => r[0] === {json.dumps(rid)}); }}"
    try:
        pg.wait_for_function(drawn, timeout=GUARD_MS)
    except PlaywrightTimeout:
        pytest.fail(f"run {rid} is still in the table: {_table(pg)}")


GRIDS_DRAWN = """() => [...document.querySelectorAll('[data-testid=stDataFrame]')].every(d => {
  const c = d.querySelector('canvas');
  return c && c.getBoundingClientRect().width >= d.getBoundingClientRect().width - 4; })"""


def _shoot(pg, name: str) -> None:
    """A screenshot of the page under test-artifacts/, scrolled to the notice as after the click (the table
    reads above scrolled away from it), nothing focused, the tables drawn to the window's width (a grid
    redraws its canvas a moment after a resize)."""
    pg.evaluate("() => document.activeElement?.blur()")
    _idle(pg)
    pg.wait_for_function(GRIDS_DRAWN)
    pg.locator("[data-testid=stMain] [data-testid=stAlertContentSuccess]").scroll_into_view_if_needed()
    ARTIFACTS.mkdir(exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / name))


def test_rename_then_resume_then_stop_each_act_on_the_first_click(seeded, page):
    _, ids, ckpt, _ = seeded
    rid = ids["stopped"]
    _pick(page, "stopped lecture")
    page.get_by_text("Rename or delete").click()
    name = page.get_by_label("new name", exact=True)
    assert name.input_value() == "stopped lecture"  # the picked run's own name, not the one shown first
    name.fill("lecture, resumed")  # no Enter: the click on Rename commits the box, as for a user
    page.get_by_role("button", name="Rename", exact=True).click()
    _said(page, "Renamed 'stopped lecture' to 'lecture, resumed'.")
    assert _picked(page) == f"lecture, resumed · {rid} · stopped · step {ckpt}"  # at once, no other rerun
    _shows(page, rid, "name", "^lecture, resumed$")

    page.get_by_role("button", name="Resume from checkpoint").click()  # once
    _said(page, f"Resumed 'lecture, resumed' from step {ckpt};")
    assert re.match(f"lecture, resumed · {rid} · (queued|running) · ", _picked(page)), _picked(page)
    _shows(page, rid, "status", "^(queued|running)$")
    assert page.get_by_role("button", name="Resume from checkpoint").count() == 0  # it trains: Stop instead
    _shoot(page, "runs-resumed-1280x720.png")

    page.get_by_role("button", name="⏹ Stop").click()  # once
    _said(page, "Stopped 'lecture, resumed' at step")
    assert re.match(f"lecture, resumed · {rid} · stopped · ", _picked(page)), _picked(page)
    page.get_by_role("button", name="Resume from checkpoint").wait_for()


def test_delete_says_what_it_deleted_and_a_queued_run_reads_a_dash(seeded, page):
    _, ids, _, snapshots = seeded
    _shows(page, ids["queued"], "step", "^—$")
    assert _picked(page) == f"waiting · {ids['queued']} · queued · step —"  # the newest run is shown first

    _pick(page, "to delete")
    page.get_by_text("Rename or delete").click()
    delete = page.get_by_role("button", name="Delete", exact=True)
    sure = page.get_by_label("yes, delete this run and all its data")
    for _ in range(3):  # a rerun landing as the box is ticked may redraw it unticked: tick it until Delete is enabled
        _idle(page)
        if not sure.is_checked():
            page.get_by_text("yes, delete this run and all its data").click()
            _idle(page)
        if delete.is_enabled():
            break
    delete.click()
    _said(page, f"Deleted run 'to delete' ({ids['doomed']}) and all its data: {snapshots} snapshots.")
    _absent(page, ids["doomed"])
    options = _options(page)
    assert len(options) == 2 and not [o for o in options if o.startswith("to delete")], options

    _shoot(page, "runs-deleted-1280x720.png")
    page.set_viewport_size({"width": 1920, "height": 1080})
    _shoot(page, "runs-deleted-1920x1080.png")
