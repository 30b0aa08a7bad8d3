"""The lecture-hall load test at full size (bench/load_test.py), two rounds against ONE server:
50 concurrent sessions with 20 runs, then 150 sessions with 30 runs (syn-small, 100 steps;
``SCANSNAP_MAX_JOBS=2``, so most runs are queued first), each with a lecturer who publishes a run
and students who watch it live or visit the other pages.  After each round its clients are
closed, its runs end and the server sits idle for a few seconds; then its memory is recorded.

The students are websocket clients that speak Streamlit's own protocol (bench/st_client.py),
not browsers, so what is measured is the server.  The test stops by itself (each round has its
own ``time_limit_s``) and writes every figure to test-artifacts/load_test.json, pass or fail.  What it
asserts is behaviour (every page rendered, every run finished with all its steps, nothing lost, the job
cap held, every watcher saw the broadcast end, no traceback); the server's health latency and memory are
the benchmark's (``python -m bench.run_all load``, BENCHMARKS.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytestmark = pytest.mark.server
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ROUNDS = ((50, 20), (150, 30))
ROUND_SUMMARY = (
    "wall_s",
    "sessions_open_at_once",
    "pages_rendered",
    "runs_started",
    "runs_finished",
    "runs_queued_then_finished",
    "max_runs_training_at_once",
    "watchers_saw_finish",
    "watchers_checked",
    "bytes_per_client",
    "loadavg_start",
)


@pytest.mark.timeout(1800)
def test_lecture_hall_load_rounds():
    from bench.load_test import run_load

    # each round's time limit and a page's are guards for a busy machine, not claims
    res = run_load(rounds=ROUNDS, steps=100, wave=10, max_jobs=2, time_limit_s=600, page_timeout_s=180, settle_s=5)
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "load_test.json").write_text(json.dumps(res, indent=1))
    assert len(res["rounds"]) == len(ROUNDS), res.get("rounds")
    for r in res["rounds"]:
        summary = {k: r.get(k) for k in ROUND_SUMMARY}
        failed = [k for k, ok in r["checks"].items() if not ok]
        where = f"round {r['round']} ({r['sessions']} sessions, {r['runs']} runs)"
        assert not failed, (
            f"{where} failed {failed}: {summary}; problems {r['problems'][:5]}; server errors "
            f"{r.get('server_errors')} (every figure: test-artifacts/load_test.json)"
        )
        assert r["broadcast_live_while_all_open"], (where, summary)
    # two job slots for 20+ runs: the queue was used (in some round: whether runs overlap is up to the timing)
    assert sum(r["runs_queued_then_finished"] for r in res["rounds"]) > 0, res["rounds"]


def test_the_server_log_check_finds_plain_and_rich_tracebacks():
    """The load test's ``no_server_traceback`` check missed Streamlit's rich-drawn traceback (colour codes
    inside "Traceback (most recent call last)"): both forms are found, with the error's line."""
    from bench.load_test import tracebacks

    plain = 'Traceback (most recent call last):\n  File "/app/ui/shell.py", line 44, in main\nValueError: bad\n'
    rich = (
        "\x1b[31m──\x1b[0m \x1b[1;31mTraceback \x1b[0m\x1b[1;2;31m(most recent call last)\x1b[0m ──\n"
        "│ /app/\x1b[1mui/shell.py\x1b[0m:44 in main │\n"
        "SystemError: AST constructor recursion depth mismatch (before=42, after=70)\n"
    )
    [p] = tracebacks(plain)
    [r] = tracebacks("starting\n" + rich)
    assert 'shell.py", line 44' in p and p.endswith("ValueError: bad")
    assert "ui/shell.py:44 in main" in r and r.endswith("recursion depth mismatch (before=42, after=70)")
    assert tracebacks("a quiet log\n") == []
