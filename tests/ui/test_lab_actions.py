"""Lab callbacks ignore events from widgets of an earlier rev (scansnap/ui/session.py ``stale``).

Found by bench/ui_latency.py in Chromium: after a few ratio-lock toggles (each bumps the rev,
renaming every Lab widget), the browser re-sent the previous rev's preset selectbox, its
callback ran ``on_preset`` and the run on screen was dropped; a click on the previous rev's
lock toggle raised ``KeyError`` (its callback looked up the current rev's key).  The callbacks
are called here with a plain dict as session state.
"""

from __future__ import annotations

from typing import Any

import pytest

from scansnap.kinds.synthetic.ui import actions as lab_actions
from scansnap.kinds.synthetic.ui import state as lab_state
from scansnap.paper.presets import get_preset
from scansnap.ui import session, url_state


@pytest.fixture
def state(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    ss: dict[str, Any] = {
        "lab.rev": 5,
        "lab.preset": "lecture",
        "lab.run": "abc123",
        "lab.cfg": get_preset("lecture").config.to_dict(),
        "lab.lock": None,
    }
    monkeypatch.setattr(lab_actions, "ss", ss)
    monkeypatch.setattr(session, "ss", ss)
    monkeypatch.setattr(url_state, "ss", ss)
    monkeypatch.setattr(lab_actions, "write_url", lambda: None)
    monkeypatch.setattr(lab_actions.RUN, "stop_current", lambda: None)
    return ss


def test_stale_names_earlier_revs_only(state: dict[str, Any]) -> None:
    assert lab_state.stale("w4.preset") and lab_state.stale("w0.lock")
    assert not lab_state.stale("w5.preset") and not lab_state.stale(lab_state.wkey("lock"))


def test_stale_preset_event_keeps_the_run_on_screen(state: dict[str, Any]) -> None:
    state["w4.preset"] = "syn-small"
    lab_actions.on_preset("w4.preset")
    assert state["lab.run"] == "abc123" and state["lab.preset"] == "lecture" and state["lab.rev"] == 5


def test_same_preset_event_changes_nothing(state: dict[str, Any]) -> None:
    state["w5.preset"] = "lecture"
    lab_actions.on_preset("w5.preset")
    assert state["lab.run"] == "abc123" and state["lab.rev"] == 5


def test_stale_lock_event_is_ignored(state: dict[str, Any]) -> None:
    state["w4.lock"] = True  # the current rev's "w5.lock" does not exist yet: no KeyError either
    eta_y = state["lab.cfg"]["optim"]["eta_y"]
    lab_actions.on_lock("w4.lock")
    assert state["lab.lock"] is None and state["lab.cfg"]["optim"]["eta_y"] == eta_y


def test_current_lock_event_locks_the_ratio(state: dict[str, Any]) -> None:
    state["w5.lock"] = True
    lab_actions.on_lock("w5.lock")
    cfg = state["lab.cfg"]["optim"]
    assert state["lab.lock"] == pytest.approx(cfg["eta_y"] / cfg["eta_z"]) and state["lab.rev"] == 6


def test_stale_knob_event_does_not_revert_a_value(state: dict[str, Any]) -> None:
    from scansnap.ui.knobs import KNOBS

    knob = next(k for k in KNOBS if k.key == "optim.eta_z")
    state["lab.cfg"]["optim"]["eta_z"] = 2.0  # changed in the current rev
    lab_actions.on_knob(knob, 1.0, key="w4.optim.eta_z")
    assert state["lab.cfg"]["optim"]["eta_z"] == 2.0
    lab_actions.on_knob(knob, 0.5, key="w5.optim.eta_z")
    assert state["lab.cfg"]["optim"]["eta_z"] == 0.5
