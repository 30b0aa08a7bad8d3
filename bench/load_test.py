"""Lecture-hall load test on loopback (issues 5 and 12); bounded in count and time, stops by itself.

One server (``SCANSNAP_MAX_JOBS=2``, a fresh data directory) serves several ROUNDS one after the
other (``--rounds 50:20,150:30``, the default: a 50-session class with 20 runs, then a
150-session class with 30).  A round's sessions are lightweight websocket clients that speak
Streamlit's own protocol (:mod:`bench.st_client`), so the students cost the test machine next to
nothing and the server is what gets measured:

* the lecturer opens the lecture preset (throttled to ``--lecture-speed`` steps/s so that it is
  still live while the students arrive), presses ▶ Start and turns on 🎓 Students watch (which publishes it);
* runs − 1 starters open ``?preset=syn-small&optim.steps=<steps>`` and press ▶ Start;
* the others, in waves of ``--wave``: two of three watch the published run (``?run=<id>``,
  following the fragment's auto-reruns like a browser tab), the rest visit the other pages
  (Lab, Theory, Compare, Sweep, Runs, Reproduce);
* when everyone is in, the lecturer sets the speed to max; the test waits for every run;
* then every client of the round is closed, the test waits until no run is queued or training,
  lets the server sit idle for ``--settle-s`` and records its idle memory (RSS of the server
  process; PSS summed over its process tree) beside the round's peak.

``--browsers N`` additionally opens N real Chromium pages (Playwright) as watchers;
``--screenshot PATH`` saves the first one's page once it shows the finished run.
``--server-env SCANSNAP_MEMDEBUG=sessions,objects,gc,trim`` adds a report of what holds the
server's memory to each idle figure (bench/webserver.py).

A round passes (its ``checks``, what tests/e2e/test_load.py asserts) when: every session rendered its
page without an exception element; every started run is finished in the store (queued first when both
job slots were busy) with all its steps; at most 2 runs train at once in the job slots (the lecture's
run, throttled to a sliver of a core until the lecturer sets max speed, trains beside them without a
slot); the store gained exactly the runs started (nothing lost, no training per viewer); every watcher
saw the published run's status advance and end ``finished`` (the same run id); the server logged no
traceback.  Each round has its own hard time limit ``--time-limit-s``: then its clients are closed and
what was measured is reported.

Measured beside them, and compared with their bounds (its ``bounds``: what BENCHMARKS.md reports, never
a test's claim, since a busy host moves them): ``/_stcore/health`` (polled every 0.5 s in a thread)
answers in < 1 s; the peak memory of the server with its training workers (PSS summed over its process
tree) stays under ``--rss-bound-mb``; the idle server after the round holds less than
:func:`idle_bound_mb` of what it held idle at the start.  Prints JSON with every figure: one entry per
round in ``rounds``.

    PYTHONPATH=. .venv/bin/python -m bench.load_test                    # 50:20, then 150:30
    PYTHONPATH=. .venv/bin/python -m bench.load_test --rounds 50:20,50:20,50:20,50:20
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, fields
from http.client import HTTPException
from pathlib import Path
from typing import Any

from bench.st_client import StClient, StClientError
from bench.webserver import Server, health_latency, serve
from scansnap.service.store import RunStore

TERMINAL = {"finished", "stopped", "diverged", "failed", "interrupted"}
LIVE = ("queued", "running", "paused")
# visitors' pages and the title each must show
PAGES = {
    "/": "Lab",
    "/theory": "Theory",
    "/compare": "Compare runs",
    "/sweep": "Sweep",
    "/runs": "Runs",
    "/reproduce": "Reproduce the paper",
}


class Monitor(threading.Thread):
    """Every ``period`` s: health latency, server RSS, the tree's PSS, and how many runs are queued/training."""

    def __init__(self, srv: Server, data_dir: str, period: float = 0.5):
        super().__init__(name="load-monitor", daemon=True)
        self.srv, self.data_dir, self.period = srv, data_dir, period
        self.stop_event = threading.Event()
        self.health: list[float] = []  # wall s of each health answer
        self.rss: list[float] = []
        self.tree_pss: list[float] = []
        self.max_running = self.max_queued = 0
        self.light: set[str] = set()  # throttled runs that compute without a slot (the lecture's, until max speed)
        # a run set to max speed a moment ago: until its worker has asked for a slot (it says "queued" when
        # it must wait) it still trains at its throttled pace; counted once it leaves "running" or at the time
        self.going_full: dict[str, float] = {}
        self.queued_ids: set[str] = set()
        self.seen: dict[str, dict[str, float]] = {}  # run id -> status -> first seen (s since start)
        self.t0 = time.monotonic()
        self.slow: list[tuple[float, float]] = []  # (s since start, latency) of answers ≥ 1 s
        self.events: list[tuple[float, str]] = []  # what the clients were doing then

    def mark(self, what: str) -> None:
        self.events.append((round(time.monotonic() - self.t0, 1), what))

    def to_full_speed(self, run_id: str, grace_s: float = 3.0) -> None:
        """``run_id`` was set to max speed: it needs a slot from now on, once its worker has asked."""
        self.light.discard(run_id)
        self.going_full[run_id] = time.monotonic() + grace_s

    def _settle_going_full(self, runs: list[dict[str, Any]]) -> None:
        status = {r["id"]: r["status"] for r in runs}
        for rid, until in list(self.going_full.items()):
            if status.get(rid) != "running" or time.monotonic() > until:
                del self.going_full[rid]

    def run(self) -> None:
        store = RunStore(self.data_dir)
        try:
            while not self.stop_event.wait(self.period):
                t = time.monotonic() - self.t0
                latency = health_latency(self.srv.url, timeout=5.0)
                self.health.append(latency)
                if latency >= 1.0:
                    self.slow.append((round(t, 1), round(latency, 2)))
                self.rss.append(self.srv.rss_mb())
                self.tree_pss.append(self.srv.tree_pss_mb())
                runs = store.list_runs(1000)
                self._settle_going_full(runs)
                uncounted = self.light | set(self.going_full)
                running = [r for r in runs if r["status"] == "running" and r["id"] not in uncounted]
                queued = [r for r in runs if r["status"] == "queued"]
                self.max_running = max(self.max_running, len(running))
                self.max_queued = max(self.max_queued, len(queued))
                self.queued_ids.update(r["id"] for r in queued)
                for r in runs:
                    self.seen.setdefault(r["id"], {}).setdefault(r["status"], round(t, 1))
        finally:
            store.close()


