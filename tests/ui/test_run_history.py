"""One history per run for every session showing it (scansnap/ui/live/run_data.py: ``run_history``): a hall
watching a run reads each new snapshot from the store once, not once per student."""

from __future__ import annotations

import gc
import threading
import time
from collections import Counter

import numpy as np
import pandas as pd
import pytest

from scansnap.paper.history import RunHistory
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.ui.live import run_data
from tests.guards import GUARD_S


class _Growing:
    """The run store as a page sees it while the run trains: only the steps up to ``upto`` are stored
    yet.  Counts the snapshots read (``reads[step]``); ``steps`` waits ``delay`` s (a busy server), and
    for a run in ``gates`` until its gate opens."""

    def __init__(self, store: RunStore, upto: int, delay: float = 0.0):
        self.store, self.upto, self.delay, self.reads = store, upto, delay, Counter()
        self.gates: dict[str, threading.Event] = {}

    def steps(self, rid):
        time.sleep(self.delay)
        if rid in self.gates:
            assert self.gates[rid].wait(2 * GUARD_S), "the gate never opened"  # outlasts the test's joins
        return [s for s in self.store.steps(rid) if s <= self.upto]

    def snapshot(self, rid, step):
        self.reads[step] += 1
        return self.store.snapshot(rid, step)

    def scalars(self, rid, since_step=None):
        rows = self.store.scalars(rid, since_step=since_step)
        return rows[rows["step"] <= self.upto]


class _Service:
    def __init__(self, stored: _Growing):
        self.stored = stored


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The lecture preset's first 20 steps, stored (snapshots every 2 steps)."""
    store = RunStore(tmp_path_factory.mktemp("history"))
    job = RunJob(get_preset("lecture").config.with_overrides({"optim.steps": 20}), store)
    assert job.run() == "finished"
    yield store, job.run_id
    store.close()


@pytest.fixture
def growing(run, monkeypatch):
    """The run stored up to its fourth snapshot, seen through ``run_history``'s service; no history of it
    kept from another test."""
    store, rid = run
    grow = _Growing(store, store.steps(rid)[3])
    monkeypatch.setattr(run_data, "service", lambda: _Service(grow))
    run_data._HISTORIES.pop(rid, None)
    return grow, rid


def _same(a: RunHistory, b: RunHistory) -> None:
    assert a.steps == b.steps and a.topk == b.topk
    for x, y in zip(a.z + a.c, b.z + b.c, strict=True):
        assert np.array_equal(x, y)
    pd.testing.assert_frame_equal(a.scalars.reset_index(drop=True), b.scalars.reset_index(drop=True))


def test_sessions_share_one_history_read_once_per_snapshot(growing):
    """Five sessions at the same stored step get one object, each snapshot read once; the run stores more:
    the first session to see it reads only the new snapshots into a new object (the old one, which other
    sessions may be drawing from, stays as it was), and the rest get that object without a read.  Both
    equal a history read from scratch."""
    grow, rid = growing
    first = grow.steps(rid)
    seen = [run_data.run_history(rid, first[-1]) for _ in range(5)]
    assert all(h is seen[0] for h in seen) and seen[0].steps == first
    assert grow.reads == Counter(first)  # each stored snapshot once, not once per session

    grow.upto = grow.store.steps(rid)[-1]  # the run stores the rest of its snapshots
    now = grow.steps(rid)
    later = [run_data.run_history(rid, now[-1]) for _ in range(5)]
    assert all(h is later[0] for h in later) and later[0] is not seen[0]
    assert grow.reads == Counter(now)  # the new ones once; the old ones not again
    assert seen[0].steps == first and len(seen[0].z) == len(first)  # what a session still draws is unchanged
    fresh = RunHistory(rid)
    fresh.update(grow.store)
    _same(later[0], fresh)
    old = RunHistory(rid)
    old.update(_Growing(grow.store, first[-1]))
    _same(seen[0], old)


def test_a_step_the_page_does_not_know_reads_and_nothing_new_keeps_the_object(growing):
    """Without the run's stored step (None: not read yet) the store is asked, and with nothing new the
    shared object stays the same (no copy per tick)."""
    grow, rid = growing
    h = run_data.run_history(rid, None)
    assert run_data.run_history(rid, None) is h and run_data.run_history(rid, h.last_step) is h
    assert grow.reads == Counter(h.steps)


def test_sessions_arriving_together_read_each_snapshot_once(growing):
    """Eight sessions ask at once while the store is slow to answer: one reads, the others wait for it
    and get its history (none reads the same snapshots again)."""
    grow, rid = growing
    grow.delay = 0.05
    step = grow.steps(rid)[-1]
    got: list[RunHistory] = []
    threads = [threading.Thread(target=lambda: got.append(run_data.run_history(rid, step))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(GUARD_S)
    assert len(got) == 8 and all(h is got[0] for h in got)
    assert grow.reads == Counter(got[0].steps)


def test_a_slow_read_of_one_run_holds_up_no_other_run(run, growing):
    """While one session's read of a run is stuck (a big stored run being opened), another run's
    watchers still get its history; the stuck one finishes when its read does."""
    grow, rid = growing
    store, _ = run
    other = RunJob(get_preset("lecture").config.with_overrides({"optim.steps": 4}), store)
    assert other.run() == "finished"
    grow.gates[rid] = threading.Event()
    stuck: list[RunHistory] = []
    reader = threading.Thread(target=lambda: stuck.append(run_data.run_history(rid, None)))
    reader.start()
    watcher = threading.Thread(target=run_data.run_history, args=(other.run_id, None))
    watcher.start()
    watcher.join(GUARD_S)
    done_while_stuck = not watcher.is_alive()
    grow.gates[rid].set()
    reader.join(GUARD_S)
    assert done_while_stuck, "a read of another run waited for the stuck one"
    assert stuck and stuck[0].steps == grow.steps(rid)


def test_a_history_no_session_holds_is_let_go(growing):
    """The shared histories hold no memory of their own: once no session keeps a run's history (in its
    session state), it is gone."""
    _, rid = growing
    h = run_data.run_history(rid, None)
    assert run_data._HISTORIES.get(rid) is h
    del h
    gc.collect()
    assert rid not in run_data._HISTORIES
