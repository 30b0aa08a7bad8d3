"""A new visitor's page load on a warm server, side by side with another commit of the app: seconds from
``goto`` to the page usable (▶ Start drawn and the script idle), in a fresh browser context each time
(a fresh cookie), for the Lab and the Real text page.  Both servers run at once on one Chromium, the
loads interleaved (ABBA), so load drifts hit both alike:

    .venv/bin/python -m bench.page_load --against 1327af0 --repeats 6

``--against REV`` serves that commit from a temporary ``git worktree`` with this checkout's packages.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

from bench.webserver import ROOT, launch_chromium, serve

PAGES = {"lab": "/?optim.steps=100000", "text": "/text?optim.steps=100000"}
IDLE = "() => document.querySelector('[data-testid=stApp]')?.getAttribute('data-test-script-state') === 'notRunning'"


def load_s(browser: Any, url: str) -> float:
    """Seconds from ``goto`` to the page usable, in a new browser context."""
    ctx = browser.new_context(viewport={"width": 1440, "height": 900})
    try:
        page = ctx.new_page()
        t0 = time.monotonic()
        page.goto(url)
        page.get_by_role("button", name="▶ Start").wait_for(timeout=120_000)
        page.wait_for_function(IDLE, timeout=120_000)
        return time.monotonic() - t0
    finally:
        ctx.close()


def worktree(stack: ExitStack, rev: str, where: Path) -> Path:
    """A detached worktree of ``rev`` under ``where``, removed when ``stack`` closes."""
    path = where / f"app-{rev}"
    subprocess.run(["git", "worktree", "add", "--detach", str(path), rev], cwd=ROOT, check=True, capture_output=True)
    stack.callback(subprocess.run, ["git", "worktree", "remove", "--force", str(path)], cwd=ROOT, check=False)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--against", required=True, help="the commit to compare this checkout with")
    ap.add_argument("--repeats", type=int, default=6)
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        roots = {args.against: worktree(stack, args.against, tmp), "this checkout": ROOT}
        urls = {}
        for i, (name, root) in enumerate(roots.items()):
            srv = stack.enter_context(serve(tmp / f"data{i}", tmp / f"server{i}.log", root=root))
            urls[name] = srv.url
        browser = launch_chromium(stack.enter_context(sync_playwright()))
        for url in urls.values():  # each server's first page (imports, caches) is not what is measured
            load_s(browser, url + PAGES["lab"])
        times: dict[str, dict[str, list[float]]] = {n: {p: [] for p in PAGES} for n in urls}
        for i in range(args.repeats):
            for name in list(urls) if i % 2 == 0 else list(urls)[::-1]:
                for page, path in PAGES.items():
                    times[name][page].append(round(load_s(browser, urls[name] + path), 2))
        browser.close()
    median = {n: {p: statistics.median(ts) for p, ts in by.items()} for n, by in times.items()}
    ratio = {p: round(median["this checkout"][p] / median[args.against][p], 3) for p in PAGES}
    print(
        json.dumps(
            {
                "against": args.against,
                "repeats": args.repeats,
                "times_s": times,
                "median_s": median,
                "ratio_this_over_against": ratio,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