@dataclass
class Session:
    """One simulated browser tab: its role, the page it opened and what came of it."""

    role: str  # lecturer, starter, watcher, visitor
    path: str
    client: StClient | None = None
    rendered: bool = False
    run_id: str | None = None
    open_s: float | None = None
    problems: list[str] = field(default_factory=list)


def _left(deadline: float, cap: float) -> float:
    return max(0.1, min(cap, deadline - time.monotonic()))


def _run_status(data_dir: str, run_id: str) -> str | None:
    with RunStore(data_dir) as store:
        return (store.get_run(run_id) or {}).get("status")


LAB_MARK = "▶ Start"  # the Lab's control bar: with a run on screen its first screen has no title


def _page_ok(s: Session, title: str) -> bool:
    """No exception element, no protocol error, and the page's title on screen (the Lab: its title or,
    with a run on screen, its control bar)."""
    c = s.client
    assert c is not None
    s.problems += c.exceptions() + c.connection_errors()
    shown = any(e.kind == "heading" and e.text == title for e in c.elements())
    if not shown and not (title == "Lab" and LAB_MARK in c.buttons()):
        s.problems.append(f"no title {title!r}")
    return not s.problems


def _open(url: str, s: Session, timeout: float) -> StClient:
    t0 = time.monotonic()
    s.client = StClient(url, name=f"{s.role}:{s.path}")
    s.client.open(s.path, timeout=timeout)
    s.open_s = round(time.monotonic() - t0, 2)
    return s.client


def _start_run(s: Session, timeout: float) -> None:
    """Press ▶ Start; the new URL carries ``run=<id>``."""
    c = s.client
    assert c is not None
    c.click("▶ Start", timeout=timeout)
    c.wait_for(lambda c: "run" in c.query, timeout)
    s.run_id = c.query.get("run")
    if not s.run_id:
        s.problems.append(f"▶ Start gave no run id: {[t for t in c.texts() if 'rror' in t][:2]}")


def play(url: str, s: Session, data_dir: str, published: str | None, timeout: float) -> Session:
    """Open the session's page and do what its role does; problems are recorded, never raised."""
    try:
        was_live = published is not None and _run_status(data_dir, published) in LIVE
        c = _open(url, s, timeout)
        s.rendered = _page_ok(s, "Lab" if s.role != "visitor" else PAGES[s.path])
        if s.role == "starter":
            _start_run(s, timeout)
        elif s.role == "watcher":
            if not c.has_text(f"📡 Watching run `{published}`"):
                s.problems.append("no 'Watching run' caption")
            if not c.wait_for(lambda c: (c.live_status or {}).get("run") == published, timeout):
                s.problems.append("no live status of the published run")
        elif (
            s.path == "/"
            and was_live
            and _run_status(data_dir, published or "") in LIVE
            and not c.has_text("📡 Live now")
        ):
            s.problems.append("the published run is live but not under 'Live now'")
        s.rendered = s.rendered and not s.problems
    except (StClientError, OSError, TimeoutError, HTTPException) as e:
        s.problems.append(f"{type(e).__name__}: {e}")
    return s


def lecturer(url: str, steps: int, speed: float, timeout: float) -> Session:
    """Open the lecture preset throttled to ``speed`` steps/s, press ▶ Start, turn on 🎓 Students watch."""
    s = Session("lecturer", f"/?preset=lecture&optim.steps={steps}&speed={speed:g}")
    try:
        c = _open(url, s, timeout)
        s.rendered = _page_ok(s, "Lab")
        _start_run(s, timeout)
        if s.run_id:
            c.set_value("🎓 Students watch", True, timeout=timeout)
            if not c.wait_for(lambda c: c.has_text("Join code "), timeout):  # the switch's join box
                s.problems.append("publishing was not confirmed")
    except (StClientError, OSError, TimeoutError, HTTPException) as e:
        s.problems.append(f"{type(e).__name__}: {e}")
    s.rendered = s.rendered and not s.problems
    return s


