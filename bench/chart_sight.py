"""The browser's drawing of a live run with the charts out of sight waiting (scansnap/ui/live/figure.py), side by
side with every chart redrawn each tick (how the Lab drew before; the page's switch
``window.__livefigAllInSight``).

One server and Chromium; in each round, for each variant, a fresh page at ``--size`` opens the Lab with
``--preset`` (by default the Lecture preset, at its narrated pace: ticks arrive as a watcher gets them),
presses ▶ Start, and for ``--seconds`` times every ``Plotly.react`` of the live charts (plotly computes
and writes the SVG synchronously) and the CPU time of Chromium's renderer processes; then stops the run.
The variants take turns, ``--rounds`` times.  Prints JSON: per variant, the medians of the charts drawn
per tick, the ms of ``Plotly.react`` per tick and the renderer's CPU per second of the window.

    PYTHONPATH=. .venv/bin/python -m bench.chart_sight [--size 1280x720] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil

from bench.webserver import launch_chromium, serve

VARIANTS = {"in sight": "", "all": "window.__livefigAllInSight = true;"}
TIMER = """() => {
  const P = window.Plotly;
  if (!P) return false;
  if (!P.__timed) {
    const react = P.react;
    window.__draws = {};
    P.react = function (div) {
      const t = performance.now(), out = react.apply(this, arguments);
      const box = div.closest && div.closest('[class*=st-key-lab-]');
      if (box && div.classList.contains('livefig')) {
        const key = [...box.classList].find((c) => c.startsWith('st-key-lab-'));
        const d = window.__draws[key] || (window.__draws[key] = { n: 0, ms: 0 });
        d.n += 1; d.ms += performance.now() - t;
      }
      return out;
    };
    P.__timed = true;
  }
  window.__draws = {};
  return true;
}"""


def renderer_cpu_s() -> float:
    """CPU seconds so far of every Chromium renderer process."""
    total = 0.0
    for proc in psutil.process_iter():
        try:
            if "--type=renderer" in " ".join(proc.cmdline()):
                t = proc.cpu_times()
                total += t.user + t.system
        except psutil.Error:
            continue
    return total


def one_window(browser: Any, url: str, init: str, size: tuple[int, int], seconds: float) -> dict[str, float]:
    context = browser.new_context(viewport={"width": size[0], "height": size[1]})
    try:
        if init:
            context.add_init_script(init)
        page = context.new_page()
        page.set_default_timeout(120_000)
        page.goto(url)
        page.get_by_role("button", name="▶ Start").wait_for()
        page.wait_for_function(TIMER)
        page.get_by_role("button", name="▶ Start").click()
        page.wait_for_selector(".st-key-lab-cn div.livefig .main-svg")
        page.wait_for_timeout(1000)  # the first drawing of every chart, which never waits
        page.evaluate(TIMER)  # counts from here
        cpu0, t0 = renderer_cpu_s(), time.monotonic()
        page.wait_for_timeout(seconds * 1000)
        draws = page.evaluate("() => window.__draws")
        cpu = (renderer_cpu_s() - cpu0) / (time.monotonic() - t0)
        page.get_by_role("button", name="⏹ Stop").click()
    finally:
        context.close()
    ticks = max(d["n"] for d in draws.values())  # the c_n chart, always in sight, is drawn every tick
    return {
        "ticks": ticks,
        "charts_per_tick": sum(d["n"] for d in draws.values()) / ticks,
        "react_ms_per_tick": sum(d["ms"] for d in draws.values()) / ticks,
        "renderer_cpu_per_s": cpu,
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="lecture")
    ap.add_argument("--size", default="1280x720")
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    size = tuple(int(v) for v in args.size.split("x"))
    logging.getLogger("streamlit").setLevel(logging.ERROR)
    from playwright.sync_api import sync_playwright

    got: dict[str, list[dict[str, float]]] = {name: [] for name in VARIANTS}
    with (
        tempfile.TemporaryDirectory(prefix="chart-sight-") as tmp,
        serve(Path(tmp) / "data", Path(tmp) / "server.log") as srv,
        sync_playwright() as p,
    ):
        browser = launch_chromium(p)
        for _ in range(args.rounds):
            for name, init in VARIANTS.items():
                got[name].append(one_window(browser, f"{srv.url}/?preset={args.preset}", init, size, args.seconds))
        browser.close()
    res: dict[str, Any] = {"preset": args.preset, "size": args.size, "seconds": args.seconds, "rounds": args.rounds}
    med = lambda windows: {k: round(statistics.median(w[k] for w in windows), 2) for k in windows[0]}
    res["variants"] = {name: med(windows) for name, windows in got.items()}
    every = res["variants"]["all"]
    res["ratio_to_all"] = {
        k: round(res["variants"]["in sight"][k] / every[k], 2) for k in ("react_ms_per_tick", "renderer_cpu_per_s")
    }
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
