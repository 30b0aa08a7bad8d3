"""The live frame reruns the page when the control bar drawn no longer matches the run (scansnap/ui/live/frame.py).

Found in a full run of the hall test (issue 24's stop 47): on /text, ▶ Start then ⏸ Pause at once; the
Pause click's rerun drew the bar while the worker was still starting ("⏸ Pause"), the worker reported
"paused" before the same script run reached the live frame, so the frame saw a run that no longer
trains, ticked no more, and the bar kept "⏸ Pause" on a paused run until the next click.  Here the
frame is called with the session state and the service replaced by plain objects.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from scansnap.service.job_state import JobStatus
from scansnap.ui import run_actions
from scansnap.ui.live import frame

RID = "r1"


class RerunError(Exception):
    """st.rerun() was called."""


def _rerun() -> None:
    raise RerunError


@dataclass
class FakeService:
    status_now: JobStatus | None

    def watch(self, rid: str) -> None:
        pass

    def status(self, rid: str) -> JobStatus | None:
        return self.status_now

    def run(self, rid: str) -> dict[str, Any]:
        return {"id": rid, "status": self.status_now.status if self.status_now else "stopped", "last_step": 40}


def _status(status: str) -> JobStatus:
    return JobStatus(RID, status, 40, 100_000, None, None)


@pytest.fixture
def watch(monkeypatch: pytest.MonkeyPatch):
    """``watch(drawn, active_before, status)``: call the frame's look at the run with the bar drawn as
    ``drawn`` (live, paused), the frame's ``active`` as the full rerun set it, and the run now ``status``
    (None: its job is gone); returns "rerun" or the Watched it drew from."""

    def call(drawn: tuple[bool, bool], active_before: bool, status: str | None) -> Any:
        ss = {"text.ctl_drawn": drawn, "text.active": active_before, "text.tick": None}
        svc = FakeService(_status(status) if status else None)
        for module in (frame, run_actions):
            monkeypatch.setattr(module, "service", lambda: svc)
        monkeypatch.setattr(frame, "ss", ss)
        monkeypatch.setattr(run_actions.st, "session_state", ss)
        monkeypatch.setattr(frame.st, "rerun", _rerun)
        try:
            return frame._watch(RID, "text")
        except RerunError:
            return "rerun"

    return call


def test_controls_for_says_what_the_bar_shows():
    assert run_actions.controls_for(None) == (False, False)
    assert run_actions.controls_for(_status("queued")) == (True, False)
    assert run_actions.controls_for(_status("running")) == (True, False)
    assert run_actions.controls_for(_status("paused")) == (True, True)
    assert run_actions.controls_for(_status("finished")) == (False, False)


def test_a_run_paused_after_the_bar_was_drawn_reruns_the_page(watch):
    """The race: the bar drew "⏸ Pause" (live, not paused); by the frame, in the same script run, the run is
    paused, so the frame's ``active`` is already False: the page must rerun to draw "▶ Resume"."""
    assert watch((True, False), False, "paused") == "rerun"


def test_a_run_ended_after_the_bar_was_drawn_reruns_the_page(watch):
    """The bar drew a live run (Stop on, Start off); it finished before the frame: rerun, Start comes back."""
    assert watch((True, False), False, "finished") == "rerun"
    assert watch((True, True), False, None) == "rerun"  # a paused run whose job is gone


def test_a_bar_that_matches_the_run_draws_the_frame_without_a_rerun(watch):
    """No rerun loop: a paused run under a "▶ Resume" bar, a running run under "⏸ Pause", a finished one."""
    for drawn, active, status in (
        ((True, True), False, "paused"),
        ((True, False), True, "running"),
        ((False, False), False, "finished"),
        ((False, False), False, None),
    ):
        seen = watch(drawn, active, status)
        assert isinstance(seen, frame.Watched), (drawn, status, seen)
        assert seen.active == (status == "running")


def test_a_run_that_stopped_training_since_the_last_full_rerun_reruns_it(watch):
    """Another tab paused it: the frame's last full rerun saw it train, now it does not."""
    assert watch((True, False), True, "paused") == "rerun"