def roles(sessions: int, runs: int) -> list[tuple[str, str]]:
    """(role, path) of every student, interleaved so that every wave mixes starters and students."""
    pages = list(PAGES)
    out: list[tuple[str, str]] = [("starter", "") for _ in range(runs - 1)]
    for i in range(sessions - runs):
        out.append(("watcher", "") if i % 3 != 2 else ("visitor", pages[(i // 3) % len(pages)]))
    order = sorted(range(len(out)), key=lambda i: (i * 7919) % len(out))
    return [out[i] for i in order]


def _path(role: str, page: str, steps: int, published: str) -> str:
    return {"starter": f"/?preset=syn-small&optim.steps={steps}", "watcher": f"/?run={published}"}.get(role, page)


def open_students(
    url: str, data_dir: str, published: str, who: list[tuple[str, str]], plan: Plan, mon: Monitor, deadline: float
) -> list[Session]:
    """Open the students in waves of ``plan.wave`` (concurrently within a wave); stops at the deadline."""
    out: list[Session] = []
    wave = plan.wave
    with ThreadPoolExecutor(max_workers=wave, thread_name_prefix="load-open") as pool:
        for w in range(0, len(who), wave):
            if time.monotonic() > deadline:
                mon.mark(f"time limit: {len(who) - w} sessions never opened")
                break
            batch = [Session(role, _path(role, page, plan.steps, published)) for role, page in who[w : w + wave]]
            mon.mark(f"wave {w // wave} opens {len(batch)} sessions")
            out += pool.map(lambda s: play(url, s, data_dir, published, _left(deadline, plan.page_timeout_s)), batch)
    return out


def close_all(sessions: list[Session]) -> None:
    """Close every client, 16 at a time (a client waits at most ~3 s for a stuck server)."""
    with ThreadPoolExecutor(max_workers=16, thread_name_prefix="load-close") as pool:
        list(pool.map(lambda s: s.client.close() if s.client is not None else None, sessions))


def set_max_speed(lect: Session, timeout: float) -> bool:
    """The lecturer lets the published run go at full speed now that everyone watches."""
    try:
        assert lect.client is not None
        lect.client.set_value("speed (steps/s)", "max speed", timeout=timeout)  # as format_func shows it
        return "speed" not in lect.client.query
    except StClientError as e:
        lect.problems.append(str(e))
        return False


def wait_runs(data_dir: str, run_ids: list[str], deadline: float) -> tuple[dict[str, Any], int]:
    """Poll the store (read-only) until every run is terminal or the deadline passes."""
    with RunStore(data_dir) as store:
        while time.monotonic() < deadline:
            if all((store.get_run(r) or {}).get("status") in TERMINAL for r in run_ids):
                break
            time.sleep(0.5)
        return {r: store.get_run(r) for r in run_ids}, len(store.list_runs(1000))


def watchers_saw_finish(watchers: list[Session], published: str, deadline: float) -> int:
    """How many watchers saw the published run advance and then ``finished`` (same run id); all of
    them get the same 60 s (bounded by the deadline) to receive the final status."""
    n, end = 0, min(deadline, time.monotonic() + 60)
    for s in watchers:
        c = s.client
        if c is None:
            continue
        done = c.wait_for(lambda c: (c.live_status or {}).get("status") == "finished", end - time.monotonic())
        steps = {step for _, step in c.live_history}
        if done and (c.live_status or {}).get("run") == published and len(steps) >= 2:
            n += 1
        else:
            quiet = round(time.monotonic() - c.stats.last_message_at, 1)
            s.problems.append(
                f"watcher saw {c.live_history[-3:]} of {(c.live_status or {}).get('run')}; "
                f"{c.stats.fragment_runs} fragment runs, {c.stats.auto_reruns_sent} auto-reruns "
                f"sent, last message {quiet} s ago, {c.connection_errors()}; {c.reader_state()}; last messages "
                f"{list(c.recent)[-12:]}"
            )
    return n


def _median_max(values: list[Any], digits: int | None = None) -> dict[str, Any]:
    """{"median", "max"} of ``values`` (counts: the median as an int; else rounded to ``digits``)."""
    if not values:
        return {}
    if digits is None:
        return {"median": int(statistics.median(values)), "max": max(values)}
    return {"median": round(statistics.median(values), digits), "max": round(max(values), digits)}


def client_figures(sessions: list[Session]) -> dict[str, Any]:
    """Bytes and messages received per client, overall and by role; slowest page opens."""
    clients = [s for s in sessions if s.client is not None]
    by_role: dict[str, list[int]] = {}
    for s in clients:
        by_role.setdefault(s.role, []).append(s.client.stats.bytes)  # type: ignore[union-attr]
    opens = [s.open_s for s in clients if s.open_s is not None]
    return {
        "bytes_per_client": _median_max([s.client.stats.bytes for s in clients]),  # type: ignore[union-attr]
        "bytes_per_client_by_role": {r: _median_max(v) for r, v in sorted(by_role.items())},
        "messages_per_client": _median_max([s.client.stats.messages for s in clients]),  # type: ignore[union-attr]
        "auto_reruns_sent": sum(s.client.stats.auto_reruns_sent for s in clients),  # type: ignore[union-attr]
        "clients_with_connection_errors": sum(bool(s.client.connection_errors()) for s in clients),  # type: ignore[union-attr]
        "page_open_s": _median_max(opens, 2),
    }


def _wait_until(predicate: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True


def _browsers(url: str, n: int, published: str, deadline: float, screenshot: str | None, out: dict[str, Any]) -> None:
    """N real Chromium pages (Playwright) watching the published run; counts those that rendered in
    ``out`` and saves the first one's page once it shows the finished run."""
    from playwright.sync_api import sync_playwright

    from bench.webserver import launch_chromium

    try:
        with sync_playwright() as p:
            browser = launch_chromium(p)
            pages = []
            for _ in range(n):
                pg = browser.new_context(viewport={"width": 1280, "height": 1400}).new_page()
                pg.set_default_timeout(_left(deadline, 90) * 1000)
                pg.goto(f"{url}/?run={published}", wait_until="commit")
                pages.append(pg)
            for pg in pages:
                pg.wait_for_selector(".st-key-lab-cn .js-plotly-plot")
                pg.get_by_text("Watching run").first.wait_for()
                out["browsers_rendered"] += pg.locator("[data-testid=stException]").count() == 0
            pages[0].get_by_text("finished · step").first.wait_for(timeout=_left(deadline, 120) * 1000)
            if screenshot:
                pages[0].screenshot(path=screenshot, full_page=True)
                out["screenshot"] = screenshot
            browser.close()
    except Exception as e:  # reported, and every_page_rendered fails
        out["browser_error"] = f"{type(e).__name__}: {e}"


Round = tuple[int, int]  # (sessions, runs)
MAX_ROUNDS, MAX_SESSIONS = 10, 500  # the test's own bounds: it never opens more than this


@dataclass(frozen=True)
class Plan:
    """What to simulate and the bounds of the test (defaults: the issue's lecture hall, then a
    150-session class on the same server)."""

    rounds: tuple[Round, ...] = ((50, 20), (150, 30))  # (sessions, runs) of each round, one server
    steps: int = 100  # of each started syn-small run
    wave: int = 10  # sessions opened at once
    max_jobs: int = 2
    rss_bound_mb: float = 2048.0  # peak PSS of the server's process tree, each round
    time_limit_s: float = 240.0  # each round's own limit (its settling not included)
    settle_s: float = 5.0  # after a round: no clients, no runs, this long; then the idle memory
    page_timeout_s: float = 60.0
    lecture_steps: int = 300
    lecture_speed: float = 1.0  # steps/s of the published run until every student is in
    browsers: int = 0  # extra real Chromium pages watching the published run (each round)
    screenshot: str | None = None
    tick_s: float | None = None  # the server's SCANSNAP_TICK_S (None: the app's default)
    warm_up: bool = False  # open every page once (one at a time) before the first round
    server_env: tuple[tuple[str, str], ...] = ()  # more of the server's environment (e.g. MALLOC_ARENA_MAX)
    server_root: str | None = None  # serve another checkout (default: this one), to compare a change

    def __post_init__(self) -> None:
        if not 1 <= len(self.rounds) <= MAX_ROUNDS:
            raise ValueError(f"rounds: {len(self.rounds)} rounds given; allowed 1 to {MAX_ROUNDS}")
        for sessions, runs in self.rounds:
            if not 1 <= runs <= sessions <= MAX_SESSIONS:
                raise ValueError(
                    f"rounds: {sessions}:{runs} (sessions:runs); allowed 1 ≤ runs ≤ sessions ≤ {MAX_SESSIONS}"
                )


def parse_rounds(text: str) -> tuple[Round, ...]:
    """``"50:20,150:30"`` → ((50, 20), (150, 30)), within the test's bounds; a clear error otherwise."""
    try:
        rounds = tuple((int(a), int(b)) for a, b in (item.split(":") for item in text.split(",")))
    except ValueError:
        raise ValueError(f"--rounds {text!r}: expected sessions:runs[,sessions:runs…], e.g. 50:20,150:30") from None
    Plan(rounds=rounds)  # the bounds
    return rounds


def arg_type(parse: Any) -> Any:
    """An argparse ``type`` that shows ``parse``'s own message."""

    def wrapped(text: str) -> Any:
        try:
            return parse(text)
        except ValueError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    return wrapped


def run_load(**kwargs: Any) -> dict[str, Any]:
    """Run every round against one server (keyword arguments: the fields of :class:`Plan`) and return
    every figure: ``res["rounds"]`` (each with its ``checks`` and ``pass``), ``res["pass"]``; also
    when a round hit its time limit."""
    plan = Plan(**kwargs)
    t_start, cpu0 = time.monotonic(), time.process_time()
    tmp = tempfile.mkdtemp(prefix="scansnap-load-")
    data_dir = str(Path(tmp) / "data")
    res: dict[str, Any] = {
        "client": "websocket (bench/st_client.py)",
        **asdict(plan),
        "cores": os.cpu_count(),
        "loadavg_start": os.getloadavg(),
        "rounds": [],
    }  # other work on the machine skews every figure
    env = {
        "SCANSNAP_MAX_JOBS": str(plan.max_jobs),
        **({"SCANSNAP_TICK_S": f"{plan.tick_s:g}"} if plan.tick_s else {}),
        **dict(plan.server_env),
    }
    try:
        with serve(data_dir, Path(tmp) / "server.log", env=env, root=plan.server_root) as srv:
            res["server_healthy_s"] = round(time.monotonic() - srv.t_launch, 2)
            if plan.warm_up:
                res["warm_up_s"] = warm_up(srv.url, plan.page_timeout_s)
            res["idle_before"] = settle(srv, data_dir, plan.settle_s, 60)
            for i, (sessions, runs) in enumerate(plan.rounds):
                res["rounds"].append(run_round(srv, data_dir, plan, i, sessions, runs))
            res["server_cpu_s"] = round(srv.cpu_s(), 1)  # both figures: what was measured vs what measured it
            res["server_tree_cpu_s"] = round(srv.tree_cpu_s(), 1)  # the server with its training workers
            res["harness_cpu_s"] = round(time.process_time() - cpu0, 1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    res["wall_s"] = round(time.monotonic() - t_start, 1)
    res["loadavg_end"] = os.getloadavg()
    res["idle_tree_pss_mb"] = [r["idle"]["tree_pss_mb"] for r in res["rounds"]]  # after each round, in order
    res["pass"] = len(res["rounds"]) == len(plan.rounds) and all(r["pass"] for r in res["rounds"])
    if "idle_before" in res:
        res["idle_bound_mb"] = round(idle_bound_mb(res["idle_before"]["rss_mb"]), 1)
        for r in res["rounds"]:
            r["bounds"]["idle_rss_under_bound"] = r["idle"]["rss_mb"] < res["idle_bound_mb"]
    for r in res["rounds"]:
        r["within_bounds"] = all(r["bounds"].values())
    res["within_bounds"] = all(r["within_bounds"] for r in res["rounds"])
    return res


# Streamlit keeps a closed tab's session (its st.session_state) for a reconnect: at most 128 of them
# (runtime/memory_session_storage.py, maxsize=128), for server.disconnectedSessionTTL (120 s) and, as they
# are only dropped when another session disconnects, possibly for longer.
KEPT_SESSIONS = 128
KEPT_SESSION_MB = 1.0  # allowance per kept session; measured: 0.4 MB of session state each (BENCHMARKS.md)
ALLOCATOR_SLACK_MB = 64  # freed but not returned to the OS (Python's arenas, glibc's heap)


def idle_bound_mb(idle_at_start_mb: float) -> float:
    """The most the server process should hold when idle after any amount of load, MiB: what it holds
    idle after start, plus every cache full (scansnap/ui/caches.py: sized in bytes), plus Streamlit's kept
    sessions, plus allocator slack."""
    from scansnap.ui.caches import BOUNDS_MB

    caches = sum(BOUNDS_MB.values()) + BOUNDS_MB["theory curves"]  # two caches share that bound
    return idle_at_start_mb + caches + KEPT_SESSIONS * KEPT_SESSION_MB + ALLOCATOR_SLACK_MB


def run_round(srv: Server, data_dir: str, plan: Plan, index: int, sessions: int, runs: int) -> dict[str, Any]:
    """One lecture (a lecturer, ``sessions`` − 1 students, ``runs`` runs) within ``plan.time_limit_s``;
    then every client closed, every run ended, ``plan.settle_s`` without load, the idle memory.
    Returns the round's figures with its ``checks`` and ``pass``."""
    t0 = time.monotonic()
    deadline = t0 + plan.time_limit_s
    with RunStore(data_dir) as store:
        runs_before = len(store.list_runs(1000))
    res: dict[str, Any] = {"round": index, "sessions": sessions, "runs": runs, "loadavg_start": os.getloadavg()}
    log_from = len(srv.log_text())
    everyone: list[Session] = []
    mon = Monitor(srv, data_dir)
    mon.start()
    final: dict[str, Any] = {}
    try:
        final = _drive(srv.url, data_dir, plan, sessions, runs, res, everyone, mon, deadline)
    except Exception as e:  # the harness's own failure: recorded, the round fails, the next one still runs
        res["harness_error"] = f"{type(e).__name__}: {e}"
    finally:
        close_all(everyone)
        mon.stop_event.set()
        mon.join(10)
    _figures(res, everyone, final, mon, plan)
    res["wall_s"] = round(time.monotonic() - t0, 1)
    res["idle"] = settle(srv, data_dir, plan.settle_s, _left(deadline + 60, 120))
    log = srv.log_text()[log_from:]
    # a page says only that an error was redacted: the traceback is in the server's log
    if res["problems"] or tracebacks(log) or "harness_error" in res:
        res["server_errors"] = tracebacks(log)
        res["server_log_tail"] = log[-20_000:]
    _checks(res, everyone, final, mon, plan, sessions, runs, runs_before)
    return res


def settle(srv: Server, data_dir: str, settle_s: float, runs_timeout: float) -> dict[str, Any]:
    """Wait (at most ``runs_timeout`` s) until no run is queued or training, then ``settle_s`` s with
    no load at all; the server's memory then: RSS of its process, PSS summed over its tree."""
    t0 = time.monotonic()
    with RunStore(data_dir) as store:
        _wait_until(lambda: not any(r["status"] in LIVE for r in store.list_runs(1000)), runs_timeout)
        live = sum(r["status"] in LIVE for r in store.list_runs(1000))
    time.sleep(settle_s)
    out = {
        "rss_mb": round(srv.rss_mb(), 1),
        "tree_pss_mb": round(srv.tree_pss_mb(), 1),
        "processes": len(srv.pids()),
        "runs_still_live": live,
        "waited_s": round(time.monotonic() - t0, 1),
    }
    if report := srv.memory_report():  # only with SCANSNAP_MEMDEBUG set
        out["memdebug"] = report
    return out


def _drive(
    url: str,
    data_dir: str,
    plan: Plan,
    sessions: int,
    runs: int,
    res: dict[str, Any],
    everyone: list[Session],
    mon: Monitor,
    deadline: float,
) -> dict[str, Any]:
    """The scenario: lecturer, students in waves, max speed, every run to its end, watchers' view.
    Returns the started runs as the store has them at the end."""
    t0 = time.monotonic()
    lect = lecturer(url, plan.lecture_steps, plan.lecture_speed, _left(deadline, plan.page_timeout_s))
    everyone.append(lect)
    published = res["published_run"] = lect.run_id
    if not published:
        return {}
    mon.light.add(published)  # at 1 step/s it needs a sliver of a core: no slot (scansnap/service/scheduling.py)
    everyone += open_students(url, data_dir, published, roles(sessions, runs), plan, mon, deadline)
    res["all_sessions_open_s"] = round(time.monotonic() - t0, 1)
    res["sessions_open_at_once"] = sum(1 for s in everyone if s.client is not None and not s.client.connection_errors())
    mon.mark("all sessions open")
    res["broadcast_live_while_all_open"] = _run_status(data_dir, published) in LIVE
    chromium = start_browsers(url, plan, published, deadline, res)
    res["lecturer_set_max_speed"] = set_max_speed(lect, _left(deadline, plan.page_timeout_s))
    mon.to_full_speed(published)  # at full speed it trains in a slot, or says "queued" while it waits for one
    mon.mark("lecturer: speed max")
    final, res["runs_in_store"] = wait_runs(data_dir, [s.run_id for s in everyone if s.run_id], deadline)
    res["all_runs_done_s"] = round(time.monotonic() - t0, 1)
    mon.mark("every run ended")
    watchers = [s for s in everyone if s.role == "watcher"]
    res["watchers_saw_finish"] = watchers_saw_finish(watchers, published, deadline)
    res["watchers_checked"] = len(watchers)
    if chromium is not None:
        chromium.join(_left(deadline, 120))
    return final


def warm_up(url: str, timeout: float) -> float:
    """Open every page once, one after the other (what the lecturer does before the class); seconds taken."""
    t0 = time.monotonic()
    for path in PAGES:
        with StClient(url, name=f"warm-up:{path}") as c:
            c.open(path, timeout=timeout)
    return round(time.monotonic() - t0, 1)


def start_browsers(url: str, plan: Plan, published: str, deadline: float, res: dict[str, Any]) -> Any:
    """Start ``plan.browsers`` Chromium watchers in a thread (figures go into ``res``) and wait until
    they show the live run, so that they watch it before it speeds up; None when there are none."""
    res.update(browsers=plan.browsers, browsers_rendered=0)
    if not plan.browsers:
        return None
    th = threading.Thread(
        target=_browsers,
        args=(url, plan.browsers, published, deadline, plan.screenshot, res),
        name="load-chromium",
        daemon=True,
    )
    th.start()
    _wait_until(
        lambda: res["browsers_rendered"] == plan.browsers or not th.is_alive(), _left(deadline, plan.page_timeout_s * 2)
    )
    return th


def _figures(res: dict[str, Any], everyone: list[Session], final: dict[str, Any], mon: Monitor, plan: Plan) -> None:
    """Every figure of the run into ``res``."""
    published = res.get("published_run")
    res["runs_started"] = len(final)
    res["runs_finished"] = sum(1 for r in final.values() if r and r["status"] == "finished")
    res["runs_with_all_steps"] = sum(
        1
        for r in final.values()
        if r and r["last_step"] == (plan.lecture_steps if r["id"] == published else plan.steps)
    )
    res["runs_queued_then_finished"] = sum(
        1 for r in mon.queued_ids & set(final) if final[r] and final[r]["status"] == "finished"
    )
    res["run_times_s"] = run_times(mon.seen, published)
    res["max_runs_training_at_once"] = mon.max_running
    res["max_runs_queued_at_once"] = mon.max_queued
    res["pages_rendered"] = sum(s.rendered for s in everyone)
    res["sessions_by_role"] = {
        r: sum(s.role == r for s in everyone) for r in ("lecturer", "starter", "watcher", "visitor")
    }
    res.update(client_figures(everyone))
    res["health_polls"] = len(mon.health)
    res["health_max_latency_s"] = round(max(mon.health), 3) if mon.health else None
    res["health_p50_latency_s"] = round(statistics.median(mon.health), 4) if mon.health else None
    res["health_p99_latency_s"] = round(sorted(mon.health)[int(len(mon.health) * 0.99)], 4) if mon.health else None
    res["health_slow_answers"] = mon.slow  # (s since start, latency s) of every answer ≥ 1 s
    res["peak_rss_mb"] = round(max(mon.rss), 1) if mon.rss else None  # the server process alone
    res["peak_tree_pss_mb"] = round(max(mon.tree_pss), 1) if mon.tree_pss else None  # with its workers
    res["events"] = mon.events
    res["problems"] = [[i, s.role, s.path, s.problems] for i, s in enumerate(everyone) if s.problems]


def tracebacks(log: str, limit: int = 5) -> list[str]:
    """The server log's tracebacks (first ``limit``), plain or drawn by rich (colours stripped): the
    app's frames, the last frame, the error's first line."""
    out = []
    plain = re.sub(r"\x1b\[[0-9;]*m", "", log)
    for block in re.split(r"Traceback \(most recent call last\)[^\n]*", plain)[1 : limit + 1]:
        lines = block.strip("\n").splitlines()
        frames = [m.group(1) for ln in lines if (m := re.search(r'(File "[^"]+", line \d+.*|\S+\.py:\d+ in \w+)', ln))]
        ours = [f for f in frames if "site-packages" not in f]  # the app's frames, then where it failed
        error = next((ln for ln in lines if re.match(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b", ln)), "")
        out.append("\n".join([*ours[-6:], *frames[-1:], error[:300]]))
    return out


def run_times(seen: dict[str, dict[str, float]], published: str | None) -> dict[str, Any]:
    """From the monitor's polls: how long runs waited in the queue and trained (median, max), the
    published (lecture) run apart."""

    def spans(ids: list[str]) -> dict[str, Any]:
        wait = [s["running"] - s["queued"] for r in ids if "queued" in (s := seen[r]) and "running" in s]
        train = [
            min(v for k, v in s.items() if k in TERMINAL) - s["running"]
            for r in ids
            if "running" in (s := seen[r]) and any(k in TERMINAL for k in s)
        ]
        return {"queued": _median_max(wait, 1), "training": _median_max(train, 1)}

    return {
        "published": spans([r for r in seen if r == published]),
        "others": spans([r for r in seen if r != published]),
    }


def _checks(
    res: dict[str, Any],
    everyone: list[Session],
    final: dict[str, Any],
    mon: Monitor,
    plan: Plan,
    sessions: int,
    runs: int,
    runs_before: int,
) -> None:
    """The round's pass criteria (``res["checks"]``, ``res["pass"]``) and its measured bounds
    (``res["bounds"]``, ``res["within_bounds"]``); ``runs_before``: runs in the store before the round."""
    res["checks"] = {
        "every_page_rendered": len(everyone) == sessions
        and all(s.rendered for s in everyone)
        and res.get("browsers_rendered", 0) == res.get("browsers", 0),
        "every_run_finished": res.get("runs_finished") == runs and res.get("runs_with_all_steps") == runs,
        "nothing_lost": res.get("runs_in_store") == runs_before + runs and len(final) == runs,
        "job_cap_respected": mon.max_running <= plan.max_jobs,
        "watchers_saw_broadcast_finish": res.get("watchers_checked", 0) > 0
        and res.get("watchers_saw_finish") == res.get("watchers_checked"),
        "no_server_traceback": not res.get("server_errors"),
        "no_harness_error": "harness_error" not in res,
    }
    res["pass"] = all(res["checks"].values())
    res["bounds"] = {
        "health_under_1s": bool(mon.health) and max(mon.health) < 1.0,
        "pss_under_bound": res.get("peak_tree_pss_mb") is not None and res["peak_tree_pss_mb"] < plan.rss_bound_mb,
    }


Variant = tuple[str, str | None, tuple[tuple[str, str], ...]]  # name, checkout to serve, more server env


def parse_variant(text: str) -> Variant:
    """``"NAME[@ROOT][,ENV=VALUE…]"`` → (name, root or None, env pairs); a clear error otherwise."""
    head, *env = text.split(",")
    name, _, root = head.partition("@")
    if not name or any("=" not in kv for kv in env):
        raise ValueError(f"--variant {text!r}: expected NAME[@CHECKOUT][,ENV=VALUE…], e.g. arena2,MALLOC_ARENA_MAX=2")
    return name, root or None, tuple((k, v) for k, _, v in (kv.partition("=") for kv in env))


def add_variant_argument(ap: argparse.ArgumentParser, help: str) -> None:
    """``--variant NAME[@CHECKOUT][,ENV=VALUE…]``, repeatable (:func:`parse_variant`): servers to compare."""
    ap.add_argument(
        "--variant",
        action="append",
        type=arg_type(parse_variant),
        default=[],
        metavar="NAME[@CHECKOUT][,ENV=VALUE…]",
        help=help,
    )


def memory_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    """Per round of one result: health, peak and idle memory (the figures a comparison is about)."""
    return [
        {
            "round": f"{r['sessions']}:{r['runs']}",
            "pass": r["pass"],
            "within_bounds": r.get("within_bounds"),
            "wall_s": r.get("wall_s"),
            "health_max_latency_s": r.get("health_max_latency_s"),
            "peak_rss_mb": r.get("peak_rss_mb"),
            "peak_tree_pss_mb": r.get("peak_tree_pss_mb"),
            "idle_rss_mb": r["idle"]["rss_mb"],
            "idle_tree_pss_mb": r["idle"]["tree_pss_mb"],
            **{k: r["idle"].get("memdebug", {}).get("sessions", {}).get(k) for k in ("sqlite_connections",)},
            "gc_full_passes": r["idle"].get("memdebug", {}).get("gc_full_passes"),  # SCANSNAP_MEMDEBUG=gcpauses
        }
        for r in res["rounds"]
    ]


def compare(variants: list[Variant], repeats: int, **plan: Any) -> dict[str, Any]:
    """The same rounds against each variant's server in turn (interleaved over ``repeats``), so that a
    change or a setting is measured side by side in one run; each variant's memory per round."""
    out: dict[str, Any] = {"variants": [], "loadavg_start": os.getloadavg()}
    for rep in range(repeats):
        for name, root, env in variants:
            res = run_load(**{**plan, "server_root": root, "server_env": (*plan.get("server_env", ()), *env)})
            idle0 = res["idle_before"]
            out["variants"].append(
                {
                    "name": name,
                    "repeat": rep,
                    "server_root": root,
                    "server_env": dict(env),
                    "idle_before": {"rss_mb": idle0["rss_mb"], "tree_pss_mb": idle0["tree_pss_mb"]},
                    "rounds": memory_rows(res),
                    "loadavg_start": res["loadavg_start"],
                    "wall_s": res["wall_s"],
                    "server_cpu_s": res.get("server_cpu_s"),  # the server process alone
                    "server_tree_cpu_s": res.get("server_tree_cpu_s"),  # with its training workers
                    "pass": res["pass"],
                }
            )
    out["loadavg_end"] = os.getloadavg()
    out["pass"] = all(v["pass"] for v in out["variants"])
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--rounds",
        type=arg_type(parse_rounds),
        default=Plan.rounds,
        help="sessions:runs of each round against one server (default 50:20,150:30)",
    )
    ap.add_argument("--steps", type=int, default=100, help="steps of each started syn-small run")
    ap.add_argument("--wave", type=int, default=10, help="sessions opened at once")
    ap.add_argument("--max-jobs", type=int, default=2, help="the server's SCANSNAP_MAX_JOBS")
    ap.add_argument("--lecture-steps", type=int, default=300)
    ap.add_argument("--lecture-speed", type=float, default=1.0, help="steps/s of the lecture until all are in")
    ap.add_argument("--rss-bound-mb", type=float, default=2048.0, help="peak PSS of the server's tree, each round")
    ap.add_argument("--time-limit-s", type=float, default=240.0, help="each round's limit")
    ap.add_argument("--settle-s", type=float, default=5.0, help="idle time after each round before its memory")
    ap.add_argument("--browsers", type=int, default=0, help="extra real Chromium pages watching the broadcast")
    ap.add_argument("--screenshot", default=None, help="PNG of the first Chromium watcher at the end")
    ap.add_argument("--tick-s", type=float, default=None, help="the server's SCANSNAP_TICK_S (default: the app's)")
    ap.add_argument("--warm-up", action="store_true", help="open every page once before the first round")
    ap.add_argument(
        "--server-env",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="more of the server's environment, e.g. MALLOC_ARENA_MAX=2 or SCANSNAP_MEMDEBUG=sessions,objects",
    )
    ap.add_argument("--server-root", default=None, help="serve another checkout of the app, to compare a change")
    add_variant_argument(ap, "compare: run the rounds against each variant's server in turn (give two or more)")
    ap.add_argument("--repeats", type=int, default=1, help="with --variant: how many times each, interleaved")
    args = ap.parse_args(argv)
    if bad := [kv for kv in args.server_env if "=" not in kv]:
        ap.error(f"--server-env {bad[0]!r}: expected NAME=VALUE")
    args.server_env = tuple(tuple(kv.split("=", 1)) for kv in args.server_env)
    plan = {f.name: getattr(args, f.name) for f in fields(Plan) if hasattr(args, f.name)}
    res = compare(args.variant, args.repeats, **plan) if args.variant else run_load(**plan)
    print(json.dumps(res, indent=1))
    if not res["pass"]:
        sys.exit(1)
    return res


if __name__ == "__main__":
    main()
