"""The browser side of the live charts (scansnap/ui/live/figure.py's queue) in Chromium, on a blank page: the
component's own JavaScript with a fake ``Plotly.react`` that records which tick each chart shows, a
``setTimeout`` the test runs task by task, and ``navigator.scheduling.isInputPending`` set by the test.
So the interleaving of ticks arriving, input waiting and charts being drawn is set by the test, not by
the machine's speed: no timing here.

The finding: on a busy machine the lecture's heatmap said step 18 while the c_n chart said step 28.
The queue drew one chart per task, the first waiting one on the page first; when drawing a tick took
longer than a tick, the first charts were redrawn with every tick and the others fell behind."""

from __future__ import annotations

import json

import pytest

from bench.webserver import launch_chromium
from scansnap.ui.live.figure import _JS

pytestmark = pytest.mark.browser  # a blank page: no server
CHARTS = 6
HARNESS = """async ([js, charts]) => {
  window.tasks = [];
  window.setTimeout = (f) => { window.tasks.push(f); return window.tasks.length; };
  window.shown = {};  // chart → the tick it shows
  window.drawn = [];  // charts in the order they were drawn
  window.heights = {};  // chart → the height it was drawn at
  window.Plotly = { react: (div, data, layout) => {
    window.shown[div.parentElement.id] = layout.tick;
    window.heights[div.parentElement.id] = layout.height;
    window.drawn.push(div.parentElement.id);
  } };
  window.runTasks = (n) => { for (let i = 0; i < n && window.tasks.length; i++) window.tasks.shift()(); };
  window.inputWaiting = false;
  Object.defineProperty(navigator, 'scheduling', { value: { isInputPending: () => window.inputWaiting } });
  const hero = document.createElement('div');  // lecture mode: the story's charts fill the screen
  hero.className = 'st-key-lab-hero';
  document.body.appendChild(hero);
  for (let i = 0; i < charts; i++) {
    const p = document.createElement('div');
    p.id = 'c' + i;
    (i < 3 ? hero : document.body).appendChild(p);
  }
  const mod = await import(URL.createObjectURL(new Blob([js], { type: 'text/javascript' })));
  window.arrive = (i, tick, view) => mod.default({
    data: { tick: 'run@' + tick, view, fig: JSON.stringify({ fig: { data: [], layout: { tick, view } }, config: {} }) },
    parentElement: document.getElementById('c' + i),
  });
}"""


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page()
    pg.set_content("<html><body></body></html>")
    pg.evaluate(HARNESS, [_JS, CHARTS])
    yield pg
    pg.close()


def _arrive(pg, tick: int, charts: range = range(CHARTS), view: str = "n=0") -> None:
    """``charts`` receive tick ``tick`` of view ``view`` (as one fragment run sends them)."""
    pg.evaluate(f"() => {{ for (const i of {list(charts)}) window.arrive(i, {tick}, '{view}'); }}")


def _run(pg, tasks: int) -> None:
    pg.evaluate(f"() => window.runTasks({tasks})")


def _shown(pg) -> list[int | None]:
    got = pg.evaluate("() => window.shown")
    return [got.get(f"c{i}") for i in range(CHARTS)]


def _drawn(pg) -> list[str]:
    return pg.evaluate("() => window.drawn")


def _first_tick(pg) -> None:
    """Tick 1 drawn whole (a first view: chart by chart); the page is idle after it."""
    _arrive(pg, 1)
    _run(pg, 100)
    assert _shown(pg) == [1] * CHARTS and pg.evaluate("() => window.tasks.length") == 0


def test_a_tick_of_the_timer_is_drawn_in_one_task(page):
    """No input waiting, the view unchanged: one task draws all six charts of each new tick, so no paint
    shows two steps at once; the one chart per task of before left five charts at the previous tick."""
    _first_tick(page)
    for tick in (2, 3):
        _arrive(page, tick)
        _run(page, 1)
        assert _shown(page) == [tick] * CHARTS, tick
    heights = page.evaluate("() => window.heights")  # the lecture's three (in the hero) fill the screen
    assert all(heights[f"c{i}"] >= 300 for i in range(3)) and all(heights.get(f"c{i}") is None for i in range(3, 6))


