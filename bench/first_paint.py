"""First paint of the Lab: seconds from the server being ready (health endpoint answers) to the page
showing its controls (the ▶ Start button) and its first chart, in a fresh browser; then again in a
second tab (warm).  ``--variants`` compares servers side by side, e.g. with and without the prewarm:

    .venv/bin/python -m bench.first_paint --repeats 3

Each repeat starts a new server on a new data directory (cold) and a new browser profile.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.webserver import launch_chromium, serve

VARIANTS = {"prewarm": {}, "no prewarm": {"SCANSNAP_PREWARM": "0"}}
PAGES = {"lab": "/", "lecture": "/?lecture=1"}


# The moment the Start button enters the page (ms since navigation began), recorded in the page: the
# browser may then be busy (e.g. evaluating plotly.js) before the test driver sees the button.
_DOM_PROBE = """
new MutationObserver((_, obs) => {
  for (const b of document.querySelectorAll('button')) {
    if (b.innerText.includes('Start')) { window.__startInDom = performance.now(); obs.disconnect(); return; }
  }
}).observe(document, { subtree: true, childList: true });
"""


def _paint(browser: Any, url: str) -> dict[str, float]:
    """Seconds to the controls (in the page; seen by the driver) and to the first chart of a new tab."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.add_init_script(_DOM_PROBE)
    t0 = time.monotonic()
    page.goto(url)
    page.get_by_role("button", name="▶ Start").wait_for(timeout=120_000)
    controls = time.monotonic() - t0
    page.wait_for_selector("[data-testid=stPlotlyChart] .main-svg", timeout=120_000)
    chart = time.monotonic() - t0
    in_dom = page.evaluate("window.__startInDom") / 1000
    page.close()
    return {"controls_in_dom_s": round(in_dom, 2), "controls_s": round(controls, 2), "chart_s": round(chart, 2)}


def measure(env: dict[str, str], page: str) -> dict[str, Any]:
    """One cold server: ready time, then the first tab (cold) and a second tab (warm)."""
    from playwright.sync_api import sync_playwright

    with (
        tempfile.TemporaryDirectory() as tmp,
        sync_playwright() as p,
        serve(Path(tmp) / "data", Path(tmp) / "server.log", env=env) as srv,
    ):
        ready = time.monotonic() - srv.t_launch
        browser = launch_chromium(p)
        try:
            cold = _paint(browser, srv.url + PAGES[page])
            warm = _paint(browser, srv.url + PAGES[page])
        finally:
            browser.close()
    return {"server_ready_s": round(ready, 2), "cold": cold, "warm": warm}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pages", nargs="+", default=list(PAGES), choices=list(PAGES))
    args = ap.parse_args()
    out: dict[str, Any] = {"repeats": args.repeats, "results": {}}
    for page in args.pages:
        for _ in range(args.repeats):  # variants interleaved: load drifts hit both alike
            for name, env in VARIANTS.items():
                out["results"].setdefault(page, {}).setdefault(name, []).append(measure(env, page))
    summary = {}
    for page, by_variant in out["results"].items():
        for name, runs in by_variant.items():
            summary[f"{page} / {name}"] = {
                "server_ready_s": statistics.median(r["server_ready_s"] for r in runs),
                "cold_controls_in_dom_s": statistics.median(r["cold"]["controls_in_dom_s"] for r in runs),
                "cold_controls_s": statistics.median(r["cold"]["controls_s"] for r in runs),
                "cold_chart_s": statistics.median(r["cold"]["chart_s"] for r in runs),
                "warm_controls_s": statistics.median(r["warm"]["controls_s"] for r in runs),
            }
    out["median"] = summary
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
