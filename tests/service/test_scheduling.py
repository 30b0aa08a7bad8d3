"""The scheduler: slots bound the runs that compute, not the runs that exist.

A paused run gives its slot back (and, after ``park_after_s``, its worker: it resumes from a checkpoint
bit for bit); a throttled run computing a sliver of a core holds none; a run no page shows pauses
itself; a queued run says what it waits for; a command-line run killed by a signal is marked
``interrupted`` by the live server.  Waits have generous deadlines and no assertion is on elapsed
time, except the observation windows in which something must *not* happen.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from scansnap.kinds.synthetic.service.budget import STEP_OVERHEAD_S
from scansnap.service.control import LIGHT_DUTY, RunControl, is_light
from scansnap.service.job_state import REPRODUCE, TRAIN, Job
from scansnap.service.jobs import JobManager
from scansnap.service.limits import Limits
from scansnap.service.scheduling import expected_wait, queue_sentence
from scansnap.service.store import RunStore
from tests.service.test_jobs import DEADLINE, _cfg, _step, _wait_for, _wait_status

ROOT = Path(__file__).resolve().parents[2]


# ---------------------------------------------------------------------------- the rules, pure
def test_a_run_is_light_when_its_cap_times_its_step_time_is_under_the_light_duty():
    assert is_light(20, 0.7e-3)  # the lecture preset: 20 steps/s × 0.7 ms = 1.4 % of a core
    assert not is_light(None, 1e-3), "an unthrottled run computes all the time"
    assert not is_light(20, None), "an unmeasured run is not assumed light"
    step_s = LIGHT_DUTY / 100  # at 100 steps/s exactly LIGHT_DUTY of a core
    assert is_light(99, step_s) and not is_light(101, step_s)
    assert is_light(150, step_s, light_now=True), "a light run stays light up to twice the duty"
    assert not is_light(201, step_s, light_now=True)


@pytest.mark.parametrize(
    ("slots", "busy", "ahead", "wait"),
    [
        (2, [], [], 0.0),  # both free
        (2, [30.0], [], 0.0),  # one free
        (2, [30.0, 50.0], [], 30.0),  # the first to free up
        (2, [30.0, 50.0], [100.0], 50.0),  # the run ahead takes the slot free at 30; ours the one at 50
        (2, [30.0, 50.0], [10.0, 100.0], 50.0),  # first ahead 30 → 40, second 40 → 140: ours gets the one at 50
        (2, [30.0, 50.0], [10.0, 5.0], 45.0),  # first ahead 30 → 40, second 40 → 45: ours at 45
        (1, [10.0], [5.0, 5.0], 20.0),  # one slot: everything in a row
    ],
)
def test_the_expected_wait_takes_the_first_slot_that_frees(slots, busy, ahead, wait):
    assert expected_wait(slots, busy, ahead) == pytest.approx(wait)


def test_the_queue_sentence_says_position_slots_and_wait():
    s = queue_sentence(2, 2, 2, 65.0)
    assert s == "Waiting for a training slot: 2 runs ahead of you; slots: 2, both training; starts in about 2 min"
    assert "next in line; slots: 1, training; starts in about 10 s" in queue_sentence(0, 1, 1, 9.0)
    assert "1 run ahead of you; slots: 4, all training" in queue_sentence(1, 4, 4, 0)


@pytest.mark.parametrize("wait", [0.0, 4.9, 5.0, 5.1, 54.0, 56.0, 59.0, 60.0, 61.0, 89.0, 3540.0, 3541.0, 9000.0])
def test_the_stated_wait_is_never_shorter_than_the_estimate(wait):
    """The sentence rounds up: a visitor told "about 1 min" for an 89 s wait waited longer than told."""
    m = re.search(r"starts in about ([\d.]+) (s|min|h)$", queue_sentence(0, 1, 1, wait))
    assert m, queue_sentence(0, 1, 1, wait)
    stated = float(m.group(1)) * {"s": 1, "min": 60, "h": 3600}[m.group(2)]
    assert wait <= stated < wait + 361, (wait, m.group(0))


# ---------------------------------------------------------------------------- the manager
def _manager(tmp_path: Path, **limits: float) -> tuple[JobManager, RunStore]:
    store = RunStore(tmp_path)
    return JobManager(store, max_concurrent=1, limits=Limits(**limits)), store


@pytest.fixture
def sched(tmp_path):
    made: list[JobManager] = []

    def make(**limits: float) -> tuple[JobManager, RunStore]:
        m, store = _manager(tmp_path, **limits)
        made.append(m)
        return m, store

    yield make
    for m in made:
        m.shutdown()


def test_a_paused_run_gives_its_slot_back(sched):
    m, _ = sched()
    a = m.submit(_cfg(10**6))
    _wait_for(lambda: _step(m, a) > 0, "the first run to train")
    b = m.submit(_cfg(40))
    assert m.status(b).status == "queued" and m.schedule().holders[0].run_id == a
    m.pause(a)
    assert m.wait(b, timeout=DEADLINE) == "finished", "the paused run's slot went to the queued one"
    assert m.status(a).status == "paused" and not m.status(a).slot
    m.resume(a)  # the slot is free again: it trains on
    s0 = _step(m, a)
    _wait_for(lambda: _step(m, a) > s0, "the resumed run to train")
    assert m.schedule().holders[0].run_id == a


def _snapshots(store: RunStore, rid: str) -> dict[int, dict[str, np.ndarray]]:
    return {s: store.snapshot(rid, s) for s in store.steps(rid)}


def test_a_parked_run_resumes_bit_for_bit(sched):
    """Paused past ``park_after_s``, the worker stores a checkpoint between two snapshots and ends; the
    resumed run writes exactly the snapshots and scalars of a run that was never paused."""
    m, store = sched(park_after_s=0.2)
    cfg = _cfg(60, **{"snapshots.linear_every": 7})  # snapshots at 0, 7, 14, …: step 23 is between two
    a = m.submit(cfg, paused=True)
    m.step(a, 23)
    _wait_for(lambda: _step(m, a) == 23, "23 granted steps")
    _wait_for(lambda: not m.worker_pids(), "the paused worker to park")
    assert store.checkpoint(a)[0] == 23 and store.get_run(a)["status"] == "paused"
    assert m.is_live(a) and m.status(a).status == "paused"
    m.resume(a)
    assert m.wait(a, timeout=DEADLINE) == "finished"
    b = m.submit(cfg)
    assert m.wait(b, timeout=DEADLINE) == "finished"
    sa, sb = _snapshots(store, a), _snapshots(store, b)
    assert sa.keys() == sb.keys() and len(sa) > 3
    for step in sa:
        for key in sa[step]:
            np.testing.assert_array_equal(sa[step][key], sb[step][key], err_msg=f"{key} at step {step}")
    fa, fb = store.scalars(a), store.scalars(b)
    assert len(fa) == len(fb)
    np.testing.assert_array_equal(fa["value"].to_numpy(), fb["value"].to_numpy())


def test_a_parked_run_stopped_says_the_step_its_row_shows(sched):
    """Parked at step 23, between the snapshots at 21 and 28, then stopped (no worker ends it): its message,
    its job's step and its stored ``last_step`` all say 21, as a run stopped by its worker does."""
    m, store = sched(park_after_s=0.2)
    a = m.submit(_cfg(60, **{"snapshots.linear_every": 7}), paused=True)
    m.step(a, 23)
    _wait_for(lambda: _step(m, a) == 23, "23 granted steps")
    _wait_for(lambda: not m.worker_pids(), "the paused worker to park")
    m.stop(a)
    run = store.get_run(a)
    assert run["status"] == "stopped" and run["last_step"] == 21 == store.steps(a)[-1]
    assert run["message"] == "stopped at step 21" and m.status(a).step == 21


