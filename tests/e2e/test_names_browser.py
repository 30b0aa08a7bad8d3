"""Run names are plain text in Debian's Chromium, wherever a page shows one: Live now in the Lab and Real text
sidebars, the Lab's opened run, the Runs page's picker and viewer note, Compare's picker and legend.  A name
that holds a URL, Markdown, a Streamlit directive or HTML shows as typed: no link, no formatting, no escaping
backslash (what AppTest cannot see: Streamlit's Markdown autolinks a bare URL however it is escaped)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.webserver import launch_chromium
from scansnap.paper.presets import get_preset
from scansnap.service.run_kinds import create_run
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.e2e.watching import serve_watched
from tests.guards import GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]
ROOT = Path(__file__).resolve().parents[2]
URL_NAME = "http://evil.example/x www.evil.example me@evil.example"
MD_NAME = "[a](http://x.example/y) **b** :red[r] :ok: <b>b</b> \\(a\\)"  # within the Lab's 60 characters
LIVE_NAME = "[live](http://x.example/l) _it_ `c`"  # within the 40 characters Live now shows
FORBIDDEN = ("evil.example", "x.example", "mailto:")  # no link may lead there

# The text of the elements that show names, with Streamlit's and plotly's markup as elements and links.
SHOWN = """(sel) => [...document.querySelectorAll(sel)].map(e => ({
  text: [e.innerText, ...[...e.querySelectorAll('input')].map(i => i.value)].join(' '),
  links: [...e.querySelectorAll('a')].map(a => a.getAttribute('href') || ''),
  markup: [...e.querySelectorAll('strong, em, b, i, code, span[class*=color], img')].map(x => x.tagName),
}))"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two finished Syn-Small runs (30 steps) named like a URL and like Markdown; the data directory."""
    data = tmp_path_factory.mktemp("names-data")
    store = RunStore(data)
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "30"})
    ids = []
    for name in (URL_NAME, MD_NAME):
        job = RunJob(cfg, store, name=name)
        assert job.run() == "finished"
        ids.append(job.run_id)
    store.close()
    return data, ids


def _shown(pg, sel: str) -> list[dict]:
    """What the elements ``sel`` show, once the first of them is on the page."""
    pg.locator(sel).first.wait_for()
    return pg.evaluate(SHOWN, sel)


def _names(shown: list[dict]) -> str:
    return " ".join(s["text"] for s in shown).replace("\u2060", "")  # the word joiners plain() adds are invisible


def _legend_lines(legend) -> list[str]:
    """The legend's entries as read: a long one is wrapped on several lines (tspan.line, the break at a
    space), read back with that space."""
    return [
        " ".join(t.locator("tspan.line").all_text_contents()) or t.text_content() or ""
        for t in legend.locator(".legendtext").all()
    ]


def _check(shown: list[dict], *names: str) -> None:
    """Every name is shown as typed, in an element with no link away and no formatting."""
    assert shown, "no element shows a run name"
    text = _names(shown)
    for name in names:
        assert name in text, (name, text)
    for s in shown:
        assert not any(f in href for href in s["links"] for f in FORBIDDEN), s
        assert not s["markup"], s


def test_run_names_show_as_typed_everywhere(runs):
    sync_api = pytest.importorskip("playwright.sync_api")
    data, (url_run, md_run) = runs
    with serve_watched(data, data / "streamlit.log") as srv, sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1400, "height": 1400})
        pg.set_default_timeout(GUARD_MS)
        pg.goto(srv.url)
        pg.get_by_role("button", name="▶ Start").wait_for()  # the server opened its store (dead runs: interrupted)
        store = RunStore(data)
        live = create_run(store, get_preset("syn-small").config, name=LIVE_NAME, status="running")
        store.set_published(live, True)
        try:
            pg.goto(f"{srv.url}/?run={md_run}")
            pg.get_by_text("Run:").first.wait_for()
            _check(
                _shown(pg, "[data-testid=stPageLink-NavLink]"), f"{LIVE_NAME} · step — · {live}"
            )  # no step stored yet: —
            opened = [
                s
                for s in _shown(pg, "[data-testid=stSidebar] [data-testid=stMarkdownContainer]")
                if "Run:" in s["text"]
            ]
            assert len(opened) == 1 and opened[0]["markup"] == ["STRONG", "CODE"], opened  # the page's own bold
            _check([{**opened[0], "markup": []}], f"Run: {MD_NAME}")
            pg.goto(f"{srv.url}/runs")
            pg.get_by_text("Rename or delete").wait_for()
            _check(_shown(pg, "[data-testid=stSelectbox]"), f"{LIVE_NAME} · {live}")
            pg.goto(f"{srv.url}/compare?runs={url_run},{md_run}")
            pg.wait_for_selector(".js-plotly-plot .legendtext")
            legend = pg.locator(".js-plotly-plot .legend")  # (in a component's shadow DOM: locators reach it)
            _check(
                [
                    {
                        "text": " ".join(_legend_lines(legend)),
                        "links": [a.get_attribute("href") or "" for a in legend.locator("a").all()],
                        "markup": ["B"] * legend.locator(".legendtext tspan[style*=bold]").count(),
                    }
                ],
                URL_NAME,
                MD_NAME,
            )
            _check(_shown(pg, "[data-testid=stMultiSelect]"), URL_NAME, MD_NAME)
            store.set_status(live, "stopped")
            (ROOT / "test-artifacts").mkdir(exist_ok=True)
            pg.screenshot(path=str(ROOT / "test-artifacts" / "names-compare.png"))
        finally:
            browser.close()
            store.close()
