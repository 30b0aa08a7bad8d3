"""Summaries that never overstate and a story for a run that diverges, in Debian's Chromium: the Reproduce
page opens in quick mode and counts a stored report's pass, n/a and fail apart (in its verdict line and
its picker); docs/explore.md's diverging run, in the Lab, ends with a story that says so and what to change."""

from __future__ import annotations

import re

import pytest

from scansnap.paper.verdicts import judge, not_applicable
from tests.e2e.conftest import ARTIFACTS
from tests.e2e.watching import serve_watched
from tests.guards import GUARD_MS
from tests.stored_repro import store_reproduction

pytestmark = [pytest.mark.browser, pytest.mark.server]
# docs/explore.md's diverging run, as a Lab link
DIVERGES = "/?preset=syn-small&model.init=normal&optim.weight_decay=10&optim.eta_y=1e6&optim.eta_z=1e6"


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """A server on a data directory that holds one stored reproduction: 2 pass, 1 n/a, 1 fail."""
    data, log = tmp_path_factory.mktemp("summary-data"), tmp_path_factory.mktemp("log") / "streamlit.log"
    verdicts = [
        judge("fig9", "B_n(t0) does not depend on eta_Z", "spread", 0.01, "<", 0.05),
        judge("fig9", "the curve meets the theory", "error", 0.02, "<", 0.05),
        judge("fig9", "the drop is monotone", "violations", 3.0, "<", 1.0),
        not_applicable("fig9", "Theorem 4's curve", "error", "< 0.05", "the theorem assumes one common token"),
    ]
    store_reproduction(data, "20261202-090000-abc123", verdicts=verdicts)
    with serve_watched(data, log) as srv:
        yield srv.url


def test_reproduce_opens_quick_and_counts_pass_na_and_fail_apart(served, browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    pg.set_default_timeout(GUARD_MS)
    try:
        pg.goto(f"{served}/reproduce")
        quick = pg.locator(
            "[data-testid=stCheckbox] input, [data-testid=stToggle] input"
        ).first  # the page's one toggle
        quick.wait_for(state="attached")
        assert quick.is_checked()  # the big button runs the quick mode unless asked otherwise
        pg.get_by_text(re.compile(r"2 pass · 1 n/a · 1 fail")).first.wait_for()
        assert pg.get_by_text(re.compile(r"\b4/4\b|all pass|verdicts pass")).count() == 0  # never "4/4 pass"
        pg.screenshot(path=str(ARTIFACTS / "reproduce-tally-1280x720.png"))
    finally:
        pg.close()


def test_a_diverging_run_ends_with_a_story_that_says_so(served, browser):
    pg = browser.new_page(viewport={"width": 1280, "height": 720})
    pg.set_default_timeout(GUARD_MS)
    try:
        pg.goto(served + DIVERGES)
        pg.get_by_role("button", name="▶ Start").click()
        pg.get_by_text(re.compile(r"Diverged at step \d+: the numbers overflowed\. Lower the learning rates")).wait_for(
            timeout=GUARD_MS
        )
        pg.screenshot(path=str(ARTIFACTS / "lab-diverged-1280x720.png"))
    finally:
        pg.close()
