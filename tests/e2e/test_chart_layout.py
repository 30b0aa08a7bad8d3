"""Every chart readable at 1280×720, 1440×900 and 1920×1080 (Debian's Chromium): on each page that draws
Plotly charts (the Lab with a finished run, its lecture screen, Real text, Compare, Sweep, Theory) the
boxes plotly.js drew are read from the DOM, and the test fails when a legend covers a title, an axis
title, a tick label, an annotation or the plot area, when the toolbar (modebar) covers a title, or when
a legend label, a title or an annotation is cut (outside the legend's box or the figure).  One server,
one short run of each kind, shared by every size.  Screenshots of each page at each size go to
test-artifacts/layout-<page>-<w>x<h>-<i>.png (the screen, then one per screen height scrolled)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.guards import GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SIZES = [(1280, 720), (1440, 900), (1920, 1080)]
LAB_STEPS = 3000  # the Lecture preset's own length (its charts show Theorem 4's curves, labelled on the lines)
TEXT = "preset=text-fig7-1layer&data.vocab_size=2000&optim.batch=10&probe.val_windows=4&snapshots.log_count=0"
TEXT_STEPS = 40
SCREENS_PER_PAGE = 6  # screenshots per page and size: the first screen, then scrolled one screen at a time

# Plotly's DOM, per chart: every box the checks compare, in page pixels (getBoundingClientRect).
BOXES_JS = """() => {
  const r = (el) => { const b = el.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  const all = (p, sel) => [...p.querySelectorAll(sel)].filter((e) => e.getBoundingClientRect().width > 0);
  return [...document.querySelectorAll('.js-plotly-plot')]
    .filter((p) => p.getBoundingClientRect().width > 0 && !p.closest('.st-key-plotly-loader'))
    .map((p) => {
      const title = p.querySelector('.gtitle');
      const legend = p.querySelector('.legend .bg');
      const scroll = p.querySelector('.legend .scrollbar');
      return {
        name: title ? title.textContent : '(untitled) ' + (p.closest('[class*=st-key-]')?.className || ''),
        figure: r(p.querySelector('.main-svg')),
        title: title ? r(title) : null,
        modebar: p.querySelector('.modebar') ? r(p.querySelector('.modebar')) : null,
        legend: legend ? r(legend) : null,
        legendScrolls: !!scroll && scroll.getBoundingClientRect().height > 0,
        labels: all(p, '.legend .legendtext, .legend .legendtitletext').map((e) => [e.textContent, r(e)]),
        notes: all(p, '.infolayer .annotation-text-g').map((e) => [e.textContent, r(e)]),
        axisTitles: all(p, '.infolayer .g-xtitle text, .infolayer .g-ytitle text, .infolayer .g-y2title text')
          .map((e) => [e.textContent, r(e)]),
        ticks: all(p, '.xaxislayer-above .xtick text').map((e) => [e.textContent, r(e)]),
        plotArea: all(p, '.draglayer .nsewdrag').map(r),
      };
    });
}"""


def overlap(a: list[float] | None, b: list[float] | None, tol: float = 1.0) -> bool:
    """Two boxes [left, top, right, bottom] share more than ``tol`` pixels both ways."""
    if a is None or b is None:
        return False
    return min(a[2], b[2]) - max(a[0], b[0]) > tol and min(a[3], b[3]) - max(a[1], b[1]) > tol


def inside(a: list[float], box: list[float], tol: float = 1.0) -> bool:
    return a[0] >= box[0] - tol and a[1] >= box[1] - tol and a[2] <= box[2] + tol and a[3] <= box[3] + tol


def chart_problems(c: dict) -> list[str]:
    """What is unreadable in one chart: overlaps with its legend, title or toolbar, and cut labels."""
    out = []
    name, legend = c["name"][:60], c["legend"]
    if overlap(c["title"], c["modebar"]):
        out.append(f"{name}: the toolbar is over the title")
    if overlap(c["title"], legend):
        out.append(f"{name}: the legend is over the title")
    if c["title"] and not inside(c["title"], c["figure"]):
        out.append(f"{name}: the title is cut")
    if c["legendScrolls"]:
        out.append(f"{name}: the legend scrolls (entries hidden)")
    for text, box in c["labels"]:
        if not inside(box, c["figure"]) or (legend and not inside(box, legend)):
            out.append(f"{name}: legend label {text!r} is cut")
        if overlap(box, c["modebar"]):
            out.append(f"{name}: the toolbar is over legend label {text!r}")
    labels = c["labels"]
    for i, (t1, b1) in enumerate(labels):
        out += [f"{name}: legend labels {t1!r} and {t2!r} overlap" for t2, b2 in labels[i + 1 :] if overlap(b1, b2)]
    for what, items in (("annotation", c["notes"]), ("axis title", c["axisTitles"]), ("tick label", c["ticks"])):
        for text, box in items:
            if overlap(box, legend):
                out.append(f"{name}: the legend is over the {what} {text!r}")
            if what != "tick label" and overlap(box, c["title"]):
                out.append(f"{name}: the title is over the {what} {text!r}")
            if what != "tick label" and not inside(box, c["figure"]):
                out.append(f"{name}: the {what} {text!r} is cut")
    for text, box in c["notes"]:
        out += [
            f"{name}: annotation {text!r} is over the axis title {t!r}" for t, b in c["axisTitles"] if overlap(box, b)
        ]
    if any(overlap(legend, area, 2) for area in c["plotArea"]):
        out.append(f"{name}: the legend is over the plot area")
    return out


def _page(browser, w: int, h: int):
    pg = browser.new_page(viewport={"width": w, "height": h})
    pg.set_default_timeout(GUARD_MS)  # a loaded machine: a page of seven live charts can take a minute
    return pg


# The page's script is not running (Streamlit's own mark on its app element)
IDLE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"


def _run_id(pg) -> str:
    pg.wait_for_function("() => window.location.search.includes('run=')")
    return re.search(r"run=(\w+)", pg.url).group(1)


STORY_AND_FIRST_CHART = """() => {
  const box = (sel) => { const e = document.querySelector(sel); if (!e) return null;
    const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
  return { story: box('.st-key-lab-story'), chart: box('.st-key-lab-cn .js-plotly-plot .main-svg') };
}"""


@pytest.fixture(scope="module")
def runs(server, browser) -> dict:
    """One finished run of each kind: the Lab's (started at 1440×900 with the sidebar open, where the
    story and the first chart are measured right after Start), a text run and a sweep."""
    pg = _page(browser, 1440, 900)
    try:
        pg.goto(f"{server}/?preset=lecture&speed=max")
        pg.get_by_role("button", name="▶ Start").click()
        pg.wait_for_selector(".st-key-lab-cn .js-plotly-plot .main-svg")
        pg.wait_for_timeout(500)  # the first tick's layout settles
        sidebar = pg.locator("[data-testid=stSidebar]").bounding_box()
        after_start = {**pg.evaluate(STORY_AND_FIRST_CHART), "sidebar": sidebar}
        pg.screenshot(path=str(ARTIFACTS / "layout-lab-1440x900-after-start.png"))
        lab = _run_id(pg)
        pg.get_by_text(re.compile(rf"^finished · step {LAB_STEPS}")).wait_for(timeout=GUARD_MS)
        pg.goto(f"{server}/text?{TEXT}&optim.steps={TEXT_STEPS}&snapshots.linear_every=10")
        pg.get_by_role("button", name="▶ Start").click()
        text = _run_id(pg)
        pg.get_by_text(re.compile(rf"^finished · step {TEXT_STEPS} / {TEXT_STEPS}")).wait_for(timeout=GUARD_MS)
        pg.goto(f"{server}/sweep")
        steps = pg.get_by_label("steps", exact=True)
        pg.wait_for_function(IDLE)  # a value typed while the first run still draws the widgets is lost
        steps.fill("20")
        steps.press("Enter")
        pg.wait_for_function(IDLE)
        pytest.importorskip("playwright.sync_api").expect(steps).to_have_value("20")
        pg.get_by_text(re.compile(r"replicas, trained together")).wait_for()
        pg.get_by_role("button", name="▶ Run sweep", disabled=False).click()
        sweep = _run_id(pg)
        try:
            pg.get_by_text(re.compile(r"^finished · step 20 / 20")).wait_for(timeout=GUARD_MS)
        except Exception:
            pg.screenshot(path=str(ARTIFACTS / "layout-sweep-not-finished.png"))  # what the page showed
            raise
    finally:
        pg.close()
    return {"lab": lab, "text": text, "sweep": sweep, "after_start": after_start}


def _wait_drawn(pg, selector: str, count: int) -> None:
    """``count`` charts under ``selector`` drawn (live charts are drawn from a queue, a moment later)."""
    pg.wait_for_function(
        "([s, n]) => document.querySelectorAll(s).length >= n", arg=[f"{selector} .js-plotly-plot .main-svg", count]
    )
    pg.wait_for_timeout(800)  # the last redraw and plotly's margin pass


def _open(pg, url: str, ready: str) -> None:
    pg.goto(url)
    pg.wait_for_selector(ready)


def _lab(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/?run={runs['lab']}", ".st-key-lab-charts")
    _wait_drawn(pg, ".st-key-lab-charts", 7)


def _lecture(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/?run={runs['lab']}&lecture=1", ".st-key-lab-hero")
    _wait_drawn(pg, "[class*=st-key-lab-hero], [class*=st-key-lab-more]", 7)


def _text(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/text?run={runs['text']}", ".st-key-text-fig7")
    _wait_drawn(pg, "[class*=st-key-text-]", 3 + 1 + 4)


def _compare(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/compare?runs={runs['lab']},{runs['sweep']}", "[data-testid=stPlotlyChart] .main-svg")
    pg.wait_for_timeout(800)


def _sweep(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/sweep?run={runs['sweep']}", "[data-testid=stPlotlyChart] .main-svg")
    pg.wait_for_function("() => document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length >= 2")
    pg.wait_for_timeout(800)


def _theory(pg, base: str, runs: dict) -> None:
    _open(pg, f"{base}/theory", "[data-testid=stTab]")


HOVER_TEXT = "() => [...document.querySelectorAll('.hoverlayer .hovertext')].map((e) => e.textContent).join(' ')"


def _hover_map(pg, across: float, down: float) -> str:
    """The hover text at a point of the first attention map's plot area (fractions from its top left)."""
    pg.evaluate("() => document.querySelector('.st-key-text-maps .js-plotly-plot').scrollIntoView({block: 'center'})")
    pg.wait_for_timeout(300)
    area = pg.locator(".st-key-text-maps .js-plotly-plot .nsewdrag").first.bounding_box()
    pg.mouse.move(area["x"] + across * area["width"], area["y"] + down * area["height"])
    pg.wait_for_timeout(400)
    text = pg.evaluate(HOVER_TEXT)
    pg.mouse.move(0, 0)
    return text


def _masked_cells_have_no_nan(pg) -> list[str]:
    """A future key (above the diagonal: masked) shows no "a = NaN"; an attended one shows its a."""
    masked, attended = _hover_map(pg, 0.95, 0.3), _hover_map(pg, 0.1, 0.9)
    out = []
    if "NaN" in masked or "a =" in masked:
        out.append(f"hover on a masked cell: {masked!r}")
    if "a =" not in attended:  # the hover itself works
        out.append(f"no hover on an attended cell: {attended!r}")
    return out


PAGES = {"lab": _lab, "lecture": _lecture, "text": _text, "compare": _compare, "sweep": _sweep, "theory": _theory}


def _screens(pg, name: str, w: int, h: int) -> None:
    """The page as the screen shows it, then scrolled down one screen at a time (Streamlit scrolls
    inside its main container, so a full-page shot would show the first screen only)."""
    main = "document.querySelector('[data-testid=stMain]')"
    pg.evaluate(f"() => {main}.scrollTo(0, 0)")
    for i in range(SCREENS_PER_PAGE):
        pg.wait_for_timeout(200)
        pg.screenshot(path=str(ARTIFACTS / f"layout-{name}-{w}x{h}-{i}.png"))
        at_end = pg.evaluate(f"() => {main}.scrollTop + {main}.clientHeight >= {main}.scrollHeight - 2")
        if at_end:
            break
        pg.evaluate(f"(d) => {main}.scrollBy(0, d)", h - 160)  # a screen less the sticky bar and navigation


def _problems(pg, where: str) -> list[str]:
    charts = pg.evaluate(BOXES_JS)
    assert charts, f"{where}: no chart drawn"
    return [f"{where}: {p}" for c in charts for p in chart_problems(c)]


@pytest.fixture(scope="module")
def page(browser):
    """One tab for every size: each page is loaded afresh at each size (the tab's cache kept)."""
    pg = _page(browser, *SIZES[0])
    yield pg
    pg.close()


@pytest.mark.parametrize(("w", "h"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
def test_every_chart_readable(server, runs, page, w, h):
    """No legend over a title or a label, no toolbar over a title, no legend label cut, on every page
    with charts at this screen size."""
    found = []
    pg = page
    pg.set_viewport_size({"width": w, "height": h})
    for name, open_page in PAGES.items():
        open_page(pg, server, runs)
        if name == "theory":  # one tab at a time: a hidden tab's chart has no boxes
            for tab in ("Theorem 4", "JoMA"):
                pg.get_by_role("tab", name=tab).click()
                pg.locator("[data-testid=stPlotlyChart] .main-svg:visible").first.wait_for()
                pg.wait_for_timeout(800)
                found += _problems(pg, f"{name} ({tab}) {w}x{h}")
                _screens(pg, f"{name}-{tab.replace(' ', '')}", w, h)
            continue
        found += _problems(pg, f"{name} {w}x{h}")
        if name == "text":
            found += [f"text {w}x{h}: {p}" for p in _masked_cells_have_no_nan(pg)]
        _screens(pg, name, w, h)
    assert not found, "\n".join(found)


# every live chart drawn and shown: its drawing (.main-svg) and its place (div.livefig), px wide
LIVE_WIDTHS = """() => [...document.querySelectorAll('div.livefig')]
  .filter((d) => d.getBoundingClientRect().width > 0 && d.querySelector('.main-svg'))
  .map((d) => [(d.closest('[class*=st-key-lab-]')?.className.match(/st-key-lab-[\\w-]+/) || ['?'])[0],
               Math.round(d.querySelector('.main-svg').getBoundingClientRect().width),
               Math.round(d.getBoundingClientRect().width)])"""
ALL_FIT = (
    f"() => {{ const w = ({LIVE_WIDTHS})(); return w.length >= 7 && w.every(([, s, c]) => Math.abs(s - c) <= 2); }}"
)


def _refitted(pg, what: str) -> None:
    try:
        pg.wait_for_function(ALL_FIT, timeout=GUARD_MS)
    except PlaywrightTimeout:
        pytest.fail(f"{what}: live charts (name, drawn px, place px) {pg.evaluate(LIVE_WIDTHS)}")


def test_live_charts_follow_the_window_and_the_sidebar(server, runs, browser):
    """A run watched to its end at 1280×720, the window then widened to 1920×1080 and narrowed back: every
    chart fills its place each time (plotly's own observer left charts drawn through a live run at their
    1920-px width once the run had ended, drawn over each other in their narrower places); at 1000×720 with
    the sidebar open the charts go one to a row, every title whole; then the lecture screen with its sidebar
    opened (its three charts in a row go two to a row, every title whole) and closed."""
    pg = _page(browser, 1280, 720)
    try:
        pg.goto(f"{server}/?preset=syn-small&speed=max")
        pg.get_by_role("button", name="▶ Start").click()
        pg.get_by_text(re.compile(r"^finished · step 100")).wait_for(timeout=GUARD_MS)
        _wait_drawn(pg, ".st-key-lab-charts", 7)
        for w, h in ((1920, 1080), (1280, 720), (1000, 720)):
            pg.set_viewport_size({"width": w, "height": h})
            _refitted(pg, f"the Lab, the window resized to {w}x{h}")
        problems = _problems(pg, "the Lab narrowed to 1000x720 (half a 1920-px screen), its sidebar open")
        assert not problems, "\n".join(problems)  # one chart to a row: no title cut
        pg.set_viewport_size({"width": 1280, "height": 720})
        _lecture(pg, server, runs)
        _refitted(pg, "the lecture screen at 1280x720")
        pg.get_by_test_id("stExpandSidebarButton").click()
        _refitted(pg, "the lecture screen, its sidebar opened")
        pg.wait_for_timeout(500)  # the sidebar's slide ends
        problems = _problems(pg, "the lecture screen at 1280x720, its sidebar open")
        assert not problems, "\n".join(problems)  # two to a row: no title cut
        pg.screenshot(path=str(ARTIFACTS / "layout-lecture-sidebar-open-1280x720.png"))
        pg.get_by_test_id("stSidebar").hover()
        pg.get_by_role("button", name="Collapse sidebar").click()
        _refitted(pg, "the lecture screen, its sidebar closed again")
        pg.wait_for_timeout(500)  # the sidebar's slide ends
        pg.screenshot(path=str(ARTIFACTS / "layout-lecture-sidebar-closed-1280x720.png"))
    finally:
        pg.close()


def test_lab_at_1440x900_shows_the_story_and_a_chart_after_start(runs):
    """The Lab at 1440×900 with the sidebar open: right after ▶ Start the story sentence and the whole
    first live chart are on screen without scrolling (the badges may be below)."""
    seen = runs["after_start"]
    assert seen["sidebar"] and seen["sidebar"]["width"] > 200, "the sidebar is not open"
    for part in ("story", "chart"):
        box = seen[part]
        assert box is not None, f"no {part} after Start"
        assert box[1] >= 0 and box[3] <= 900 and box[2] <= 1440, f"the {part} is off screen: {box}"