def test_a_running_run_says_its_time_left_at_its_own_pace():
    """Left = steps still to take × seconds per step since it got its slot (after a second of
    training), at its throttle while it runs light, else the estimate; nothing when not running."""
    j = Job("r", TRAIN, 1000, 0, None, (), seconds=50.0)
    j.control = RunControl()  # in-process: no worker here
    assert j.time_left() is None  # queued
    j.status, j.slot = "running", True
    assert j.time_left() == pytest.approx(50.0)  # not a second of pace yet: the estimate, all of it left
    j.granted = (time.monotonic() - 10.0, 0)
    j.control.report_step(200)  # 200 steps in 10 s: 20 steps/s, 800 steps to go
    assert j.time_left() == pytest.approx(800 / 20, rel=0.01)
    j.slot, j.light = False, True
    j.control.max_steps_per_s = 4.0
    assert j.time_left() == pytest.approx(800 / 4)  # light: at its throttle
    j.status = "paused"
    assert j.time_left() is None
    r = Job("q", REPRODUCE, 1000, 0, None, ((), True))
    r.status = "running"
    assert r.time_left() is None  # a reproduction says its own (scansnap.paper.items.costs)


def test_a_throttled_run_that_needs_a_sliver_of_a_core_holds_no_slot(sched):
    m, _ = sched()
    slow = m.submit(_cfg(10**6), paused=True)
    m.set_speed(slow, 2.0)  # 2 steps/s of a few ms each: far under LIGHT_DUTY
    m.resume(slow)
    assert m.queued_seconds() >= 10**6 * STEP_OVERHEAD_S, (
        "light or not, its work counts in the queue (a visitor's speed slider)"
    )
    _wait_for(lambda: m.status(slow).light, "the throttled run to run light")
    assert m.schedule().holders == () and [s.run_id for s in m.schedule().light] == [slow]
    b = m.submit(_cfg(40))
    assert m.wait(b, timeout=DEADLINE) == "finished", "the only slot was free for another run"
    s0 = _step(m, slow)
    _wait_for(lambda: _step(m, slow) > s0, "the light run to go on")
    m.set_speed(slow, None)  # at full speed it needs the slot again
    _wait_for(lambda: m.status(slow).slot, "the unthrottled run to take the slot")
    left = 10**6 - _step(m, slow)
    assert m.queued_seconds() >= left * STEP_OVERHEAD_S, "at full speed its steps count in the queue"


