"""Students watch the lecturer's run, in Debian's Chromium: the lecturer turns on *students watch* before
▶ Start and shows the join code (QR and letters); a phone opens the join link, waits, and moves to the
run by itself once the lecturer starts it, then follows it live.  Screenshots in test-artifacts/."""

from __future__ import annotations

import re

import pytest

from tests.e2e.conftest import ARTIFACTS
from tests.guards import GUARD_MS

pytestmark = [pytest.mark.browser, pytest.mark.server]
LECTURER_SIZES = ((1280, 720), (1440, 900), (1920, 1080))


def join_link_of(pg) -> str:
    """Turn on the switch, open the join box, read the link; the box closed again."""
    pg.get_by_text("🎓 Students watch").click()
    chip = pg.get_by_role("button", name=re.compile(r"^📱 [A-Z2-7]{6}"))
    chip.wait_for()
    chip.click()
    link = pg.locator("[data-testid=stPopoverBody] code").filter(has_text="follow=").inner_text()
    assert pg.locator("[data-testid=stPopoverBody] img").count() == 1  # the QR code
    return link.strip()


def test_a_phone_follows_the_lecturers_run_from_before_its_start(server, browser):
    lecturer = browser.new_page(viewport={"width": 1280, "height": 720})
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    for pg in (lecturer, phone):
        pg.set_default_timeout(GUARD_MS)
    try:
        lecturer.goto(f"{server}/?lecture=1&speed=2")  # 2 steps/s: the run trains while the phone watches
        lecturer.get_by_role("button", name="▶ Start").wait_for()
        link = join_link_of(lecturer)
        code = re.search(r"follow=([A-Z2-7]{6})", link).group(1)
        assert lecturer.get_by_text(f"Join code {code}").is_visible()
        lecturer.screenshot(path=str(ARTIFACTS / "students-join-1280x720.png"))
        lecturer.keyboard.press("Escape")
        port = server.rsplit(":", 1)[1]
        phone.goto(re.sub(r"^http://[^/]+", f"http://127.0.0.1:{port}", link))  # the LAN address, as a phone has it
        phone.get_by_text(re.compile("Waiting for the lecturer's run")).wait_for()
        assert phone.get_by_role("button", name="▶ Start").count() == 0  # a student's page has no controls
        phone.screenshot(path=str(ARTIFACTS / "students-phone-waiting-390x844.png"))
        lecturer.get_by_role("button", name="▶ Start").click()
        lecturer.get_by_role("button", name="⏸ Pause").wait_for()
        phone.get_by_text(re.compile("You follow the lecturer's runs")).wait_for()  # moved by itself, no reload
        phone.locator(".st-key-lab-story").get_by_text(re.compile(r"Step \d+ of 3000")).wait_for()
        assert f"follow={code}" in phone.url and "run=" in phone.url
        phone.wait_for_timeout(3000)
        phone.screenshot(path=str(ARTIFACTS / "students-phone-live-390x844.png"))
        for w, h in LECTURER_SIZES:
            lecturer.set_viewport_size({"width": w, "height": h})
            lecturer.wait_for_timeout(800)
            bar = lecturer.locator(".st-key-lab-bar").bounding_box()
            assert bar is not None and bar["y"] + bar["height"] <= h
            lecturer.screenshot(path=str(ARTIFACTS / f"students-lecturer-{w}x{h}.png"))
        lecturer.get_by_role("button", name="⏹ Stop").click()
    finally:
        lecturer.close()
        phone.close()
