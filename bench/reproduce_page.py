"""Seconds per reproduce item as the Reproduce page runs them: what the page's estimate is made of.

The page starts a reproduction through the job manager, in a worker process with one torch thread
(``scansnap/service/worker.py``); ``bench/reproduce_speed.py`` times the command line instead (its own
interpreter, torch's default threads).  This starts quick mode (all eight items) and full mode (the six
synthetic items; the real-text ones take about 1.5 hours) the page's way, times each from start to
``finished`` (the report included) and takes each item's seconds from the stored ``verdicts.json``.
A warm-up reproduction of ``fig9`` starts the worker's fork server first, as on a running server.
``scansnap/paper/items/costs.py`` holds these figures (``tests/paper/test_costs.py`` checks they match).

    PYTHONPATH=. .venv/bin/python -m bench.reproduce_page

Prints JSON.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from scansnap.paper.items.catalog import ITEMS
from scansnap.service.jobs import JobManager
from scansnap.service.store import RunStore


def on_page(quick: bool) -> dict[str, Any]:
    """One reproduction started as the Reproduce page starts it; its item seconds and the rest."""
    names = list(ITEMS) if quick else [n for n, spec in ITEMS.items() if not spec.corpus]
    with tempfile.TemporaryDirectory(prefix="repro-page-") as data:
        jobs = JobManager(RunStore(data), max_concurrent=1)
        try:
            jobs.wait(jobs.start_reproduction(["fig9"], quick=True))  # the fork server is up, as on a server
            t0 = time.monotonic()
            rid = jobs.start_reproduction(names, quick)
            status = jobs.wait(rid)
            wall = time.monotonic() - t0
            doc = json.loads((Path(data) / "reproductions" / rid / "verdicts.json").read_text())
        finally:
            jobs.shutdown()
    items = {i["name"]: i["wall_s"] for i in doc["items"]}
    return {
        "mode": "quick" if quick else "full",
        "status": status,
        "wall_s": round(wall, 1),
        "items_s": items,
        "report_s": round(wall - sum(items.values()), 2),  # the job's start and end, the report written
        "verdicts": doc["n_verdicts"],
        "failed": doc["n_failed"],
    }


def main() -> dict[str, Any]:
    load_before = os.getloadavg()
    res = {"runs": [on_page(quick=True), on_page(quick=False)], "load_before": load_before}
    res["load_after"] = os.getloadavg()
    print(json.dumps(res, indent=1))
    return res


if __name__ == "__main__":  # workers import this module as __mp_main__: nothing may run then
    main()
