"""Training throughput headless vs with a browser watching the run live (issue 3 §8).

For each repeat, interleaved so that both sides see the same machine load:

(a) headless: ``python -m scansnap run --preset P --set optim.steps=N --quiet`` in a subprocess,
    once with torch's default intra-op threads (= cores) and once with 1 thread (what the
    server gives each job: cores // SCANSNAP_MAX_JOBS); the ratio uses the faster of the two;
(b) browser: ``streamlit run app.py`` (fresh server, fresh data directory), Chromium opens the
    Lab at ``/?preset=P&optim.steps=N``, clicks Start and watches the run live until the page
    says ``finished`` (the job trains in a worker process of the server).

The headless rate is the stored run's ``last_step / (updated - created)`` (``created`` is
written once the CLI has imported torch and built its trainer, ``updated`` by the final status).
The watched rate is what the watcher sees: steps per second between the first step the page
shows and the finish, from the page's own status line.  Also recorded for the browser side: the
same stored rate (``ratio_incl_start``), which also counts the wait before the first step
(``start_delay_s``; on a fresh server, the first run waits for the worker fork server to import
torch, which the CLI does before ``created``).  Also
recorded: time from launching ``streamlit run`` to the first chart visible in the browser,
and the CPU seconds, while it trained, of the server process and of the server with its workers.
Prints JSON; the target is (b) ≥ 90 % of (a).
``--pin`` puts training on core 0 (the CLI; or the server's workers, ``SCANSNAP_WORKER_CPUS=0``)
and everything else on core 1: the server's own process (pages, live ticks), this script,
Playwright's driver and Chromium.  Training then has one core to itself on both sides, as on a
server with a core per job and the browser on the viewer's machine, and the ratio measures what
serving the watched run takes from training.

    PYTHONPATH=. .venv/bin/python -m bench.ui_throughput --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.webserver import ROOT, launch_chromium, pin_chromium, serve
from scansnap.service.store import RunStore

STATUS = re.compile(r"^finished · step")
SIDES = ("headless", "headless_1thread", "browser")


def stored_rate(data_dir: str | Path, run_id: str | None = None) -> dict[str, Any]:
    """steps/s of a stored run (the newest one when ``run_id`` is None) from created/updated."""
    with RunStore(data_dir) as store:
        run = store.get_run(run_id) if run_id else store.list_runs(1)[0]
    assert run is not None and run["status"] == "finished", run
    wall = run["updated"] - run["created"]
    return {
        "run": run["id"],
        "steps": run["last_step"],
        "wall_s": round(wall, 3),
        "steps_per_s": round(run["last_step"] / wall, 1),
    }


def headless(
    preset: str, steps: int, work: Path, threads: int | None = None, cpus: set[int] | None = None
) -> dict[str, Any]:
    """``threads``: torch intra-op threads (OMP_NUM_THREADS); None = torch's default (all cores)."""
    d = work / f"headless-{time.monotonic_ns()}"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    if threads:
        env["OMP_NUM_THREADS"] = str(threads)
    subprocess.run(
        [
            sys.executable,
            "-m",
            "scansnap",
            "--data-dir",
            str(d),
            "run",
            "--preset",
            preset,
            "--set",
            f"optim.steps={steps}",
            "--quiet",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=600,
        preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus else None,
    )
    return stored_rate(d)


def _open_lab(playwright: Any, url: str, pin: bool) -> tuple[Any, Any]:
    """Chromium on the Lab at ``url`` (with ``pin``, every Chromium thread on core 1); (browser, page)."""
    b = launch_chromium(playwright)
    pg = b.new_page(viewport={"width": 1600, "height": 2000})
    pg.set_default_timeout(60_000)
    pg.goto(url)
    if pin:  # now that the page's renderer exists
        pin_chromium({1})
    return b, pg


def _start(pg: Any) -> None:
    """Press Start and wait until the live charts stream."""
    pg.get_by_role("button", name="▶ Start").click()
    pg.wait_for_selector(".st-key-lab-cn .js-plotly-plot")


def browser(preset: str, steps: int, work: Path, pin: bool = False) -> dict[str, Any]:
    """``pin``: the server's training workers on core 0 (``SCANSNAP_WORKER_CPUS=0``); the server's
    own process and Chromium on core 1."""
    from playwright.sync_api import sync_playwright

    d = work / f"browser-{time.monotonic_ns()}"
    with serve(
        d, work / f"{d.name}.log", env={"SCANSNAP_WORKER_CPUS": "0"} if pin else None, cpus={1} if pin else None
    ) as srv:
        healthy_s = time.monotonic() - srv.t_launch
        with sync_playwright() as p:
            b, pg = _open_lab(p, f"{srv.url}/?preset={preset}&optim.steps={steps}", pin)
            pg.wait_for_selector("[data-testid=stPlotlyChart] .js-plotly-plot")  # the P(l|n) preview
            first_chart_s = time.monotonic() - srv.t_launch
            t_start = time.monotonic()
            _start(pg)
            cpu0, tree0, t0 = srv.cpu_s(), srv.tree_cpu_s(), time.monotonic()
            ticks, last = 0, ""
            seen: list[tuple[float, int]] = []  # (time, step) of each new status the page showed
            deadline = time.monotonic() + 600
            status = pg.get_by_text(re.compile(r"^(running|queued|paused|finished) · step"))
            while time.monotonic() < deadline:
                text = status.first.inner_text() if status.count() else ""
                if text != last:
                    ticks, last = ticks + 1, text
                    step = re.search(r"step (\d+)", text)
                    if step and int(step.group(1)) > 0:
                        seen.append((time.monotonic(), int(step.group(1))))
                if STATUS.search(text):
                    break
                pg.wait_for_timeout(250)
            else:
                raise RuntimeError(f"the run did not finish in the browser: {last!r}")
            cpu, tree_cpu = srv.cpu_s() - cpu0, srv.tree_cpu_s() - tree0
            watched = time.monotonic() - t0
            run_id = re.search(r"run=(\w+)", pg.url).group(1)
            b.close()
    out = stored_rate(d, run_id)
    (ta, sa), (tb, sb) = seen[0], seen[-1]  # the first step the page showed, and the finish
    out.update(watched_steps_per_s=round((sb - sa) / (tb - ta), 1), start_delay_s=round(ta - t_start, 2))
    out.update(
        first_chart_s=round(first_chart_s, 2),
        healthy_s=round(healthy_s, 2),
        status_updates_seen=ticks,
        server_cpu_s=round(cpu, 2),
        server_tree_cpu_s=round(tree_cpu, 2),
        watched_s=round(watched, 2),
        status_updates_per_s=round(ticks / watched, 2),
    )
    return out


def headless_beside_browser(preset: str, steps: int, work: Path) -> dict[str, Any]:
    """The control for ``--pin``: headless on core 0 while core 1 is as busy as during (b): a server
    (workers on core 1 too) with Chromium watching a run of the same preset throttled to 40 steps/s,
    so that the page keeps redrawing the live charts.  What (b) loses beyond this is what serving
    the watched run takes from training; what this loses against (a) is the machine's own
    interference between its cores (shared cache, memory bandwidth, the host under the VM)."""
    from playwright.sync_api import sync_playwright

    d = work / f"neighbour-{time.monotonic_ns()}"
    with serve(d, work / f"{d.name}.log", env={"SCANSNAP_WORKER_CPUS": "1"}, cpus={1}) as srv, sync_playwright() as p:
        b, pg = _open_lab(p, f"{srv.url}/?preset={preset}&optim.steps={10 * steps}&speed=40", pin=True)
        _start(pg)
        out = headless(preset, steps, work, 1, {0})
        b.close()
    return out


def _spread(xs: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(xs), 3), "min": round(min(xs), 3), "max": round(max(xs), 3)}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--preset", default="lecture")
    ap.add_argument("--steps", type=int, default=20000, help="long enough to train ≥ 15 s headless")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument(
        "--pin",
        action="store_true",
        help="training (CLI or the server's workers) on core 0; the "
        "server process and the browser on core 1, as when the browser runs on the viewer's machine",
    )
    args = ap.parse_args(argv)
    if args.pin:  # this process, Playwright's driver and Chromium (children inherit it) stay off core 0
        os.sched_setaffinity(0, {1})
    pairs = []
    with tempfile.TemporaryDirectory(prefix="ui-throughput-") as tmp:
        work = Path(tmp)
        for i in range(args.repeats):
            sides = SIDES + (("headless_beside_browser",) if args.pin else ())
            order = sides if i % 2 == 0 else sides[::-1]  # alternate the order: cancel load drift
            r: dict[str, Any] = {}
            for side in order:
                if side == "browser":
                    r[side] = browser(args.preset, args.steps, work, args.pin)
                elif side == "headless_beside_browser":
                    r[side] = headless_beside_browser(args.preset, args.steps, work)
                else:
                    r[side] = headless(
                        args.preset,
                        args.steps,
                        work,
                        1 if side == "headless_1thread" else None,
                        {0} if args.pin else None,
                    )
            best = max(r["headless"]["steps_per_s"], r["headless_1thread"]["steps_per_s"])
            r["ratio"] = round(r["browser"]["watched_steps_per_s"] / best, 3)  # against the faster headless run
            r["ratio_incl_start"] = round(r["browser"]["steps_per_s"] / best, 3)
            if args.pin:  # against the control: what serving costs beyond the machine's cross-core interference
                control = r["headless_beside_browser"]["steps_per_s"]
                r["ratio_to_control"] = round(r["browser"]["watched_steps_per_s"] / control, 3)
            r["loadavg_1m"] = os.getloadavg()[0]
            pairs.append(r)
            print(json.dumps({"repeat": i, **r}), file=sys.stderr, flush=True)
    ratios = [r["ratio"] for r in pairs]
    result = {
        "preset": args.preset,
        "steps": args.steps,
        "pinned": args.pin,
        "repeats": args.repeats,
        "cores": os.cpu_count(),
        "headless_steps_per_s": _spread([r["headless"]["steps_per_s"] for r in pairs]),
        "headless_1thread_steps_per_s": _spread([r["headless_1thread"]["steps_per_s"] for r in pairs]),
        "server_torch_threads": max(
            1, (os.cpu_count() or 1) // int(os.environ.get("SCANSNAP_MAX_JOBS") or os.cpu_count() or 1)
        ),
        "browser_steps_per_s": _spread([r["browser"]["steps_per_s"] for r in pairs]),
        "browser_watched_steps_per_s": _spread([r["browser"]["watched_steps_per_s"] for r in pairs]),
        "ratio": _spread(ratios),
        "ratio_incl_start": _spread([r["ratio_incl_start"] for r in pairs]),
        "start_delay_s": _spread([r["browser"]["start_delay_s"] for r in pairs]),
        **(
            {
                "headless_beside_browser_steps_per_s": _spread(
                    [r["headless_beside_browser"]["steps_per_s"] for r in pairs]
                ),
                "ratio_to_control": _spread([r["ratio_to_control"] for r in pairs]),
            }
            if args.pin
            else {}
        ),
        "headless_wall_s": _spread([r["headless"]["wall_s"] for r in pairs]),
        "status_updates_per_s": _spread([r["browser"]["status_updates_per_s"] for r in pairs]),
        "first_chart_s": _spread([r["browser"]["first_chart_s"] for r in pairs]),
        "server_healthy_s": _spread([r["browser"]["healthy_s"] for r in pairs]),
        "target": "browser (watched rate) ≥ 0.90 × the faster of headless (torch default threads) and headless "
        "(1 thread)",
        "pass": statistics.median(ratios) >= 0.9,
        "pairs": pairs,
    }
    print(json.dumps(result, indent=1))
    return result


if __name__ == "__main__":
    main()
