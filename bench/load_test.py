"""Lecture-hall load test on loopback (issue 5 §1); bounded in count and time, stops by itself.

One server (``SCANSNAP_MAX_JOBS=2``, a fresh data directory), one Chromium, ``--sessions``
browser contexts (each its own Streamlit session), opened in waves:

* session 0, the lecturer, starts a throttled run and publishes it (the 📡 toggle);
* ``--runs`` − 1 more sessions each start a short run (``syn-small``, ``--steps`` steps);
* the others are students: two of three open the published run's link (``?run=<id>``) and
  watch it live, the rest open the Lab and see it under "Live now".

Pass means: ``/_stcore/health`` (polled every 0.5 s in a thread) always answers in < 1 s;
every page renders its marker; every started run is finished in the store (queued first when
both job slots were busy) with all its steps; at most 2 runs train at once; the number of runs
in the store equals the number started (nothing lost, no training per viewer); the server's
peak RSS stays under ``--rss-bound-mb``.  Prints JSON with every figure.

    PYTHONPATH=. .venv/bin/python -m bench.load_test            # 50 sessions, 20 runs
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.webserver import health_latency, launch_chromium, pin_chromium, serve
from engine.store import RunStore

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}
PREVIEW = "[data-testid=stPlotlyChart] .js-plotly-plot"
LIVE_CHART = ".st-key-lab-cn .js-plotly-plot"


class Monitor(threading.Thread):
    """Every ``period`` s: health latency, server RSS, and how many runs are queued/training."""

    def __init__(self, srv: Any, data_dir: str, period: float = 0.5):
        super().__init__(name="load-monitor", daemon=True)
        self.srv, self.data_dir, self.period = srv, data_dir, period
        self.stop_event = threading.Event()
        self.health: list[float] = []
        self.rss: list[float] = []
        self.max_running = self.max_queued = 0
        self.queued_ids: set[str] = set()
        self.t0 = time.monotonic()
        self.slow: list[tuple[float, float]] = []  # (seconds since start, latency) of answers ≥ 1 s
        self.events: list[tuple[float, str]] = []  # what the browser side was doing then

    def mark(self, what: str) -> None:
        self.events.append((round(time.monotonic() - self.t0, 1), what))

    def run(self) -> None:
        store = RunStore(self.data_dir)
        try:
            while not self.stop_event.wait(self.period):
                t = time.monotonic() - self.t0
                self.health.append(health_latency(self.srv.url, timeout=5.0))
                if self.health[-1] >= 1.0:
                    self.slow.append((round(t, 1), round(self.health[-1], 2)))
                self.rss.append(self.srv.rss_mb())
                runs = store.list_runs(1000)
                running = [r for r in runs if r["status"] == "running"]
                queued = [r for r in runs if r["status"] == "queued"]
                self.max_running = max(self.max_running, len(running))
                self.max_queued = max(self.max_queued, len(queued))
                self.queued_ids.update(r["id"] for r in queued)
        finally:
            store.close()


def _open(browser: Any, url: str, timeout_ms: int) -> Any:
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
    pg = ctx.new_page()
    pg.set_default_timeout(timeout_ms)
    pg.goto(url, wait_until="commit")
    return pg


def _live(data_dir: str, run_id: str) -> bool:
    with RunStore(data_dir) as store:
        return (store.get_run(run_id) or {}).get("status") in ("queued", "running", "paused")


def _rendered(pg: Any, selector: str, text: str | None = None) -> bool:
    pg.wait_for_selector(selector)
    if text is not None:
        pg.get_by_text(text).first.wait_for()
    return pg.locator("[data-testid=stException]").count() == 0


def run_load(sessions: int = 50, runs: int = 20, steps: int = 100, wave: int = 10, max_jobs: int = 2,
             rss_bound_mb: float = 2048.0, time_limit_s: float = 420.0, page_timeout_s: float = 90.0,
             lecture_steps: int = 300, lecture_speed: float = 1.0,
             browser_cpus: set[int] | None = None) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    assert 1 <= runs <= sessions
    t_start = time.monotonic()
    deadline = t_start + time_limit_s
    tmp = tempfile.mkdtemp(prefix="scansnap-load-")
    data_dir = str(Path(tmp) / "data")
    res: dict[str, Any] = {"browser_cpus": sorted(browser_cpus) if browser_cpus else "all",
                           "sessions": sessions, "runs_started": 0, "max_jobs": max_jobs, "steps": steps,
                           "rss_bound_mb": rss_bound_mb, "cores": os.cpu_count()}
    rendered: list[bool] = []
    started: list[str] = []
    with serve(data_dir, Path(tmp) / "server.log", env={"SCANSNAP_MAX_JOBS": str(max_jobs)}) as srv:
        res["server_healthy_s"] = round(time.monotonic() - srv.t_launch, 2)
        mon = Monitor(srv, data_dir)
        mon.start()
        try:
            with sync_playwright() as p:
                browser = launch_chromium(p)
                if browser_cpus:  # the students' browsers stand in for their laptops: keep them off the server's core
                    pin_chromium(browser_cpus)
                ms = int(page_timeout_s * 1000)
                # the lecturer: a throttled run that stays live while the students arrive, published
                lect = _open(browser, f"{srv.url}/?preset=lecture&optim.steps={lecture_steps}&speed={lecture_speed:g}",
                             ms)
                rendered.append(_rendered(lect, PREVIEW))
                lect.get_by_role("button", name="▶ Start").click()
                lect.wait_for_function("() => window.location.search.includes('run=')")
                published = lect.url.split("run=")[1].split("&")[0]
                started.append(published)
                lect.get_by_text("📡 Publish").click()
                lect.get_by_text(f"?run={published}").first.wait_for()  # the toggle's confirmation
                res["published_run"] = published
                pages: list[tuple[str, Any]] = [("lecturer", lect)]
                roles = ["starter"] * (runs - 1) + ["watcher" if i % 3 != 2 else "lab" for i in range(sessions - runs)]
                # interleave roles so that every wave mixes starters and students
                order = sorted(range(len(roles)), key=lambda i: (i * 7919) % len(roles))
                roles = [roles[i] for i in order]
                for w in range(0, len(roles), wave):
                    mon.mark(f"wave {w // wave} opens {len(roles[w:w + wave])} sessions")
                    if time.monotonic() > deadline:
                        raise TimeoutError("the load test ran past its time limit")
                    batch = []
                    for role in roles[w:w + wave]:
                        url = {"starter": f"{srv.url}/?preset=syn-small&optim.steps={steps}",
                               "watcher": f"{srv.url}/?run={published}", "lab": f"{srv.url}/"}[role]
                        batch.append((role, _open(browser, url, ms)))
                    if browser_cpus:
                        pin_chromium(browser_cpus)  # new renderers inherit it; this catches any that did not
                    for role, pg in batch:
                        if role == "starter":
                            rendered.append(_rendered(pg, PREVIEW))
                            pg.get_by_role("button", name="▶ Start").click()
                            pg.wait_for_function("() => window.location.search.includes('run=')")
                            started.append(pg.url.split("run=")[1].split("&")[0])
                        elif role == "watcher":
                            rendered.append(_rendered(pg, LIVE_CHART, "Watching run"))
                        else:
                            live = _live(data_dir, published)  # "Live now" lists it only while it trains
                            rendered.append(_rendered(pg, PREVIEW, "📡 Live now" if live else None))
                    pages += batch
                res["pages_open"] = len(pages)
                res["contexts_open_at_once"] = len(browser.contexts)
                res["all_sessions_open_s"] = round(time.monotonic() - t_start, 1)
                mon.mark("all sessions open")
                res["broadcast_live_while_all_open"] = _live(data_dir, published)
                # the lecturer lets the published run go at full speed now that everyone watches
                # (1 step/s is next to "max" on the speed slider: one ArrowLeft)
                for _ in range(5):
                    lect.get_by_role("slider", name="speed (steps/s)").press("ArrowLeft")
                    lect.wait_for_timeout(1500)
                    if "speed=" not in lect.url:
                        break
                res["lecturer_set_max_speed"] = "speed=" not in lect.url
                # every started run ends: poll the store (read-only) until all are terminal
                with RunStore(data_dir) as store:
                    while time.monotonic() < deadline:
                        st = {r: (store.get_run(r) or {}).get("status") for r in started}
                        if all(s in TERMINAL for s in st.values()):
                            break
                        time.sleep(0.5)
                    final = {r: store.get_run(r) for r in started}
                    res["runs_in_store"] = len(store.list_runs(1000))
                res["all_runs_done_s"] = round(time.monotonic() - t_start, 1)
                # the watchers' pages saw the broadcast finish (the same run, not a copy)
                watch = [pg for role, pg in pages if role == "watcher"]
                done = re.compile(rf"^finished · .*run {published}")
                for pg in watch[:5]:
                    pg.get_by_text(done).first.wait_for()
                res["watchers_saw_finish"] = sum(pg.get_by_text(done).count() > 0 for pg in watch[:5])
                res["watchers_checked"] = min(5, len(watch))
                browser.close()
        finally:
            mon.stop_event.set()
            mon.join(10)
    res["runs_started"] = len(started)
    res["runs_finished"] = sum(1 for r in final.values() if r and r["status"] == "finished")
    steps_ok = [r for r in final.values() if r and r["last_step"] == (lecture_steps if r["id"] == published
                                                                     else steps)]
    res["runs_with_all_steps"] = len(steps_ok)
    res["runs_queued_then_finished"] = sum(1 for r in mon.queued_ids & set(started)
                                           if final[r] and final[r]["status"] == "finished")
    res["max_runs_training_at_once"] = mon.max_running
    res["max_runs_queued_at_once"] = mon.max_queued
    res["pages_rendered"] = sum(rendered)
    res["health_polls"] = len(mon.health)
    res["health_max_latency_s"] = round(max(mon.health), 3) if mon.health else None
    res["health_p50_latency_s"] = round(sorted(mon.health)[len(mon.health) // 2], 4) if mon.health else None
    res["health_slow_answers"] = mon.slow  # (s since start, latency s) of every answer ≥ 1 s
    res["events"] = mon.events
    res["peak_rss_mb"] = round(max(mon.rss), 1) if mon.rss else None
    res["wall_s"] = round(time.monotonic() - t_start, 1)
    res["checks"] = {
        "health_under_1s": bool(mon.health) and max(mon.health) < 1.0,
        "every_page_rendered": len(rendered) == sessions and all(rendered),
        "every_run_finished": res["runs_finished"] == runs and res["runs_with_all_steps"] == runs,
        "nothing_lost": res["runs_in_store"] == runs,
        "job_cap_respected": mon.max_running <= max_jobs,
        "rss_under_bound": res["peak_rss_mb"] is not None and res["peak_rss_mb"] < rss_bound_mb,
    }
    res["pass"] = all(res["checks"].values())
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sessions", type=int, default=50)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--steps", type=int, default=100, help="steps of each started syn-small run")
    ap.add_argument("--wave", type=int, default=10, help="browser contexts opened at once")
    ap.add_argument("--rss-bound-mb", type=float, default=2048.0)
    ap.add_argument("--time-limit-s", type=float, default=420.0)
    ap.add_argument("--browser-cpus", default="1", help="cores Chromium may use (comma list; 'all' = no pinning): "
                    "the browsers stand in for the students' laptops and must not starve the server")
    args = ap.parse_args(argv)
    cpus = None if args.browser_cpus == "all" else {int(c) for c in args.browser_cpus.split(",")}
    res = run_load(args.sessions, args.runs, args.steps, args.wave, rss_bound_mb=args.rss_bound_mb,
                   time_limit_s=args.time_limit_s, browser_cpus=cpus)
    print(json.dumps(res, indent=1))
    if not res["pass"]:
        sys.exit(1)
    return res


if __name__ == "__main__":
    main()