def test_light_runs_past_their_bound_wait_for_a_slot(sched):
    m, _ = sched()
    m.scheduler.max_light = 1
    runs = [m.submit(_cfg(10**6), paused=True) for _ in range(2)]
    for rid in runs:
        m.set_speed(rid, 2.0)
        m.resume(rid)
    _wait_for(lambda: len(m.schedule().light) == 1 and len(m.schedule().holders) == 1, "one light run, one in the slot")


def test_a_run_nobody_watches_pauses_itself_and_frees_its_slot(sched):
    m, store = sched(idle_pause_s=1.5)
    watched, unwatched = m.submit(_cfg(10**6)), m.submit(_cfg(10**6))
    deadline = time.monotonic() + DEADLINE
    while m.status(unwatched).status != "paused" and time.monotonic() < deadline:
        m.watch(watched)  # a page showing the run
        time.sleep(0.2)
    s = m.status(unwatched)
    assert s.status == "paused" and "nobody had this run open" in s.message, s
    _wait_for(lambda: m.status(watched).slot, "the watched run to take the freed slot")
    _wait_for(lambda: "nobody had this run open" in (store.get_run(unwatched)["message"] or ""), "the stored note")
    t0 = time.monotonic()
    while time.monotonic() - t0 < 3.0:  # observation window, twice the idle limit: the watched run trains on
        m.watch(watched)
        assert m.status(watched).status in ("running", "queued"), m.status(watched)
        time.sleep(0.2)
    m.resume(unwatched)  # resuming counts as being watched: it queues for the slot
    assert m.status(unwatched).status == "queued" and m.status(unwatched).waiting


def test_a_queued_run_says_what_it_waits_for(sched):
    m, _ = sched()
    a = m.submit(_cfg(10**6))
    _wait_for(lambda: _step(m, a) > 0, "the first run to train")
    b, c = m.submit(_cfg(40)), m.submit(_cfg(40))
    assert m.status(b).waiting.startswith("Waiting for a training slot: next in line; slots: 1, training;")
    assert m.status(c).waiting.startswith("Waiting for a training slot: 1 run ahead of you; slots: 1, training;")
    seen = m.status(c)  # one look: the stated wait shrinks as the first run trains (478.2 h, then 478.1 h)
    assert seen.message == seen.waiting
    assert [s.run_id for s in m.schedule().queue] == [b, c]


