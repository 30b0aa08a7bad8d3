"""scansnap.paper.items.costs: the Reproduce page's estimate (measured seconds per item) and its progress
(estimated work done, not optimiser steps)."""

from __future__ import annotations

from pathlib import Path

import pytest

from scansnap.paper.items.catalog import ITEMS, total_work
from scansnap.paper.items.costs import (
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
from scansnap.service.job_state import REPRODUCE, JobStatus

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
    s = JobStatus(
        "r",
        "running",
        steps,
        total_work(ALL, True),
        None,
        None,
        kind=REPRODUCE,
        items=tuple(ALL),
        items_done=done,
        current="fig7",
        quick=True,
    )
    by_seconds = sum(item_seconds(n, True) for n in ALL[:done]) / estimated_seconds(ALL, True)
    assert s.fraction == pytest.approx(by_seconds)
    assert abs(s.fraction - steps / s.total_steps) > 0.05  # the two measures do differ here


@pytest.mark.parametrize(
    ("seconds", "said"), [(0.2, "about 1 s"), (75.4, "about 75 s"), (700, "about 12 min"), (5400, "about 1.5 h")]
)
def test_about(seconds, said):
    assert about(seconds) == said


def test_longest_first_orders_by_the_estimate():
    order = longest_first(ALL, True)
    assert sorted(order) == sorted(ALL)
    seconds = [item_seconds(n, True) for n in order]
    assert seconds == sorted(seconds, reverse=True)


@pytest.mark.parametrize("quick", [True, False])
def test_on_several_workers_the_estimate_is_the_longest_first_schedule(quick):
    """One worker: the items one after the other.  Two or more: each worker takes the next item, longest
    first (Graham's LPT): it ends when the busiest worker ends, never before the longest item nor half the
    total, and within 4/3 − 1/(3·2) of that; as many workers as items: the longest item (and the report)."""
    report = REPORT_S[0 if quick else 1]
    seconds = sorted((item_seconds(n, quick) for n in ALL), reverse=True)
    assert estimated_seconds(ALL, quick, 1) == pytest.approx(sum(seconds) + report)
    two = estimated_seconds(ALL, quick, 2)
    assert max(seconds[0], sum(seconds) / 2) + report <= two + 1e-9 < sum(seconds) + report
    least = max(seconds[0], sum(seconds) / 2)  # no schedule on two workers ends sooner
    assert two - report <= (4 / 3 - 1 / 6) * least + 1e-9  # longest first is within Graham's bound of it
    assert estimated_seconds(ALL, quick, len(ALL)) == pytest.approx(seconds[0] + report)


def test_results_come_back_in_the_order_asked():
    order = longest_first(ALL, True)
    assert in_order_of(ALL, order, [f"result of {n}" for n in order]) == [f"result of {n}" for n in ALL]
    with pytest.raises(ValueError):  # a result missing: not silently dropped
        in_order_of(ALL, order, ["one result"])


def test_the_readme_and_benchmarks_quote_the_one_estimate():
    """docs/reproduce.md and BENCHMARKS.md state a reproduction's time as the estimate computes it (the README
    said "a few minutes" of a reproduction the page estimated at 10.3 h)."""
    root = Path(__file__).resolve().parents[2]
    files = ("docs/reproduce.md", "BENCHMARKS.md")
    readme, bench = (" ".join((root / n).read_text(encoding="utf-8").split()) for n in files)
    quick2, full1, full2 = (about(estimated_seconds(ALL, q, w)) for q, w in ((True, 2), (False, 1), (False, 2)))
    assert f"{quick2} on 2 cores" in readme and f"{full2} on 2 cores" in readme and full1 in readme
    assert f"{full1} on the page's one worker" in bench and f"{full2} on 2 cores" in bench
