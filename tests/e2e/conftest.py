"""On a browser test's failure, keep what the page showed: a screenshot and the page's text under
test-artifacts/failures/, so a failure seen once in a full run can be read afterwards."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

FAILURES = Path(__file__).resolve().parents[2] / "test-artifacts" / "failures"


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
