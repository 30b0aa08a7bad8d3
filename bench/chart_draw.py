"""Browser time to draw one tick of the Lab's live charts (what bounds the fragment-rerun latency).

Trains a preset headless, builds the Lab's six live charts exactly as its live area does
(``scansnap.kinds.synthetic.ui.live._tick``) at each of the last ``--ticks`` stored steps (the successive ticks a
watcher receives), then opens that finished run in the Lab (a real server and Chromium, the
bench viewport of ``ui_latency``) and replays the ticks into the Lab's own six chart divs with
the page's plotly.js: ``Plotly.react`` per chart, timed (plotly computes and writes the SVG
synchronously), one tick per animation frame.  Nothing else redraws meanwhile (the run has
ended) and nothing trains, so the figures are the drawing alone.  Two ways of drawing the
same ticks, side by side in one run:

* **lab**: the figures as the Lab sends them (token lines merged into one trace per colour);
* **per-token**: one trace per token line (the merged traces split back at their gaps): how
  the Lab drew them before.

Each variant replays the ticks ``--rounds`` times, the variants taking turns.  Prints JSON:
median ms per chart and per tick (the sum of the six).

    PYTHONPATH=. .venv/bin/python -m bench.chart_draw [--preset lecture] [--ticks 12]
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.tick_payload import last_run
from bench.webserver import launch_chromium, serve

ROOT = Path(__file__).resolve().parents[1]

VARIANTS = {  # JS: spec → spec, applied before drawing
    "lab": "(s) => s",
    "per-token": """(s) => { const out = [];
        for (const t of s.fig.data) {
          if (!t.customdata || !t.x.includes(null)) { out.push(t); continue; }
          let x = [], y = [], first = true;
          const flush = () => { out.push({...t, x, y, customdata: undefined, showlegend: first && t.showlegend});
                                first = false; x = []; y = []; };
          t.x.forEach((v, i) => { if (v === null) flush(); else { x.push(v); y.push(t.y[i]); } });
          flush();
        }
        return {...s, fig: {data: out, layout: s.fig.layout}}; }""",
}

REPLAY = """async ([ticks, name, src]) => {
  const f = eval(src), times = {};
  for (const tick of ticks) {
    for (const [key, data] of Object.entries(tick)) {
      const div = document.querySelector(`.st-key-lab-${key} div.livefig`);
      const s = f(JSON.parse(data));
      const t = performance.now();
      window.Plotly.react(div, s.fig.data, s.fig.layout, s.config);
      (times[key] = times[key] || []).push(performance.now() - t);
    }
    await new Promise((r) => requestAnimationFrame(() => setTimeout(r, 0)));
  }
  return times;
}"""


def lab_ticks(data_dir: Path, count: int) -> tuple[str, list[dict[str, str]]]:
    """The run's id and the Lab's live payloads (chart key → JSON) at each of its last ``count`` stored steps."""
    from scansnap.kinds.synthetic.ui import live as lab_live
    from scansnap.paper.history import RunHistory
    from scansnap.ui.chart_style import FONT

    rid, cfg_json, full, statics = last_run(data_dir)
    out = []
    for k in range(len(full.steps) - count, len(full.steps)):
        last = full.steps[k]
        hist = RunHistory(
            rid,
            full.steps[: k + 1],
            full.z[: k + 1],
            full.c[: k + 1],
            full.scalars[full.scalars["step"] <= last].reset_index(drop=True),
        )
        tick = lab_live._tick(hist, statics, cfg_json, rid, (0, 0, 0, None, FONT))
        out.append({key: data for key, data, _ in tick.charts})
    return rid, out


def replay(data_dir: Path, rid: str, ticks: list[dict[str, str]], rounds: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    times: dict[str, dict[str, list[float]]] = {name: {} for name in VARIANTS}
    with (
        tempfile.TemporaryDirectory(prefix="chart-draw-log-") as tmp,
        serve(data_dir, Path(tmp) / "server.log") as srv,
        sync_playwright() as p,
    ):
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1600, "height": 2000})
        page.goto(f"{srv.url}/?run={rid}")
        for key in ticks[0]:
            page.wait_for_selector(f".st-key-lab-{key} div.livefig .main-svg")
        page.wait_for_timeout(1000)
        for _ in range(rounds):
            for name, src in VARIANTS.items():
                got = page.evaluate(REPLAY, [ticks, name, src])
                for key, ms in got.items():
                    times[name].setdefault(key, []).extend(ms[1:])  # the first draw of a round switches variant
        browser.close()
    res = {}
    for name, per_key in times.items():
        n = len(next(iter(per_key.values())))
        res[name] = {
            "tick_ms": round(statistics.median(sum(v[i] for v in per_key.values()) for i in range(n)), 1),
            "per_chart_ms": {k: round(statistics.median(v), 1) for k, v in per_key.items()},
        }
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="lecture")
    ap.add_argument("--ticks", type=int, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args(argv)
    logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" warnings of st.cache_data
    with tempfile.TemporaryDirectory(prefix="chart-draw-") as tmp:
        subprocess.run(
            [sys.executable, "-m", "scansnap", "--data-dir", tmp, "run", "--preset", args.preset, "--quiet"],
            cwd=ROOT,
            check=True,
            timeout=600,
        )
        rid, ticks = lab_ticks(Path(tmp), args.ticks)
        traces = {key: len(json.loads(data)["fig"]["data"]) for key, data in ticks[-1].items()}
        res = {
            "preset": args.preset,
            "ticks": len(ticks),
            "rounds": args.rounds,
            "lab_traces": traces,
            "variants": replay(Path(tmp), rid, ticks, args.rounds),
        }
    lab = res["variants"]["lab"]["tick_ms"]
    res["ratio_to_lab"] = {k: round(v["tick_ms"] / lab, 2) for k, v in res["variants"].items()}
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
