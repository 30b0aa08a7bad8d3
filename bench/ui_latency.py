"""Interaction latency of the Lab while a run trains (issue 3 §3: "widgets stay responsive").

One server (fresh data directory), one Chromium page on the Lab with a run training live
(``--speed`` steps/s, or "max"), then ``--trials`` interactions of two kinds:

* **fragment**: pick another next token n in the live area (its button; a select box when there
  are more than 12 classes; the clock starts when the option is pressed); done when the c_n
  chart's title names the new n (a fragment rerun: store read, the charts of n rebuilt and sent,
  the browser redraws them);
* **full rerun**: toggle the η_Y/η_Z ratio lock in the sidebar; done when the URL carries
  (or drops) ``lock=`` (a whole-page rerun that rewrites the URL).

Timing is taken in the page itself: ``performance.now()`` at the ``pointerdown`` that starts
the interaction (a capture listener on the document) to the first animation frame in which
the result is visible, so Playwright's own round trips are not counted.

The pauses between interactions are drawn at random (seeded): the live area re-runs every
0.5 s on a timer that a whole-page rerun restarts, so a fixed 1 s pause after the lock toggle
put every pick of n in step with the timer (measured: 260 ms median instead of 196 ms with
random pauses).  A person clicks at any moment of the tick; so does this benchmark.  Prints JSON.

    PYTHONPATH=. .venv/bin/python -m bench.ui_latency --trials 40
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout

from bench.webserver import launch_chromium, serve

CN_TITLE = "(document.querySelector('.st-key-lab-cn .js-plotly-plot')?.layout?.title?.text || '')"
ARM = (
    "() => { window.__t0 = null; document.addEventListener('pointerdown', "
    "() => { if (window.__t0 === null) window.__t0 = performance.now(); }, {capture: true, once: true}); }"
)


def _until(pg: Any, condition: str, timeout_ms: float = 30_000) -> float:
    """ms from the armed pointerdown to the first frame where ``condition`` (JS expression) holds."""
    return float(
        pg.wait_for_function(
            f"() => (window.__t0 !== null && ({condition})) ? performance.now() - window.__t0 : null",
            polling="raf",
            timeout=timeout_ms,
        ).json_value()
    )


def switch_class(pg: Any, n: int, lost: list[str]) -> float:
    """Pick n in the live area (its button, or its option in a select box for many classes); a
    pick that does not show within 10 s is recorded in ``lost`` (with what the page showed) and
    tried again."""
    buttons = pg.get_by_role("radiogroup", name=re.compile("^next token n"))
    box = pg.locator("[data-testid=stSelectbox]").filter(has_text="next token n")
    for _ in range(3):
        if buttons.count():
            option = buttons.get_by_role("radio", name=str(n), exact=True)
        else:
            try:  # a click that lands while a whole-page rerun is still laying the page out is retried
                box.locator("input").click(timeout=5_000)
                option = pg.get_by_role("option", name=str(n), exact=True)
                option.wait_for(timeout=5_000)
            except PlaywrightTimeout:
                pg.keyboard.press("Escape")
                lost.append(f"could not open the list for n={n}")
                continue
        pg.evaluate(ARM)  # the clock starts when the option is pressed, not when the list opens
        option.click()
        try:
            return _until(pg, f"{CN_TITLE}.includes('n={n} ')", timeout_ms=10_000)
        except PlaywrightTimeout:
            lost.append(f"picked n={n}; title {pg.evaluate(CN_TITLE)!r}")
    raise RuntimeError(f"switching to n={n} failed 3 times: {lost[-3:]}")


def toggle_lock(pg: Any, lost: list[str]) -> float:
    """Toggle the ratio lock; a click the server ignored (it landed on the previous rev's widget
    before the rerun redrew it, see scansnap/ui/labstate.py ``stale``) is recorded in ``lost`` and retried."""
    for _ in range(3):
        had = "lock=" in pg.url
        pg.evaluate(ARM)
        pg.get_by_text("lock η_Y/η_Z").click()
        want = "!" if had else ""
        try:
            return _until(pg, f"{want}window.location.search.includes('lock=')", timeout_ms=10_000)
        except PlaywrightTimeout:
            lost.append(f"lock toggle ignored (URL {'with' if had else 'without'} lock= unchanged)")
            pg.wait_for_timeout(1000)
    raise RuntimeError(f"toggling the lock failed 3 times: {lost[-3:]}")


def _stats(xs: list[float]) -> dict[str, float]:
    xs = sorted(xs)
    return {
        "median_ms": round(statistics.median(xs), 1),
        "p90_ms": round(xs[int(0.9 * (len(xs) - 1))], 1),
        "max_ms": round(xs[-1], 1),
        "n": len(xs),
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--speed", default="20", help="steps/s of the training run while measuring ('max' = unthrottled)")
    ap.add_argument("--steps", type=int, default=100000)
    ap.add_argument("--seed", type=int, default=0, help="of the random pauses between interactions")
    ap.add_argument(
        "--pin",
        action="store_true",
        help="server on core 0; this script, Playwright and Chromium on "
        "core 1 (as when the browser runs on the viewer's own machine)",
    )
    args = ap.parse_args(argv)
    if args.pin:
        os.sched_setaffinity(0, {1})  # inherited by Playwright's driver and Chromium
    speed = "" if args.speed == "max" else f"&speed={args.speed}"
    with (
        tempfile.TemporaryDirectory(prefix="ui-latency-") as tmp,
        serve(Path(tmp) / "data", Path(tmp) / "server.log", cpus={0} if args.pin else None) as srv,
        sync_playwright() as p,
    ):
        browser = launch_chromium(p)
        pg = browser.new_page(viewport={"width": 1600, "height": 2000})
        pg.set_default_timeout(30_000)
        pg.goto(f"{srv.url}/?preset=lecture&optim.steps={args.steps}{speed}")
        pg.get_by_role("button", name="▶ Start").click()
        pg.wait_for_selector(".st-key-lab-cn .js-plotly-plot")
        pg.wait_for_timeout(2000)  # let the live area settle into its 0.5 s ticks
        fragment, full, lost = [], [], []
        rng = random.Random(args.seed)
        for i in range(args.trials):
            fragment.append(switch_class(pg, (i + 1) % 2, lost))
            pg.wait_for_timeout(rng.uniform(250, 750))
            full.append(toggle_lock(pg, lost))
            pg.wait_for_timeout(rng.uniform(1000, 1500))  # the whole-page rerun settles first
        found = re.search(r"\w+ · step \d+ / \d+[^\n]*", pg.inner_text("body"))  # the run's status line
        status = found.group(0) if found else "(no status line)"
        browser.close()
    res = {
        "speed": args.speed,
        "pinned": args.pin,
        "trials": args.trials,
        "seed": args.seed,
        "run_status_at_end": status,
        "fragment_rerun_switch_n": _stats(fragment),
        "full_rerun_toggle_lock": _stats(full),
        "lost_interactions": lost,
        "target": "median < 200 ms while the run trains",
    }
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
