"""Tests of engine.core.schedule.snapshot_steps: ends kept, sorted/unique/in range, bounded count."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.core.config import SnapshotConfig
from engine.core.schedule import snapshot_steps


def _check(s: np.ndarray, steps: int, cfg: SnapshotConfig) -> None:
    assert s.dtype == np.int64
    assert s.ndim == 1
    assert s[0] == 0 and s[-1] == steps
    assert np.all(np.diff(s) > 0), "steps must be strictly increasing (sorted, unique)"
    assert s.min() >= 0 and s.max() <= steps
    assert len(s) <= cfg.max_count


@st.composite
def _cases(draw):
    steps = draw(st.one_of(st.integers(0, 300), st.integers(0, 10**7)))
    # linear schedules up to 10**5 points (denser ones are covered by the timing test below)
    linear_every = draw(
        st.one_of(
            st.none(),
            st.integers(max(1, steps // 10**5), max(1, steps, steps // 10**5)),
            st.integers(max(1, steps // 10**5), max(1, steps // 10**5) + 50),
        )
    )
    cfg = SnapshotConfig(
        linear_every=linear_every, log_count=draw(st.integers(0, 2000)), max_count=draw(st.integers(2, 2000))
    )
    return steps, cfg


@settings(max_examples=300, deadline=None)
@given(_cases())
def test_schedule_properties(case):
    steps, cfg = case
    _check(snapshot_steps(steps, cfg), steps, cfg)


@settings(max_examples=100, deadline=None)
@given(steps=st.integers(1, 5000), linear_every=st.integers(1, 100))
def test_linear_steps_kept_when_room(steps, linear_every):
    """With no log-spaced steps and room enough, every multiple of linear_every is a snapshot."""
    cfg = SnapshotConfig(linear_every=linear_every, log_count=0, max_count=2000)
    s = snapshot_steps(steps, cfg)
    lin = np.arange(0, steps + 1, linear_every)
    if len(lin) + 1 <= cfg.max_count:
        assert set(lin) <= set(s.tolist())
        assert set(s.tolist()) == set(lin.tolist()) | {steps}


def test_defaults_million_steps():
    cfg = SnapshotConfig()
    s = snapshot_steps(10**6, cfg)
    _check(s, 10**6, cfg)
    assert len(s) <= 300
    assert len(s) >= 30, "the log-spaced part must survive"
    assert s[1] == 1


def test_max_count_bounds_dense_linear():
    cfg = SnapshotConfig(linear_every=1, log_count=60, max_count=300)
    s = snapshot_steps(10**5, cfg)
    _check(s, 10**5, cfg)
    assert len(s) == 300
    # log-spaced steps are kept first: the first handful of steps are all there
    assert s[:5].tolist() == [0, 1, 2, 3, 4]


def test_dense_linear_schedule_is_fast():
    """A legal config (10**6 steps, a snapshot every step) must not cost seconds before training starts:
    at most max_count steps survive, so the full linear range should never be materialised and sorted."""
    cfg = SnapshotConfig(linear_every=1, log_count=60, max_count=300)
    t0 = time.perf_counter()
    s = snapshot_steps(10**6, cfg)
    elapsed = time.perf_counter() - t0
    _check(s, 10**6, cfg)
    assert len(s) == 300
    assert elapsed < 0.5, f"snapshot_steps(10**6, linear_every=1) took {elapsed:.2f} s"


def test_paper_save_per_minibatch_2():
    cfg = SnapshotConfig(linear_every=2, log_count=0, max_count=300)
    assert snapshot_steps(100, cfg).tolist() == list(range(0, 101, 2))


def test_linear_every_2_with_log_steps_keeps_every_even_step():
    cfg = SnapshotConfig(linear_every=2)  # default log_count = 60
    s = snapshot_steps(100, cfg)
    assert set(range(0, 101, 2)) <= set(s.tolist())
    _check(s, 100, cfg)


@pytest.mark.parametrize(
    "cfg",
    [
        SnapshotConfig(),
        SnapshotConfig(linear_every=2, log_count=0),
        SnapshotConfig(linear_every=1, log_count=2000, max_count=2),
    ],
)
def test_zero_steps(cfg):
    assert snapshot_steps(0, cfg).tolist() == [0]


def test_odd_last_step_included():
    cfg = SnapshotConfig(linear_every=2, log_count=0)
    assert snapshot_steps(7, cfg).tolist() == [0, 2, 4, 6, 7]


def test_max_count_two_keeps_only_the_ends():
    cfg = SnapshotConfig(linear_every=1, log_count=100, max_count=2)
    assert snapshot_steps(1000, cfg).tolist() == [0, 1000]


def test_full_snapshots_bound_and_its_message():
    """The per-run size bound: full z and c_n while R·(Q+K)·M ≤ 1,000,000 floats, else top-k;
    the Lab's message states the numbers (syn-medium-10's 160 replicas are just over)."""
    from engine.core.schedule import FULL_SNAPSHOT_FLOATS, full_snapshots, topk_note

    assert full_snapshots(1, 10, 20, 210) and not full_snapshots(160, 10, 20, 210)
    assert full_snapshots(1, 1, 1, FULL_SNAPSHOT_FLOATS // 2) and not full_snapshots(1, 1, 1, FULL_SNAPSHOT_FLOATS)
    note = topk_note(160, 10, 20, 210)
    assert "1,008,000" in note and "1,000,000" in note and "top-32" in note
