"""Helpers for the dashboard's AppTest tests."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import UnknownElement

from tests.guards import GUARD_S

APP = str(Path(__file__).resolve().parents[1] / "scansnap" / "app.py")


def run_app(params: dict[str, str] | None = None, timeout: float = GUARD_S) -> AppTest:
    """The dashboard opened with these URL query parameters, after its first script run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()


def open_page(page: str, params: dict[str, str]) -> AppTest:
    """``page`` (e.g. ``app_pages/sweep.py``) opened with exactly these URL query parameters."""
    at = run_app().switch_page(page)
    at.query_params.clear()
    for k, v in params.items():
        at.query_params[k] = v
    return at.run()


def open_share_box(at: AppTest, key: str = "lab-share") -> AppTest:
    """Open a page's "Share, config JSON" box (drawn only while open: ``scansnap.ui.widgets.share_ui``), as a click
    does."""
    at.session_state[key] = True
    return at.run()


def shown_text(elements) -> str:
    """The text of ``elements`` (warnings, captions …) joined, Markdown's escapes removed."""
    return " ".join(e.value for e in elements).replace("\\", "")


def wait_for(cond: Callable[[], object], timeout: float = GUARD_S) -> None:
    """Poll ``cond`` until it holds; fail after a generous ``timeout`` (never a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, f"condition not reached within {timeout} s"
        time.sleep(0.02)


def live_figure(component: UnknownElement) -> dict:
    """The plotly figure a live chart (``scansnap.ui.live.figure.live_plot_ui``: {tick, fig: payload JSON}) draws."""
    return json.loads(json.loads(component.proto.json)["fig"])["fig"]


def stopped_run(store: Any, cfg: Any, name: str, owner: str | None = None, at_step: int = 100) -> str:
    """A run trained in this process until its first snapshot at or past ``at_step``, then stopped, with its
    checkpoint at that snapshot (as a Stop leaves a run that has trained a while): its id."""
    from scansnap.service import runner
    from scansnap.service.control import RunControl

    control, saved = RunControl(), runner.CHECKPOINT_SECONDS
    job = runner.RunJob(cfg, store, name=name, owner=owner)
    runner.CHECKPOINT_SECONDS = -1.0  # a checkpoint with every snapshot
    try:
        status = job.run(control, on_snapshot=lambda snap: snap.step >= at_step and control.stop())
    finally:
        runner.CHECKPOINT_SECONDS = saved
    assert status == "stopped", status
    return job.run_id
