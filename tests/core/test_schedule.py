"""Tests of scansnap.core.schedule.snapshot_steps: ends kept, sorted/unique/in range, bounded count."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scansnap.core import schedule
from scansnap.core.config import SnapshotConfig
from scansnap.core.schedule import snapshot_steps


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
    # linear schedules up to 10**5 points (denser ones: test_dense_linear_schedule_never_materialises_the_step_range)
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
    assert len(s) <= cfg.max_count
    # log_count points spaced by a ratio r = 10^(6/(log_count−1)) ≈ 1.26: below 1/(r−1) ≈ 3.8 neighbours
    # round to the same integer, so only the first few merge; at least half must survive
    assert len(s) >= cfg.log_count // 2, "the log-spaced part must survive"
    assert s[1] == 1


def test_max_count_bounds_dense_linear():
    cfg = SnapshotConfig(linear_every=1, log_count=60, max_count=300)
    s = snapshot_steps(10**5, cfg)
    _check(s, 10**5, cfg)
    assert len(s) == 300
    # log-spaced steps are kept first: the first handful of steps are all there
    assert s[:5].tolist() == [0, 1, 2, 3, 4]


class _ArraySizeSpy:
    """numpy as scansnap.core.schedule sees it, recording the size of the largest array any call returns."""

    def __init__(self) -> None:
        self.largest = 0

    def __getattr__(self, name: str) -> object:
        attr = getattr(np, name)
        if not callable(attr) or isinstance(attr, type):
            return attr

        def call(*args: object, **kwargs: object) -> object:
            out = attr(*args, **kwargs)
            if isinstance(out, np.ndarray):
                self.largest = max(self.largest, out.size)
            return out

        return call


def test_dense_linear_schedule_never_materialises_the_step_range(monkeypatch):
    """A legal config (10**7 steps, a snapshot every step) must not build and sort the whole linear range
    before training starts: at most max_count steps survive, so no intermediate array needs more than a
    few times max_count + log_count entries, whatever the number of steps."""
    spy = _ArraySizeSpy()
    monkeypatch.setattr(schedule, "np", spy)
    cfg = SnapshotConfig(linear_every=1, log_count=60, max_count=300)
    steps = 10**7  # the largest optim.steps a config allows
    s = snapshot_steps(steps, cfg)
    monkeypatch.undo()
    _check(s, steps, cfg)
    assert len(s) == cfg.max_count
    assert 0 < spy.largest <= 10 * (cfg.max_count + cfg.log_count), f"an array of {spy.largest} entries"


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
    from scansnap.core.schedule import FULL_SNAPSHOT_FLOATS, TOPK, full_snapshots, topk_note

    # syn-medium-10 (science §1.3): 16 (η_Y, η_Z) pairs × 10 seeds, Q = num_last = 10 queries, K = 2Q classes,
    # M = M_ctx = 10 common + 10·K distinct contextual tokens (the snapshot's z rows and c_n span them)
    Q = 10
    R, K = 16 * 10, 2 * Q
    M = 10 + 10 * K
    assert full_snapshots(1, Q, K, M) and not full_snapshots(R, Q, K, M)
    half = FULL_SNAPSHOT_FLOATS // 2  # R·(Q+K)·M = 2M with R = Q = K = 1
    assert full_snapshots(1, 1, 1, half) and not full_snapshots(1, 1, 1, half + 1)
    note = topk_note(R, Q, K, M)
    assert f"{R * (Q + K) * M:,}" in note and f"{FULL_SNAPSHOT_FLOATS:,}" in note and f"top-{TOPK}" in note


def test_a_long_run_keeps_the_short_runs_start_and_spaces_the_rest_by_log():
    """Syn-Small's schedule (a snapshot every 2 steps) at 20,000 steps: its first half is the 100-step run's
    every-2-steps start (where the scan and the snap happen), the rest log-spaced to the end; before, the
    300 snapshots were spread evenly (every ~67 steps), and the snap measured moved from step ~34 to 150."""
    cfg = SnapshotConfig(linear_every=2, log_count=0, max_count=300)
    long, short = snapshot_steps(20_000, cfg), snapshot_steps(100, cfg)
    _check(long, 20_000, cfg)
    assert long[: len(short) - 1].tolist() == short[:-1].tolist()  # 0, 2, …, 98 as in the short run
    assert long[:150].tolist() == list(range(0, 300, 2))
    ratios = long[151:] / long[150:-1]
    assert len(long) == 300 and np.allclose(ratios, ratios.mean(), rtol=0.2)  # log-spaced after the start


@pytest.mark.e2e  # a 20,000-step run trained and stored whole
def test_the_snap_of_a_long_run_is_the_short_runs(tmp_path, one_torch_thread):
    """The snap measured on a 20,000-step Syn-Small run lies within 10 % of the 100-step run's (same
    preset, same seed): the schedule keeps the dynamics of a long run."""
    from scansnap.kinds.synthetic.paper.claims import measured_snap
    from scansnap.kinds.synthetic.paper.observe import observed
    from scansnap.paper.history import RunHistory
    from scansnap.paper.presets import get_preset
    from scansnap.service.runner import RunJob
    from scansnap.service.store import RunStore

    snaps = {}
    with RunStore(tmp_path) as store:
        for steps in (100, 20_000):
            cfg = get_preset("syn-small").config.with_overrides({"optim.steps": steps})
            job = RunJob(cfg, store)
            assert job.run() == "finished"
            hist = RunHistory(job.run_id)
            hist.update(store)
            snaps[steps] = measured_snap(observed(hist, store.statics(job.run_id), 0, cfg))
    assert snaps[100] is not None and snaps[20_000] is not None
    assert abs(snaps[20_000] - snaps[100]) <= 0.1 * snaps[100], snaps
