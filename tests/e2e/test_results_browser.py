"""The lab's results read in words in Debian's Chromium: Compare's legend names two real-text runs by the
settings that differ (their corpus, by its file's name, and their layers; never "upload_name=None"); the
Sweep page after a small sweep shows its metric by label and unit, one sentence on what the sweep shows,
and heatmap ticks that never overlap at 1280×720, 1440×900 and 1920×1080 (screenshots:
test-artifacts/results-sweep-<w>x<h>.png); a grid of runs shows its axes and metric in words."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.webserver import launch_chromium
from scansnap.core.metrics import bare_label
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.service.runs import TEXT, store_rows
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.ui.result_words import column_label
from scansnap.ui.settings_words import setting_label
from tests.e2e.watching import serve_watched
from tests.figtext import CODE_NAMES
from tests.guards import GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
SIZES = [(1280, 720), (1440, 900), (1920, 1080)]
UPLOAD = "0123456789abcdef-moby dick.txt"  # as the server stores an upload: its bytes' hash, then its name
SWEEP_STEPS = 20
CODE = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, CODE_NAMES)) + r")(?![\w])|@L\d|\b(optim|data|model)\.")

# The page's script is not running (Streamlit's own mark on its app element)
IDLE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"

# Per chart: its axis titles, colour-bar title, legend entries and every tick label's box (page pixels).
CHART_TEXT = """() => [...document.querySelectorAll('.js-plotly-plot')]
  .filter((p) => p.getBoundingClientRect().width > 0)
  .map((p) => {
    const r = (e) => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
    const texts = (sel) => [...p.querySelectorAll(sel)].map((e) => e.textContent);
    return {
      title: texts('.gtitle').join(' '),
      words: texts('.g-xtitle text, .g-ytitle text, .cbtitle text, .legendtext'),
      x: [...p.querySelectorAll('.xaxislayer-above .xtick text')].map((e) => [e.textContent, r(e)]),
      y: [...p.querySelectorAll('.yaxislayer-above .ytick text')].map((e) => [e.textContent, r(e)]),
    };
  })"""


def stored_text_run(store: RunStore, name: str, cfg: TextRunConfig) -> str:
    """A finished real-text run with a few snapshots, as the text runner stores them."""
    rid = store.create_run(name, cfg.to_json(), "cpu", {}, status="finished", kind=TEXT)
    for step in (0, 10, 20):
        rows = [(k, None, "attn_entropy", 3.0 - 0.01 * step - 0.5 * k) for k in range(cfg.model.n_layers)]
        rows += [(None, None, "train_loss", 5.0 - 0.1 * step)]
        store.append_snapshot(rid, step, {}, store_rows(rows))
    return rid


@pytest.fixture(scope="module")
def seeded(tmp_path_factory):
    """A data directory with two real-text runs that differ in corpus and layers and a grid of two
    synthetic runs (10 and 20 distinct tokens per class)."""
    data = tmp_path_factory.mktemp("results-data")
    store = RunStore(data)
    upload = TextRunConfig.from_dict({"data": {"source": "upload", "upload_name": UPLOAD}, "model": {"n_layers": 2}})
    texts = [stored_text_run(store, "text one", upload), stored_text_run(store, "text two", TextRunConfig())]
    grid = []
    for k in (10, 20):
        cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 30, "data.num_distinct_per_next": k})
        job = RunJob(cfg, store, name=f"grid {k}")
        assert job.run() == "finished"
        grid.append(job.run_id)
    store.close()
    return data, texts, grid


@pytest.fixture(scope="module")
def site(seeded):
    sync_api = pytest.importorskip("playwright.sync_api")
    data, texts, grid = seeded
    ARTIFACTS.mkdir(exist_ok=True)
    with serve_watched(data, data / "streamlit.log") as srv, sync_api.sync_playwright() as p:
        browser = launch_chromium(p)
        yield srv.url, browser, texts, grid
        browser.close()


def _legend_lines(pg) -> list[str]:
    """The legend's entries as read (a long one is wrapped on lines: read back with a space)."""
    legend = pg.locator(".js-plotly-plot .legend")
    return [
        " ".join(t.locator("tspan.line").all_text_contents()) or t.text_content() or ""
        for t in legend.locator(".legendtext").all()
    ]


def _unwrapped(line: str) -> str:
    return " ".join(line.replace(" · ", " ").split())


def test_compare_names_text_runs_by_corpus_and_layers(site):
    url, browser, (one, two), _ = site
    pg = browser.new_page(viewport={"width": 1440, "height": 900})
    pg.set_default_timeout(GUARD_MS)
    try:
        pg.goto(f"{url}/compare?runs={one},{two}&metric=attn_entropy")
        pg.wait_for_selector(".js-plotly-plot .legendtext")
        lines = _legend_lines(pg)
        corpus, layers = setting_label("data.corpus", "text"), setting_label("model.n_layers", "text")
        expected = [
            f"{corpus} = moby dick.txt, {layers} = 2 · layer 0",
            f"{corpus} = moby dick.txt, {layers} = 2 · layer 1",
            f"{corpus} = built-in (World English Bible), {layers} = 1 · layer 0",
        ]
        # a long entry is wrapped at its " · " where one fits (the dot then left out: scansnap.ui.chart_style.wrap_html)
        assert sorted(map(_unwrapped, lines)) == sorted(map(_unwrapped, expected)), lines
        for line in lines:
            assert "None" not in line and "upload_name" not in line and "source" not in line, line
        pg.screenshot(path=str(ARTIFACTS / "results-compare-text.png"))
    finally:
        pg.close()


