"""The hall's start latency and the server's health, measured (tests/e2e/test_hall.py and
tests/e2e/test_browser.py check the behaviour; these are the figures).  Each scenario gets a fresh server
with two training slots (``SCANSNAP_MAX_JOBS=2``), warmed up by one short run (a server that has been up a
while: its prewarm and the fork server's torch import done), and websocket clients that speak Streamlit's
own protocol (bench/st_client.py), so that the server is what is measured:

* ``free``: a visitor presses ▶ Start on an idle server;
* ``two_paused``: two visitors start 100,000-step runs, pause them and leave; then a new visitor starts;
* ``two_throttled``: two visitors start 100,000-step runs at 1 step/s and leave; then a new visitor starts;
* ``thirty_cookies``: thirty fresh cookies each start a Lab run of 3,000 steps; then a new visitor starts
  and is told its wait ("starts in about …"): the stated wait beside the measured one;
* ``huge_link``: a visitor opens the link that once grew the server by gigabytes
  (``/?data.num_last=40&data.num_distinct_per_next=200000``): the server's memory before and after, and
  ten ``/healthz`` answers' latency.

A visitor's start latency is the seconds from the click's answer (the rerun that stored the run) to the
store holding a snapshot after step 0 (the runs just left behind may still be starting: their mean-field
twins train beside them, as in a hall where visitors come in a burst).  Bounds set beside them
(``bounds``): a run trains within ``START_WITHIN_S`` when the runs left behind hold no slot, within its
stated wait otherwise; the huge link grows the server by less than ``GROWTH_MB`` and every health answer
comes within ``HEALTH_S``.

    .venv/bin/python -m bench.hall [--scenarios free two_paused …]      # prints JSON (bench.run_all keeps it)
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.st_client import StClient
from bench.webserver import Server, health_latency, serve
from scansnap.service.store import RunStore

START_WITHIN_S = 5.0  # a new visitor's run trains this soon when the runs left behind hold no slot
GROWTH_MB = 300.0  # the most the huge link may grow the server by
HEALTH_S = 1.0  # the slowest health answer allowed
LONG = "optim.steps=100000"  # runs that outlast every scenario
GUARD_S = 600.0


def _wait(what: str, cond: Callable[[], bool], timeout: float = GUARD_S) -> float:
    t0 = time.monotonic()
    while not cond():
        if time.monotonic() - t0 > timeout:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - t0


def _run(data: Path, rid: str) -> dict[str, Any]:
    with RunStore(data) as store:
        return store.get_run(rid) or {}


def _start(url: str, path: str, name: str) -> tuple[StClient, str, float]:
    """A fresh cookie opens ``path`` and presses ▶ Start: (the client, the run's id, when the click was answered)."""
    c = StClient(url, name=name).open(path, timeout=120)
    c.click("▶ Start", timeout=120)
    clicked = time.monotonic()
    c.wait_for(lambda c: "run" in c.query, 120)
    return c, c.query["run"], clicked


def _trains(data: Path, rid: str) -> bool:
    return (_run(data, rid).get("last_step") or 0) > 0


def visitor_latency(url: str, data: Path, steps: str = LONG) -> dict[str, Any]:
    """A new visitor's run: seconds from ▶ Start's answer to its first snapshot after step 0."""
    c, rid, clicked = _start(url, f"/?{steps}", "visitor")
    try:
        waited = _wait(f"run {rid} to train", lambda: _trains(data, rid))
        return {"trained_after_s": round(time.monotonic() - clicked, 2), "polled_s": round(waited, 2)}
    finally:
        c.close()


def warm_up(url: str, data: Path) -> None:
    """One short run trained to its end, so that the server is past its start."""
    c, rid, _ = _start(url, "/?optim.steps=2", "warm-up")
    _wait(f"the warm-up run {rid} to finish", lambda: _run(data, rid).get("status") == "finished")
    c.close()


def _leave_paused(url: str, data: Path, k: int) -> None:
    c, rid, _ = _start(url, f"/?{LONG}", f"paused-{k}")
    c.click("⏸ Pause", timeout=120)
    _wait(f"run {rid} to pause", lambda: _run(data, rid).get("status") == "paused")
    c.close()


def _leave_throttled(url: str, data: Path, k: int) -> None:
    c, _, _ = _start(url, f"/?preset=syn-small&{LONG}&speed=1", f"throttled-{k}")
    c.close()


def _stated_s(texts: list[str]) -> float | None:
    for t in texts:
        if m := re.search(r"starts in about ([\d.]+) (s|min|h)", t):
            return float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
    return None


def thirty_cookies(url: str, data: Path) -> dict[str, Any]:
    """Thirty fresh cookies start a Lab run each; a new visitor is told its wait, then trains."""
    clients = []
    try:
        t0 = time.monotonic()
        for k in range(30):
            clients.append(_start(url, "/?optim.steps=3000", f"cookie-{k}")[0])
        starts_s = time.monotonic() - t0
        c, rid, clicked = _start(url, "/?optim.steps=3000", "visitor")
        clients.append(c)
        c.wait_for(lambda c: _stated_s(c.texts()) is not None or _trains(data, rid), 60)
        stated = _stated_s(c.texts())
        _wait(f"run {rid} to train", lambda: _trains(data, rid))
        waited = time.monotonic() - clicked
        return {
            "thirty_starts_s": round(starts_s, 1),
            "stated_wait_s": stated,
            "waited_s": round(waited, 1),
            "waited_over_stated": round(waited / stated, 2) if stated else None,
        }
    finally:
        for c in clients:
            c.close()


def huge_link(srv: Server) -> dict[str, Any]:
    """The huge-vocabulary link: the server's memory before and after, and ten health answers' latency."""
    idle = srv.rss_mb()
    with StClient(srv.url, name="huge").open("/?data.num_last=40&data.num_distinct_per_next=200000", timeout=120) as c:
        refused = c.has_text("at most 200,000 are allowed")
        peak, latencies = idle, []
        for _ in range(10):
            latencies.append(health_latency(srv.url))
            peak = max(peak, srv.rss_mb())
            time.sleep(0.3)
    return {
        "refused_with_the_limit": refused,
        "idle_mb": round(idle, 1),
        "peak_mb": round(peak, 1),
        "growth_mb": round(peak - idle, 1),
        "health_max_s": round(max(latencies), 3),
    }


LEFT_BEHIND = {"two_paused": _leave_paused, "two_throttled": _leave_throttled}


def scenario(name: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-hall-") as tmp:
        data = Path(tmp) / "data"
        with serve(data, Path(tmp) / "server.log", env={"SCANSNAP_MAX_JOBS": "2"}) as srv:
            warm_up(srv.url, data)
            if name == "huge_link":
                return huge_link(srv)
            if name == "thirty_cookies":
                return thirty_cookies(srv.url, data)
            if leave := LEFT_BEHIND.get(name):
                for k in range(2):
                    leave(srv.url, data, k)
            return visitor_latency(srv.url, data)


SCENARIOS = ("free", "two_paused", "two_throttled", "thirty_cookies", "huge_link")


def bounds(res: dict[str, dict[str, Any]]) -> dict[str, bool]:
    """Each measured figure against its bound (only the scenarios that ran)."""
    out = {}
    for name in ("free", "two_paused", "two_throttled"):
        if name in res:
            out[f"{name}: trains within {START_WITHIN_S:g} s"] = res[name]["trained_after_s"] <= START_WITHIN_S
    if (t := res.get("thirty_cookies")) and t["stated_wait_s"]:
        out["thirty_cookies: trains within the stated wait"] = t["waited_s"] <= max(t["stated_wait_s"], START_WITHIN_S)
    if h := res.get("huge_link"):
        out[f"huge_link: grows < {GROWTH_MB:g} MB"] = h["growth_mb"] < GROWTH_MB
        out[f"huge_link: health < {HEALTH_S:g} s"] = h["health_max_s"] < HEALTH_S
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scenarios", nargs="+", choices=SCENARIOS, default=list(SCENARIOS))
    args = ap.parse_args(argv)
    res: dict[str, Any] = {name: scenario(name) for name in args.scenarios}
    res["bounds"] = bounds(res)
    res["within_bounds"] = all(res["bounds"].values())
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":
    main()
