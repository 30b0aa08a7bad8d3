"""What a reproduction costs, measured, and how far a running one has got (no torch here).

:data:`MEASURED_S` holds each item's wall seconds in quick and in full mode as the Reproduce page runs
it: the job manager's worker process, one torch thread, on this project's 2-core machine
(``bench/reproduce_page.py`` measures them: ``bench/results/reproduce_page.json``, BENCHMARKS.md
"Reproduce page"; copy its figures here when it is rerun).  The full
real-text items are not in that bench (they take about 1.5 hours): their seconds are their steps
times :data:`TEXT_FULL_S_PER_STEP`.  A running reproduction's progress is the estimated work done:
the seconds of the items finished plus the share of its steps that the current item has taken.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from scansnap.paper.items.catalog import ITEMS

T = TypeVar("T")

# item → (quick, full) wall seconds on the Reproduce page (bench/results/reproduce_page.json)
MEASURED_S: dict[str, tuple[float, float | None]] = {
    "fig4": (1.5, 1.5),
    "fig5": (0.6, 0.6),
    "fig6": (11.2, 40.4),
    "fig9": (0.3, 0.1),
    "theorems": (6.7, 65.3),
    "joma": (1.4, 0.8),
    "fig7": (42.3, None),  # None: not measured in full mode (TEXT_FULL_S_PER_STEP)
    "joma-real": (20.1, None),  # None: not measured in full mode (TEXT_FULL_S_PER_STEP)
}
REPORT_S = (0.6, 0.5)  # (quick, full): from the start of the job to its end, beyond its items: the report
# Full-size real-text steps: 160 ms (1 layer), 194 ms (3 layers), 204 ms (joma-real's 2 layers, Adam) of
# one core each, BENCHMARKS.md "Real text" (bench/text_speed.py); 0.2 s covers them.
TEXT_FULL_S_PER_STEP = 0.2


def item_seconds(name: str, quick: bool) -> float:
    """Estimated wall seconds of item ``name`` on the Reproduce page."""
    measured = MEASURED_S[name][0 if quick else 1]
    return measured if measured is not None else ITEMS[name].work(quick) * TEXT_FULL_S_PER_STEP


def longest_first(names: Sequence[str], quick: bool) -> list[str]:
    """``names`` by estimated seconds, longest first: the order to hand items to a pool of m workers (LPT:
    its wall time is at most 4/3 − 1/(3m) of the shortest possible; the catalog's order, which ends with the
    two longest, left one worker idle while the other trained them one after the other)."""
    return sorted(names, key=lambda n: -item_seconds(n, quick))


def in_order_of(names: Sequence[str], done: Sequence[str], results: Sequence[T]) -> list[T]:
    """``results`` (one per name of ``done``, names distinct) back in the order of ``names``."""
    by_name = dict(zip(done, results, strict=True))
    return [by_name[n] for n in names]


def estimated_seconds(names: Sequence[str], quick: bool, workers: int = 1) -> float:
    """Estimated wall seconds of a reproduction of ``names``, the report included, on ``workers`` processes
    that each take the next item, longest first (:func:`longest_first`, as ``reproduce`` hands them to its
    pool); one worker (the Reproduce page's) trains them one after the other.  The one estimate of a
    reproduction's time: the page, the command line and docs/reproduce.md all quote it."""
    free_at = [0.0] * max(1, workers)
    for name in longest_first(names, quick):
        free_at[free_at.index(min(free_at))] += item_seconds(name, quick)
    return max(free_at) + REPORT_S[0 if quick else 1]


def progress(names: Sequence[str], quick: bool, items_done: int, steps: int) -> float:
    """The share of a reproduction's estimated seconds done, in [0, 1], when ``items_done`` of its items
    have finished and its items have reported ``steps`` optimiser steps in all (an item without steps
    counts only once finished; after the last item the report is being written)."""
    seconds = [item_seconds(n, quick) for n in names]
    done = sum(seconds[:items_done])
    if items_done < len(names):
        before = sum(ITEMS[n].work(quick) for n in names[:items_done])
        work = ITEMS[names[items_done]].work(quick)
        if work > 0:
            done += seconds[items_done] * min(1.0, max(0.0, (steps - before) / work))
    return min(1.0, done / estimated_seconds(names, quick))


def about(seconds: float) -> str:
    """A duration as a person says it: "about 40 s", "about 12 min", "about 1.3 h"."""
    if seconds < 90:
        return f"about {max(1, round(seconds))} s"
    if seconds < 90 * 60:
        return f"about {round(seconds / 60)} min"
    return f"about {seconds / 3600:.1f} h"
