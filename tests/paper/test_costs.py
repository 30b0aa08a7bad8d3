"""engine.paper.items.costs: the Reproduce page's estimate (measured seconds per item) and its progress
(estimated work done, not optimiser steps)."""

from __future__ import annotations

import pytest

from engine.paper.items.catalog import ITEMS, total_work
from engine.paper.items.costs import (
    MEASURED_S,
    REPORT_S,
    TEXT_FULL_S_PER_STEP,
    about,
    estimated_seconds,
    in_order_of,
    item_seconds,
    longest_first,
    progress,
)
from engine.service.job_state import REPRODUCE, JobStatus

ALL = list(ITEMS)


def test_every_item_has_its_seconds_and_an_unmeasured_one_its_steps_times_the_step():
    """Every item of the catalog has a measured quick figure; where a full figure is not measured (the
    real-text items, ~1.5 h), the estimate is its steps times TEXT_FULL_S_PER_STEP."""
    assert set(MEASURED_S) == set(ITEMS)
    for name in ALL:
        quick, full = MEASURED_S[name]
        assert item_seconds(name, True) == quick > 0
        assert item_seconds(name, False) == (
            full if full is not None else ITEMS[name].work(False) * TEXT_FULL_S_PER_STEP
        )


def test_the_estimate_is_the_items_seconds_and_the_report():
    for quick in (True, False):
        k = 0 if quick else 1
        assert estimated_seconds(ALL, quick) == pytest.approx(sum(item_seconds(n, quick) for n in ALL) + REPORT_S[k])
    assert estimated_seconds(["fig9"], True) == pytest.approx(MEASURED_S["fig9"][0] + REPORT_S[0])


def test_progress_is_the_estimated_work_done():
    """Items finished count their seconds, the current item the share of its steps taken; the report is
    the rest."""
    total = estimated_seconds(ALL, True)
    seconds = [item_seconds(n, True) for n in ALL]
    work = [ITEMS[n].work(True) for n in ALL]
    assert progress(ALL, True, 0, 0) == 0.0
    k = ALL.index("fig6")
    half = sum(work[:k]) + work[k] // 2
    assert progress(ALL, True, k, half) == pytest.approx(
        (sum(seconds[:k]) + seconds[k] * (work[k] // 2) / work[k]) / total
    )
    assert progress(ALL, True, len(ALL), sum(work)) == pytest.approx(1 - REPORT_S[0] / total)
    fig9 = ALL.index("fig9")  # no optimiser steps: counted once finished
    assert progress(ALL, True, fig9, sum(work[:fig9])) == progress(ALL, True, fig9, sum(work[: fig9 + 1]))


def test_a_reproductions_bar_follows_its_estimated_seconds_not_its_steps():
    """All eight quick items, the six synthetic ones done: the bar is at their share of the estimated
    seconds.  By optimiser steps (the bar before), it was far ahead: fig7 and joma-real take many more
    seconds per step than the synthetic items (the issue: 88 % after 20 s of 75)."""
    done = ALL.index("fig7")
    steps = sum(ITEMS[n].work(True) for n in ALL[:done])
    s = JobStatus("r", "running", steps, total_work(ALL, True), None, None, kind=REPRODUCE, items=tuple(ALL),
                  items_done=done, current="fig7", quick=True)  # fmt: skip
    by_seconds = sum(item_seconds(n, True) for n in ALL[:done]) / estimated_seconds(ALL, True)
    assert s.fraction == pytest.approx(by_seconds)
    assert abs(s.fraction - steps / s.total_steps) > 0.05  # the two measures do differ here


@pytest.mark.parametrize(("seconds", "said"), [(0.2, "about 1 s"), (75.4, "about 75 s"), (700, "about 12 min"),
                                               (5400, "about 1.5 h")])  # fmt: skip
def test_about(seconds, said):
    assert about(seconds) == said


def _wall_s(order: list[str], workers: int, quick: bool) -> float:
    """A pool of ``workers`` taking ``order``'s items one at a time, each to the first worker free: the
    wall seconds until the last ends (each item its estimated seconds)."""
    free_at = [0.0] * workers
    for name in order:
        free_at[free_at.index(min(free_at))] += item_seconds(name, quick)
    return max(free_at)


def test_longest_first_orders_by_the_estimate_and_ends_with_the_longest_item():
    """On two workers the quick reproduction handed out longest first ends when its longest item (Fig. 7)
    ends, the least any order can take; the catalog's order (the two longest last) takes longer."""
    order = longest_first(ALL, True)
    assert sorted(order) == sorted(ALL)
    seconds = [item_seconds(n, True) for n in order]
    assert seconds == sorted(seconds, reverse=True)
    assert _wall_s(order, 2, True) == pytest.approx(max(seconds))
    assert _wall_s(ALL, 2, True) > _wall_s(order, 2, True)


def test_results_come_back_in_the_order_asked():
    order = longest_first(ALL, True)
    assert in_order_of(ALL, order, [f"result of {n}" for n in order]) == [f"result of {n}" for n in ALL]
    with pytest.raises(ValueError):  # a result missing: not silently dropped
        in_order_of(ALL, order, ["one result"])
