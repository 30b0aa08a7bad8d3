"""A real-text run's snapshot schedule (scansnap/kinds/text/science/schedule.py): its quarter points, within its cap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.schedule import schedule
from scansnap.service.store import MAX_SNAPSHOTS_PER_RUN


def _cfg(steps: int, every: int | None, cap: int) -> TextRunConfig:
    return TextRunConfig().with_overrides(
        {"optim.steps": steps, "snapshots.linear_every": every, "snapshots.max_count": cap}
    )


def test_the_quarter_points_do_not_push_a_full_schedule_past_the_stores_cap():
    """The finding: 100,000 steps with a snapshot every 50 is 2,001 linear steps, thinned to 2,000; the
    quarter points 25,000 / 50,000 / 75,000 were added after that and the run failed at its 2,001st."""
    steps = schedule(_cfg(100_000, 50, MAX_SNAPSHOTS_PER_RUN))
    assert len(steps) <= MAX_SNAPSHOTS_PER_RUN
    assert {0, 25_000, 50_000, 75_000, 100_000} <= set(steps.tolist())


@settings(max_examples=200, deadline=None)
@given(steps=st.integers(1, 10**6), every=st.one_of(st.none(), st.integers(1, 5000)), cap=st.integers(5, 2000))
def test_every_schedule_keeps_its_quarters_within_its_cap(steps, every, cap):
    out = schedule(_cfg(steps, every, cap))
    quarters = np.round(np.array([0, 0.25, 0.5, 0.75, 1.0]) * steps).astype(np.int64)
    assert len(out) <= cap
    assert set(quarters.tolist()) <= set(out.tolist())
    assert np.all(np.diff(out) > 0)


def test_a_cap_too_small_for_the_quarters_is_refused_with_the_range():
    with pytest.raises(ConfigError, match=r"snapshots.max_count = 4: .* set 5 to 2000"):
        _cfg(1000, None, 4)