def test_with_input_waiting_no_chart_falls_behind(page):
    """Input always waiting, so a pass yields after every chart, and a tick comes every two tasks (a pass
    takes three ticks): each pass draws all six charts of the tick it began with, the next pass the newest
    tick.  After ticks 4, 7 and 10 every chart shows tick 2, 5 and 8; the queue of before redrew the first
    two charts with every tick and never reached the other four."""
    _first_tick(page)
    page.evaluate("() => { window.inputWaiting = true; }")
    seen = {}
    for tick in range(2, 11):
        _arrive(page, tick)
        _run(page, 2)
        seen[tick] = _shown(page)
    assert seen[4] == [2] * CHARTS and seen[7] == [5] * CHARTS and seen[10] == [8] * CHARTS, seen
    _run(page, 100)
    assert _shown(page) == [10] * CHARTS


def test_a_new_view_is_drawn_chart_by_chart_and_a_newer_tick_waits_for_the_pass(page):
    """Another n picked (a new view): one chart per task, the c_n chart (first on the page) first, so it
    answers the pick at once.  Mid-pass (input waiting), the c_n chart's data of a newer tick is drawn
    only after the pass; the queue of before drew it next, ahead of the rest of the pass."""
    _first_tick(page)
    start = len(_drawn(page))
    _arrive(page, 1, view="n=1")
    _run(page, 1)
    assert _drawn(page)[start:] == ["c0"]
    _run(page, 100)
    assert _drawn(page)[start:] == [f"c{i}" for i in range(CHARTS)]
    page.evaluate("() => { window.inputWaiting = true; }")
    _arrive(page, 2, view="n=1")
    _run(page, 3)
    assert _drawn(page)[-3:] == ["c0", "c1", "c2"] and _shown(page) == [2, 2, 2, 1, 1, 1]
    _arrive(page, 3, range(1), view="n=1")  # the c_n chart's next tick arrives mid-pass
    _run(page, 3)
    assert _drawn(page)[-3:] == ["c3", "c4", "c5"] and _shown(page) == [2] * CHARTS
    _run(page, 1)
    assert _drawn(page)[-1] == "c0" and _shown(page) == [3] + [2] * (CHARTS - 1)


def test_a_chart_out_of_sight_waits_and_is_drawn_when_it_comes_into_sight(page):
    """A chart three screens below (what a student scrolled past) is drawn once, then its ticks wait on
    it while the charts in sight are redrawn; scrolled into sight it shows the newest tick at once (the
    browser's IntersectionObserver, no task of the queue)."""
    page.evaluate(
        """() => { const far = document.getElementById('c5'), gap = document.createElement('div');
        gap.style.height = (3 * innerHeight) + 'px'; far.before(gap);
        document.head.insertAdjacentHTML('beforeend', '<style>#c5 > div.livefig { height: 300px; }</style>'); }"""
    )
    _first_tick(page)
    for tick in (2, 3):
        _arrive(page, tick)
        _run(page, 1)
    assert _shown(page) == [3] * (CHARTS - 1) + [1]
    page.evaluate("() => document.getElementById('c5').scrollIntoView()")
    page.wait_for_function("() => window.shown.c5 === 3")
    assert _drawn(page).count("c5") == 2


def test_an_unchanged_chart_is_not_drawn_again(page):
    """The same data again (a paused run's tick): nothing is queued, nothing drawn."""
    _arrive(page, 1, range(1))
    _run(page, 100)
    _arrive(page, 1, range(1))
    assert page.evaluate("() => [window.drawn, window.tasks.length]") == [["c0"], 0]


def test_the_payload_is_what_the_server_sends(monkeypatch):
    """The harness speaks the server's format: ``live_plot_ui`` sends {tick, view, fig: live_payload JSON}."""
    from scansnap.ui.live import figure

    sent = {}
    monkeypatch.setattr(figure, "_live_plot", lambda data, key: sent.update(data=data, key=key))
    figure.live_plot_ui(figure.live_payload({"data": [], "layout": {}}, "f"), "lab-cn", "run@4", "0/1/1/None/15")
    assert sent["key"] == "lab-cn" and sent["data"]["tick"] == "run@4" and sent["data"]["view"] == "0/1/1/None/15"
    assert set(json.loads(sent["data"]["fig"])) == {"fig", "config"}