def test_a_run_waiting_for_a_slot_is_stored_queued(sched):
    """The store says ``queued`` too (the Runs list, other processes): a run resumed while the slot is
    busy (the Lab's ▶ Start), and a throttled run that has a worker and asks for the slot back."""
    m, store = sched()
    a = m.submit(_cfg(10**6))
    _wait_for(lambda: _step(m, a) > 0, "the first run to train")
    b = m.submit(_cfg(40), paused=True)
    assert store.get_run(b)["status"] == "paused"
    m.resume(b)
    assert store.get_run(b)["status"] == "queued"
    slow = m.submit(_cfg(10**6), paused=True)
    m.set_speed(slow, 2.0)
    m.resume(slow)
    _wait_for(lambda: m.status(slow).light, "the throttled run to run light")
    m.set_speed(slow, None)  # it needs the slot that ``a`` holds: its worker waits, and says so
    _wait_for(lambda: store.get_run(slow)["status"] == "queued", "the waiting worker's run to be stored queued")


def test_a_killed_command_line_run_is_marked_interrupted_by_the_live_server(sched, tmp_path):
    """``python -m scansnap run`` stopped by SIGTERM writes no final status; the live server's janitor
    finds its writer gone and marks the run ``interrupted`` (resumable) without a restart."""
    _, store = sched()
    cli = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "scansnap",
            "--data-dir",
            str(tmp_path),
            "run",
            "--preset",
            "syn-small",
            "--set",
            "optim.steps=1000000",
            "--quiet",
        ],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        _wait_for(lambda: any(r["status"] == "running" for r in store.list_runs()), "the CLI run to start")
        [run] = store.list_runs()
        _wait_for(lambda: store.get_run(run["id"])["last_step"] is not None, "a first snapshot")
    finally:
        cli.send_signal(signal.SIGTERM)
        cli.wait(DEADLINE)
    _wait_for(lambda: store.get_run(run["id"])["status"] == "interrupted", "the janitor to mark it interrupted")
    assert f"writer process {cli.pid}" in store.get_run(run["id"])["message"]


def test_a_parked_run_survives_another_worker_opening_the_store(sched):
    """Every worker opens the store, which marks runs with a dead writer ``interrupted``: a parked run
    names the server as its writer, so it stays paused."""
    m, store = sched(park_after_s=0.1)
    a = m.submit(_cfg(100), paused=True)
    m.step(a, 3)
    _wait_for(lambda: _step(m, a) == 3, "3 granted steps")
    _wait_for(lambda: not m.worker_pids(), "the worker to park")
    b = m.submit(_cfg(5))  # a new worker opens the store
    assert m.wait(b, timeout=DEADLINE) == "finished"
    assert store.get_run(a)["status"] == "paused" and store.get_run(a)["pid"] == os.getpid()
    _wait_status(m, a, lambda s: s == "paused", "still paused")


SLOTS_SCRIPT = textwrap.dedent("""
    import os, sys
    os.sched_setaffinity(0, {int(c) for c in sys.argv[2].split(",")})
    from scansnap.service.jobs import JobManager
    from scansnap.service.store import RunStore

    m = JobManager(RunStore(sys.argv[1]))
    print(m.max_concurrent, m.torch_threads, flush=True)
    m.shutdown()
""")


def test_the_default_slots_are_the_cpus_the_server_may_use(tmp_path):
    """Without SCANSNAP_MAX_JOBS a server has a slot per CPU it may run on (its affinity: ``taskset``, a
    container's cpuset), not per CPU of the machine: pinned to one CPU, one slot of one torch thread."""
    root = Path(__file__).resolve().parents[2]
    allowed = sorted(os.sched_getaffinity(0))
    for cpus in ([allowed[0]], allowed):
        out = subprocess.run(
            [sys.executable, "-c", SLOTS_SCRIPT, str(tmp_path / str(len(cpus))), ",".join(map(str, cpus))],
            cwd=root,
            text=True,
            capture_output=True,
            timeout=DEADLINE,
            env={**os.environ, "PYTHONPATH": str(root)},
        )
        assert out.returncode == 0, out.stderr[-2000:]
        assert out.stdout.split() == [str(len(cpus)), "1"], (cpus, out.stdout)
