"""How far a stored run is and how long it still trains, for the Sweep page's progress bars
(:mod:`scansnap.ui.result_words` does the arithmetic).  A run's whole-run estimate is asked of the service once
per session and run (``progress.est``)."""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from scansnap.core.config import ConfigError
from scansnap.service.facade import TERMINAL, JobStatus, ServiceError
from scansnap.ui.resources import service
from scansnap.ui.result_words import RunProgress

ss = st.session_state


def estimate_s(info: dict[str, Any]) -> float | None:
    """Seconds a whole run of this stored run's config takes on one slot (the queue's estimate); None
    when its config is no longer one the dashboard may train (a corpus gone, a limit changed)."""
    cache = ss.setdefault("progress.est", {})
    rid = info["id"]
    if rid not in cache:
        try:
            cache[rid] = service().stored_run_seconds(info)
        except (ConfigError, ServiceError, ValueError):
            cache[rid] = None
    return cache[rid]


def run_progress(info: dict[str, Any], s: JobStatus | None) -> RunProgress:
    """A stored run and its job's status (None: no job) as :class:`~scansnap.ui.result_words.RunProgress`."""
    status = s.status if s is not None else info["status"]
    ended = s is None or status in TERMINAL  # no job: nothing trains it (any more)
    if s is not None:
        done = s.fraction
    else:
        steps = json.loads(info["config_json"]).get("optim", {}).get("steps") or 0
        done = min(1.0, (info["last_step"] or 0) / steps) if steps else 1.0
    left = s.left_s if s is not None else None
    return RunProgress(ended, left, None if ended or left is not None else estimate_s(info), done)
