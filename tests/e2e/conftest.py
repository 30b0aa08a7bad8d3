"""The browser tests' shared fixtures: a dashboard server and a Chromium per module (a module may
define its own).  On a browser test's failure, what the page showed is kept: a screenshot, the
traceback and the page's text under test-artifacts/failures/, so a failure seen once in a full run can
be read afterwards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.webserver import launch_chromium
from tests.e2e.watching import serve_watched

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
FAILURES = ARTIFACTS / "failures"


@pytest.fixture(scope="module")
def server(request, tmp_path_factory):
    """``streamlit run`` of this checkout on a free port, with a fresh data directory and the browser tests'
    refresh (tests/e2e/watching.py): its URL."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    data, log = tmp_path_factory.mktemp(f"{name}-data"), tmp_path_factory.mktemp("log") / "streamlit.log"
    with serve_watched(data, log) as srv:
        yield srv.url


@pytest.fixture(scope="module")
def browser(server):
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    page = item.funcargs.get("page") if hasattr(item, "funcargs") else None
    if report.when != "call" or not report.failed or page is None:
        return
    FAILURES.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^\w.-]+", "_", item.name)
    try:
        page.screenshot(path=str(FAILURES / f"{stem}.png"), full_page=True)
        (FAILURES / f"{stem}.txt").write_text(
            f"url: {page.url}\n\n{report.longreprtext[-4000:]}\n\n--- the page's text ---\n{page.inner_text('body')}"
        )
    except Exception as exc:  # the page may be gone with the failure: say so, do not hide the test's own error
        (FAILURES / f"{stem}.txt").write_text(f"no page capture: {exc!r}")
