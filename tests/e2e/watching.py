"""The dashboard as the browser tests that watch runs train start it: a live page refreshes every
second (``SCANSNAP_TICK_S=1``), not at the default 0.5 s.

Why: a page redrawing a live run's seven charts keeps about one core of Chromium busy at the default
refresh (~0.45 CPU-s a tick, measured with a CPU sampler per process), half of this 2-core machine, and
what these tests check (controls, layouts, links, resume, names) does not depend on the refresh.  The
hall tests (tests/e2e/test_hall.py) and the load test (tests/e2e/test_load.py) run the default refresh:
what a default deployment does."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.webserver import Server, serve

TICK_S = "1"


@contextmanager
def serve_watched(data_dir: str | Path, log_path: str | Path, **env: str) -> Iterator[Server]:
    """:func:`bench.webserver.serve` with the browser tests' refresh (and ``env``)."""
    with serve(data_dir, log_path, env={"SCANSNAP_TICK_S": TICK_S, **env}) as srv:
        yield srv