def _overlaps(ticks: list) -> list[str]:
    """Pairs of tick labels whose boxes overlap (more than a pixel both ways)."""
    out = []
    for i, (t1, a) in enumerate(ticks):
        for t2, b in ticks[i + 1 :]:
            if min(a[2], b[2]) - max(a[0], b[0]) > 1 and min(a[3], b[3]) - max(a[1], b[1]) > 1:
                out.append(f"{t1!r} and {t2!r}")
    return out


def _sweep_charts(pg) -> list[dict]:
    pg.wait_for_function("() => document.querySelectorAll('[data-testid=stPlotlyChart] .main-svg').length >= 2")
    pg.wait_for_timeout(800)  # plotly's margin pass
    return pg.evaluate(CHART_TEXT)


def test_sweep_results_read_in_words_with_ticks_apart_at_every_size(site):
    url, browser, _, _ = site
    pg = browser.new_page(viewport={"width": SIZES[0][0], "height": SIZES[0][1]})
    pg.set_default_timeout(GUARD_MS)
    try:
        pg.goto(f"{url}/sweep")
        steps = pg.get_by_label("steps", exact=True)
        # On a busy host the page's first run may still be drawing its widgets (a value typed into one would be
        # lost), and the rerun Enter starts may still be on its way: type once the page is idle, click once the
        # value has landed, then wait for the sweep's run in the URL before its end
        expect = pytest.importorskip("playwright.sync_api").expect
        pg.wait_for_function(IDLE)
        steps.fill(str(SWEEP_STEPS))
        steps.press("Enter")
        pg.wait_for_function(IDLE)
        expect(steps).to_have_value(str(SWEEP_STEPS))
        pg.get_by_text(re.compile(r"replicas, trained together")).wait_for()
        pg.get_by_role("button", name="▶ Run sweep", disabled=False).click()
        expect(pg).to_have_url(re.compile(r"[?&]run=\w+"))
        try:
            pg.get_by_text(re.compile(rf"^finished · step {SWEEP_STEPS} / {SWEEP_STEPS}")).wait_for()
        except Exception:
            pg.screenshot(path=str(ARTIFACTS / "results-sweep-not-finished.png"))  # what the page showed
            raise
        problems = []
        for w, h in SIZES:
            pg.set_viewport_size({"width": w, "height": h})
            pg.reload()
            charts = _sweep_charts(pg)
            assert len(charts) == 2, charts
            for c in charts:
                shown = [c["title"], *c["words"]]
                problems += [f"{w}x{h}: {t!r} is not in words" for t in shown if CODE.search(t)]
                for axis in ("x", "y"):
                    assert c[axis], f"{w}x{h}: {c['title']!r} has no {axis} tick labels"
                    problems += [f"{w}x{h}: {c['title'][:40]!r} {axis} ticks {p}" for p in _overlaps(c[axis])]
            heat = next(c for c in charts if "over (η" in c["title"])
            assert any("attention entropy" in t and "nats" in t for t in heat["words"]), heat["words"]  # colour bar
            sentence = pg.get_by_text(re.compile(rf"^Final {re.escape(bare_label('entropy_distinct'))} "))
            sentence = sentence.first
            sentence.wait_for()
            assert "η" in sentence.inner_text()  # it names an axis of the sweep
            pg.locator("[data-testid=stPlotlyChart]").first.scroll_into_view_if_needed()
            pg.wait_for_timeout(300)
            pg.screenshot(path=str(ARTIFACTS / f"results-sweep-{w}x{h}.png"))
            sentence.scroll_into_view_if_needed()  # the sentence under the charts, their lower half above it
            pg.wait_for_timeout(300)
            pg.screenshot(path=str(ARTIFACTS / f"results-sweep-{w}x{h}-finding.png"))
        assert not problems, "\n".join(problems)
    finally:
        pg.close()


def test_a_grid_shows_its_axes_and_metric_in_words(site):
    url, browser, _, grid = site
    pg = browser.new_page(viewport={"width": 1440, "height": 900})
    pg.set_default_timeout(GUARD_MS)
    try:
        pg.goto(f"{url}/sweep?grid={','.join(grid)}&axes=data.num_distinct_per_next")
        pg.get_by_role("tab", name="Any knob (a grid of runs)").click()
        pg.get_by_text("2 of 2 runs ended").wait_for()
        pg.locator("[data-testid=stPlotlyChart] .main-svg:visible").first.wait_for()
        pg.wait_for_timeout(800)
        charts = [c for c in pg.evaluate(CHART_TEXT) if c["title"].startswith("final")]
        assert charts, "no grid chart"
        words = charts[-1]["words"]
        assert setting_label("data.num_distinct_per_next", "synthetic") in words, words  # the x axis
        drawn = " ".join(words).replace("\u200b", "")  # plotly draws c<sub>n</sub> as c, n between zero-width spaces
        assert column_label("entropy_distinct").replace("_", "") in drawn, words  # the y axis and the legend
        assert not [t for t in words if CODE.search(t)], words
        pg.get_by_text(re.compile(rf"^Final {re.escape(bare_label('entropy_distinct'))} ")).first.wait_for()
        pg.locator(".js-plotly-plot:visible").last.scroll_into_view_if_needed()
        pg.wait_for_timeout(300)
        pg.screenshot(path=str(ARTIFACTS / "results-grid-1440x900.png"))
    finally:
        pg.close()
