"""Helpers for the dashboard's AppTest tests."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parents[1] / "app.py")


def run_app(params: dict[str, str] | None = None, timeout: float = 60) -> AppTest:
    """The dashboard opened with these URL query parameters, after its first script run."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for k, v in (params or {}).items():
        at.query_params[k] = v
    return at.run()
