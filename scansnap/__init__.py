"""Scan & Snap lab: ``scansnap lab`` starts the dashboard; ``import scansnap as ss`` is the lab from Python
(:mod:`scansnap.api`: ``ss.presets()``, ``ss.train(...)``, ``ss.open(run_id)``; docs/api.md).

The API is imported on first use: the web server imports ``scansnap.ui`` without torch or the trainer."""

from __future__ import annotations

from typing import Any

API = ("Run", "config", "open", "presets", "train")


def __getattr__(name: str) -> Any:
    if name in API:
        from scansnap import api

        return getattr(api, name)
    raise AttributeError(f"module 'scansnap' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *API])
