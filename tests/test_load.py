"""A scaled-down but real lecture-hall load test (bench/load_test.py: 50 sessions, 20 runs):
8 browser sessions in one Chromium, 4 of which start runs (one of them published and
watched by the others), against a real server with SCANSNAP_MAX_JOBS=2.  Chromium is kept to
one core (it stands in for the students' laptops); opening a session then takes ~10 s on this
2-core machine, which is what bounds the size of this test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


def test_lecture_hall_load():
    pytest.importorskip("playwright.sync_api")
    from bench.load_test import run_load

    res = run_load(sessions=8, runs=4, steps=100, wave=4, rss_bound_mb=1024, time_limit_s=150,
                   lecture_steps=300, browser_cpus={1} if len(os.sched_getaffinity(0)) > 1 else None)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "load_test.json").write_text(json.dumps(res, indent=1))
    failed = [k for k, ok in res["checks"].items() if not ok]
    assert not failed, f"load test failed {failed}: {json.dumps(res)}"
    assert res["broadcast_live_while_all_open"] and res["watchers_saw_finish"] == res["watchers_checked"] > 0
    assert res["wall_s"] < 180
