"""Tests of scansnap.service.jobs.JobManager: queueing, pause/step/resume/stop, owner caps, throttling, shutdown.

No assertion here is on elapsed time.  A change of a job's status is awaited on the manager's condition
variable (``JobManager.changed``, notified on every change); a step count lives in memory shared with the
worker, which notifies nobody, so waits on steps poll it.  Every wait has a generous deadline (a busy CI
machine only makes it slower).  The only fixed waits are observation windows in which a run must *not*
move.  How soon a stop or a pause acts is a property of the runner's chunk sizing and throttle, tested
with a fake clock at the end of this file.
"""

from __future__ import annotations

import ast
import contextlib
import gc
import os
import select
import signal
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import types
import weakref
from collections.abc import Callable
from pathlib import Path

import pytest

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.paper.presets import get_preset
from scansnap.service import runner
from scansnap.service.control import RunControl
from scansnap.service.jobs import TERMINAL, JobManager
from scansnap.service.runner import CHUNK_SECONDS, RunJob
from scansnap.service.store import RunStore
from scansnap.service.worker import parse_cpus
from scansnap.service.writers import pid_alive
from tests.guards import GUARD_S

DEADLINE = float(os.environ.get("TEST_DEADLINE_S", GUARD_S))  # a hang detector: a loaded machine only makes it slower
USABLE = sorted(os.sched_getaffinity(0))


def _cfg(steps: int, **overrides: object) -> RunConfig:
    """Syn-Small made cheap per step (small batch, short contexts)."""
    base = {"optim.steps": steps, "optim.batch": 8, "data.T": 16}
    base.update(overrides)
    return get_preset("syn-small").config.with_overrides(base)


def _train_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("train-") and t.is_alive()]


def _wait_for(cond: Callable[[], bool], what: str, timeout: float = DEADLINE) -> None:
    """Poll until ``cond()`` (steps, pids, fds: states that notify no one), failing after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.005)


def _wait_status(m: JobManager, rid: str, want: Callable[[str], bool], what: str) -> None:
    """Block on the manager's condition until the job's status satisfies ``want``."""
    with m.changed:
        if not m.changed.wait_for(lambda: want(m.status(rid).status), DEADLINE):
            pytest.fail(f"timed out after {DEADLINE:.0f} s waiting for {what} (status {m.status(rid).status})")


@pytest.fixture
def store(tmp_path):
    s = RunStore(tmp_path)
    yield s
    s.close()


@pytest.fixture
def manager(store):
    before = _train_threads()
    m = JobManager(store, max_concurrent=1)
    yield m
    pids = m.worker_pids()  # the workers still alive when the test ends
    m.shutdown()
    assert [t for t in _train_threads() if t not in before] == [], "shutdown left supervisor threads behind"
    assert [p for p in pids if pid_alive(p)] == [], "shutdown left worker processes behind"


def _step(m: JobManager, rid: str) -> int:
    return m.status(rid).step


def _status(m: JobManager, rid: str) -> str:
    return m.status(rid).status


# ---------------------------------------------------------------------------- queue
def test_second_run_is_queued_then_both_finish(manager, store):
    a = manager.submit(_cfg(10**6), name="a")  # trains: holds the only slot until stopped
    _wait_for(lambda: _step(manager, a) > 0, "the first run to train")
    b = manager.submit(_cfg(30), name="b")
    sb = manager.status(b)
    assert sb.status == "queued" and sb.queue_position == 0 and sb.step == 0 and sb.total_steps == 30
    assert manager.status(a).queue_position is None
    assert store.get_run(b)["status"] == "queued"
    c = manager.submit(_cfg(30), name="c")
    assert manager.status(c).queue_position == 1

    manager.stop(a)
    assert manager.wait(a, timeout=DEADLINE) == "stopped"
    for rid in (b, c):
        assert manager.wait(rid, timeout=DEADLINE) == "finished"
        assert manager.status(rid).step == 30 and manager.status(rid).queue_position is None
        run = store.get_run(rid)
        assert run["status"] == "finished" and run["last_step"] == 30
    assert manager.active() == []
    assert not manager.is_live(a)


def test_queued_run_can_be_stopped(manager, store):
    a = manager.submit(_cfg(10**6))
    _wait_for(lambda: _step(manager, a) > 0, "the first run to train")
    b = manager.submit(_cfg(30))
    c = manager.submit(_cfg(30))
    assert manager.status(b).status == "queued"
    manager.stop(b)
    sb = manager.status(b)
    assert sb.status == "stopped" and sb.queue_position is None
    assert manager.status(c).queue_position == 0, "the runs behind a stopped one move up"
    assert store.get_run(b)["status"] == "stopped"
    manager.stop(a)
    assert manager.wait(a, timeout=DEADLINE) == "stopped"
    assert manager.wait(c, timeout=DEADLINE) == "finished"
    assert manager.status(b).status == "stopped" and manager.status(b).step == 0
    assert store.steps(b) == []


# ---------------------------------------------------------------------------- controls
def test_pause_step_resume_stop(manager, store):
    rid = manager.submit(_cfg(10**6))
    _wait_for(lambda: _step(manager, rid) >= 5, "the run to start")

    manager.pause(rid)
    _wait_status(manager, rid, lambda s: s == "paused", "status 'paused'")
    s0 = _step(manager, rid)
    deadline = time.monotonic() + 0.5
    while time.monotonic() < deadline:  # observation window: a paused run must not move
        assert _step(manager, rid) == s0
        time.sleep(0.01)
    assert store.get_run(rid)["status"] == "paused"

    manager.step(rid, 7)
    _wait_for(lambda: _step(manager, rid) >= s0 + 7, "7 granted steps")
    _wait_status(manager, rid, lambda s: s == "paused", "status 'paused' after the granted steps")
    deadline = time.monotonic() + 0.3
    while time.monotonic() < deadline:
        assert _step(manager, rid) == s0 + 7, "step(n) while paused advances exactly n steps"
        time.sleep(0.01)

    manager.step(rid, 1)
    _wait_for(lambda: _step(manager, rid) == s0 + 8, "1 more granted step")

    manager.resume(rid)
    _wait_for(lambda: _step(manager, rid) > s0 + 20, "the resumed run to continue")
    assert _status(manager, rid) == "running"

    manager.stop(rid)
    assert manager.wait(rid, timeout=DEADLINE) == "stopped"
    run = store.get_run(rid)
    assert run["status"] == "stopped" and f"stopped at step {_step(manager, rid)}" in run["message"]
    assert not manager.is_live(rid)


def _assert_stop_acknowledged(m: JobManager, rid: str) -> None:
    """A stop of a run with 10**6 steps to go: the worker acknowledges it long before the run could end."""
    m.stop(rid)
    assert m.wait(rid, timeout=DEADLINE) == "stopped", m.status(rid)
    assert m.status(rid).step < m.status(rid).total_steps


def test_stop_ends_a_running_run(manager):
    rid = manager.submit(_cfg(10**6))
    _wait_for(lambda: _step(manager, rid) >= 200, "the run to get going")
    _assert_stop_acknowledged(manager, rid)


def test_stop_ends_a_run_resumed_after_single_steps(manager):
    """Single steps while paused, then a resume, then a stop: the stop still reaches the worker (that the
    chunk size is not inflated by the single steps is test_single_steps_do_not_inflate_the_chunk)."""
    rid = manager.submit(_cfg(10**6))
    _wait_for(lambda: _step(manager, rid) >= 200, "the run to get going")
    manager.pause(rid)
    _wait_status(manager, rid, lambda s: s == "paused", "status 'paused'")
    s0 = _step(manager, rid)
    for k in range(1, 6):
        manager.step(rid, 1)
        _wait_for(lambda k=k: _step(manager, rid) == s0 + k, f"single step {k}")
    manager.resume(rid)
    _wait_for(lambda: _step(manager, rid) > s0 + 5 or _status(manager, rid) == "running", "the resume")
    _assert_stop_acknowledged(manager, rid)


def test_submit_paused_does_not_train(manager):
    rid = manager.submit(_cfg(100), paused=True)
    _wait_status(manager, rid, lambda s: s == "paused", "status 'paused'")
    assert _step(manager, rid) == 0
    manager.step(rid, 3)
    _wait_for(lambda: _step(manager, rid) == 3, "3 granted steps")
    manager.stop(rid)
    assert manager.wait(rid, timeout=DEADLINE) == "stopped"


def test_a_launched_run_is_stored_running_before_its_worker_starts(manager, store):
    """A run started paused and resumed (what the Lab's ▶ Start does), or let out of the queue, reads
    ``running`` in the store from its launch: not ``paused`` or ``queued`` while its worker starts (the
    Runs page and other tabs read the store).  The first check follows ``resume`` at once, long before a
    worker process could have loaded the run."""
    rid = manager.submit(_cfg(10**6), paused=True)
    assert store.get_run(rid)["status"] == "paused"
    manager.resume(rid)
    assert store.get_run(rid)["status"] == "running"
    queued = manager.submit(_cfg(30))
    assert store.get_run(queued)["status"] == "queued"
    manager.stop(rid)
    _wait_status(manager, queued, lambda s: s != "queued", "the queued run's launch")
    assert store.get_run(queued)["status"] in ("running", "finished")
    assert manager.wait(queued, timeout=DEADLINE) == "finished"


def test_unknown_run_id(manager):
    for call in (manager.pause, manager.resume, manager.stop):
        with pytest.raises(KeyError, match="no live job 'nope'"):
            call("nope")
    assert manager.status("nope") is None


# ---------------------------------------------------------------------------- owners
def test_per_owner_cap(manager):
    assert manager.limits.max_per_owner == 2
    a = manager.submit(_cfg(10**6), owner="alice", paused=True)
    manager.submit(_cfg(10**6), owner="alice")
    with pytest.raises(RuntimeError, match=r"you already have 2 runs queued, training or paused: stop one"):
        manager.submit(_cfg(10), owner="alice")
    manager.submit(_cfg(10), owner="bob")  # another owner is not affected
    manager.submit(_cfg(10))  # nor are runs without an owner
    manager.stop(a)
    manager.wait(a, timeout=DEADLINE)
    manager.submit(_cfg(10), owner="alice")  # a finished run frees its place


# ---------------------------------------------------------------------------- throttle
SLOW_CAP = 1e-3  # steps per second: after each step the worker sleeps 1/SLOW_CAP = 1000 s, far past DEADLINE


def test_set_speed_reaches_the_worker(manager):
    """A cap set in the server throttles the worker process: capped at one step per 1000 s, the run takes
    its first step and then no more than one more chunk (max(1, cap·CHUNK_SECONDS) = 1 step) while we
    watch, however long the window.  The rate a cap gives is test_throttle_keeps_the_cap (fake clock)."""
    rid = manager.submit(_cfg(10**6), paused=True)
    manager.set_speed(rid, SLOW_CAP)
    manager.resume(rid)
    _wait_for(lambda: _step(manager, rid) >= 1, "the throttled run to take its first step")
    time.sleep(1.0)  # observation window: an unthrottled run takes thousands of steps in it
    assert _step(manager, rid) <= 2, _step(manager, rid)


def test_set_speed_none_removes_the_throttle(manager):
    """Lifting the cap while the worker sleeps off its throttle must not crash the run, and the run then
    computes faster than the cap let it (3× its rate; an unthrottled step of this run takes milliseconds, even
    on a loaded host)."""
    cap = 0.5  # steps/s: the worker sleeps ~2 s after each step
    rid = manager.submit(_cfg(10**6), paused=True)
    manager.set_speed(rid, cap)
    manager.resume(rid)
    _wait_for(lambda: _step(manager, rid) >= 1, "the throttled run to start")
    manager.set_speed(rid, None)  # a throttled worker is almost always inside its sleep here
    s0, t0 = _step(manager, rid), time.monotonic()
    _wait_for(
        lambda: (
            _step(manager, rid) - s0 > 3 * cap * max(time.monotonic() - t0, 0.5) or _status(manager, rid) in TERMINAL
        ),
        "the unthrottled run to speed up",
    )
    st = manager.status(rid)
    assert st.status == "running", f"{st.status}: {st.message}"


def test_stop_cuts_a_throttle_sleep_short(manager):
    """Capped at one step per 1000 s, the worker sleeps 1000 s after its first step (or is about to): a stop
    acknowledged within DEADLINE (GUARD_S, 300 s: well under the 1000 s) can only have cut that sleep short."""
    rid = manager.submit(_cfg(10**6), paused=True)
    manager.set_speed(rid, SLOW_CAP)
    manager.resume(rid)
    _wait_for(lambda: _step(manager, rid) >= 1, "the first throttled step")
    _assert_stop_acknowledged(manager, rid)


# ---------------------------------------------------------------------------- shutdown
def test_shutdown_joins_every_worker(store):
    before = _train_threads()
    m = JobManager(store, max_concurrent=2)
    try:
        running = [m.submit(_cfg(10**6)), m.submit(_cfg(10**6))]
        paused = m.submit(_cfg(10**6), paused=True)  # holds no slot and has no worker
        queued = m.submit(_cfg(10**6))
        _wait_for(lambda: min(_step(m, r) for r in running) > 0, "both runs to start")
        assert len(_train_threads()) - len(before) == 2
        assert m.status(queued).status == "queued"
    finally:
        m.shutdown()
    assert [t for t in _train_threads() if t not in before] == []
    for rid in (*running, paused, queued):
        assert m.status(rid).status == "stopped"
        assert store.get_run(rid)["status"] == "stopped"
    assert "before the run started" in store.get_run(queued)["message"]
    with pytest.raises(RuntimeError, match="shut down"):
        m.submit(_cfg(10))


# ---------------------------------------------------------------------------- worker processes
def test_runs_train_in_worker_processes(manager, store):
    rid = manager.submit(_cfg(10**6))
    _wait_for(lambda: _step(manager, rid) > 0, "the worker to start")
    [pid] = manager.worker_pids()
    assert pid != os.getpid() and pid_alive(pid)
    manager.stop(rid)
    assert manager.wait(rid, timeout=DEADLINE) == "stopped"
    _wait_for(lambda: not pid_alive(pid), "the worker to exit")
    _wait_for(lambda: manager.worker_pids() == [], "the supervisor to see the worker end")


def test_killed_worker_leaves_run_interrupted_and_resumable(manager, store):
    """A worker killed from outside (say, by the OOM killer) ends its run as ``interrupted`` with the
    exit code; the server goes on, and the run can be resumed to its end."""
    rid = manager.submit(_cfg(40), paused=True)
    manager.step(rid, 5)
    _wait_for(lambda: _step(manager, rid) == 5, "5 granted steps")
    _wait_status(manager, rid, lambda s: s == "paused", "the worker to pause after them")
    [pid] = manager.worker_pids()  # a paused worker lives on (without a slot) until it parks
    os.kill(pid, signal.SIGKILL)
    _wait_status(manager, rid, lambda s: s == "interrupted", "status 'interrupted'")
    st = manager.status(rid)
    assert "exit code -9" in st.message and "at step 5" in st.message, st.message
    assert store.get_run(rid)["status"] == "interrupted"
    assert not manager.is_live(rid)
    behind = manager.submit(_cfg(20))
    assert manager.wait(behind, timeout=DEADLINE) == "finished", "the server goes on"

    assert manager.resume_stored(rid) == rid
    assert manager.wait(rid, timeout=DEADLINE) == "finished"
    assert store.get_run(rid)["last_step"] == 40


SERVER_SCRIPT = textwrap.dedent("""
    import sys, time
    from scansnap.service.jobs import JobManager
    from scansnap.paper.presets import get_preset
    from scansnap.service.store import RunStore
    from scansnap.service.writers import pid_alive

    if __name__ == "__main__":
        m = JobManager(RunStore(sys.argv[1]), max_concurrent=1)
        cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 10**6, "optim.batch": 8, "data.T": 16})
        rid = m.submit(cfg, paused=True)
        m.step(rid, 3)
        while m.status(rid).step < 3:  # the step lives in shared memory: poll it
            time.sleep(0.01)
        print(rid, *m.worker_pids(), flush=True)
        time.sleep(600)  # a server that stays up until the test kills it
""")


def test_worker_dies_with_a_killed_server(tmp_path):
    """``kill -9`` of the server process leaves no worker writing to the store: the worker is killed
    too, and reopening the store marks the run ``interrupted`` with its snapshots intact."""
    root = Path(__file__).resolve().parents[2]
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER_SCRIPT, str(tmp_path)],
        cwd=root,
        text=True,
        stdout=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    try:
        ready, _, _ = select.select([server.stdout], [], [], DEADLINE)
        assert ready, f"the server script did not start its worker within {DEADLINE:.0f} s"
        rid, pid = server.stdout.readline().split()
        assert pid_alive(int(pid))
    finally:
        server.kill()
        server.wait(DEADLINE)
    _wait_for(lambda: not pid_alive(int(pid)), "the worker to die with the server")
    with RunStore(tmp_path) as reopened:
        run = reopened.get_run(rid)
        assert run["status"] == "interrupted", run
        assert reopened.steps(rid)[0] == 0


def test_ended_jobs_free_their_shared_controls(manager):
    """Each job's shared control holds named semaphores (in /dev/shm, 64 MB in a default Docker
    container) until the control is garbage: a long-lived server must not keep those of every run it
    ever trained, whether it finished or was stopped while queued."""
    blocker = manager.submit(_cfg(10**6))  # holds the only slot: what comes next waits in the queue
    _wait_for(lambda: _step(manager, blocker) > 0, "the first run to train")
    stopped = manager.submit(_cfg(5))
    rids = [manager.submit(_cfg(5)) for _ in range(3)]
    shared = [weakref.ref(manager._jobs[rid].control) for rid in (*rids, stopped, blocker)]
    manager.stop(stopped)  # ends while queued
    manager.stop(blocker)
    for rid in rids:
        assert manager.wait(rid, timeout=DEADLINE) == "finished"
    _wait_for(lambda: not manager.worker_pids(), "the workers to end")
    _wait_for(
        lambda: gc.collect() >= 0 and all(ref() is None for ref in shared),
        "the shared controls of the ended jobs to be freed",
    )
    assert [manager.status(r).step for r in rids] == [5, 5, 5]
    assert manager.status(stopped).status == "stopped"


def _pipes() -> int:
    """How many of this process's file descriptors are pipes (a worker's handle holds two; sockets, which a
    Ray driver joined by an earlier test of this process keeps opening, are not counted)."""
    fds = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):  # the listing's own descriptor is gone once listed
            fds.append(os.readlink(f"/proc/self/fd/{fd}"))
    return sum(target.startswith("pipe:") for target in fds)


def test_ended_workers_leave_no_file_descriptors():
    """A finished job's process handle is closed (its two pipes to the fork server with it)."""
    store = RunStore(tempfile.mkdtemp())
    m = JobManager(store, max_concurrent=1)
    try:
        warm = m.submit(_cfg(2))  # the first start may open long-lived fds (fork server, trackers)
        assert m.wait(warm, timeout=DEADLINE) == "finished"
        _wait_for(lambda: not m.worker_pids(), "the first worker to end")
        before = _pipes()
        for _ in range(4):
            assert m.wait(m.submit(_cfg(2)), timeout=DEADLINE) == "finished"
        _wait_for(lambda: not m.worker_pids(), "the workers to end")
        _wait_for(lambda: _pipes() <= before, "the pipes of the ended workers to close")
    finally:
        m.shutdown()
        store.close()


def test_a_guarded_main_module_is_not_rerun_by_workers(manager, tmp_path):
    """Streamlit installs the app script as ``sys.modules["__main__"]`` (a module with ``__file__``, no
    ``__spec__``); multiprocessing makes every worker import it first, as ``__mp_main__``.  A script
    that keeps its body under ``if __name__ == "__main__":``, as app.py does, runs nothing there."""
    marker = tmp_path / "main-ran"
    script = tmp_path / "app_like.py"
    script.write_text(f"if __name__ == '__main__':\n    open({str(marker)!r}, 'w').write('ran')\n")
    fake = types.ModuleType("__main__")
    fake.__file__ = str(script)
    real = sys.modules["__main__"]
    sys.modules["__main__"] = fake
    try:
        rid = manager.submit(_cfg(3))
        assert manager.wait(rid, timeout=DEADLINE) == "finished"
    finally:
        sys.modules["__main__"] = real
    assert not marker.exists(), "a worker ran the server's main script"


def test_app_py_keeps_everything_under_the_main_guard():
    """What a worker imports of app.py (see the test above) is its docstring and the guard only."""
    root = Path(__file__).resolve().parents[2]
    tree = ast.parse((root / "scansnap" / "app.py").read_text())
    body = [n for n in tree.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    assert len(body) == 1 and isinstance(body[0], ast.If)
    assert ast.unparse(body[0].test) == "__name__ == '__main__'"


@pytest.mark.parametrize(
    ("text", "cpus"),
    [
        (str(min(USABLE)), {min(USABLE)}),
        (f" {min(USABLE)} , {min(USABLE)}-{min(USABLE)} ", {min(USABLE)}),
        (",".join(map(str, USABLE)), set(USABLE)),
    ],
)
def test_parse_cpus(text, cpus):
    assert parse_cpus(text) == cpus


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("x", "is not a CPU list"),
        ("1-x", "is not a CPU list"),
        ("", "names no CPU"),
        (str(os.cpu_count() or 1), "names no CPU"),
        ("-1", "is not a CPU list|names no CPU"),
    ],
)
def test_parse_cpus_refuses_with_the_allowed_form(text, why):
    with pytest.raises(ValueError, match=rf"SCANSNAP_WORKER_CPUS=.*({why}).*CPU numbers from 0 to"):
        parse_cpus(text)


def test_a_worker_that_cannot_take_its_cpus_fails_its_run_with_the_reason(store):
    """A CPU this machine has but the process may not use (a container's cpuset): the run ends
    ``failed`` saying why, not ``interrupted`` (resuming would fail the same way)."""
    m = JobManager(store, max_concurrent=1, worker_cpus=frozenset({10_000}))  # past any kernel's CPU mask
    try:
        rid = m.submit(_cfg(3))
        assert m.wait(rid, timeout=DEADLINE) == "failed"
        assert "the worker could not start the run" in m.status(rid).message
        assert store.get_run(rid)["status"] == "failed"
    finally:
        m.shutdown()


def test_workers_run_on_the_cpus_they_are_given(store):
    cpu = min(USABLE)
    m = JobManager(store, max_concurrent=1, worker_cpus=frozenset({cpu}))
    try:
        rid = m.submit(_cfg(10**6))
        _wait_for(lambda: _step(m, rid) > 0, "the worker to start")
        [pid] = m.worker_pids()
        assert os.sched_getaffinity(pid) == {cpu}
        assert m.torch_threads == 1
    finally:
        m.shutdown()


# ---------------------------------------------------------------------------- how soon controls act (fake clock)
# What makes a stop or a pause prompt is the runner's chunk: it trains about CHUNK_SECONDS between two looks
# at its controls, and a throttled chunk sleeps n/cap minus its own compute time.  Both are checked on a
# fake clock (each step costs STEP_COST fake seconds), so the checks hold on any machine, however busy.
STEP_COST = 1e-3


class _FakeClock:
    """``time`` as scansnap.service.runner sees it; sleeping on the stop event advances it too."""

    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def perf_counter(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now


class _FakeStopEvent:
    """A stop event whose ``wait(t)`` passes t seconds of the fake clock instead of real time."""

    def __init__(self, clock: _FakeClock) -> None:
        self.clock, self.flag = clock, False

    def set(self) -> None:
        self.flag = True

    def is_set(self) -> bool:
        return self.flag

    def wait(self, timeout: float) -> bool:
        self.clock.slept.append(timeout)
        self.clock.now += timeout
        return self.flag


def _run_on_fake_clock(tmp_path, monkeypatch, script: Callable[[int, RunControl], None]) -> tuple[str, _FakeClock]:
    """Run a 10**6-step RunJob (snapshots at 0 and the end only) whose trainer steps cost STEP_COST fake
    seconds; ``script(n, control)`` sees every chunk of n steps and may press the controls."""
    clock = _FakeClock()
    monkeypatch.setattr(runner, "time", clock)
    control = RunControl()
    control.stop_event = _FakeStopEvent(clock)
    with RunStore(tmp_path) as store:
        job = RunJob(_cfg(10**6, **{"snapshots.log_count": 0, "snapshots.linear_every": None}), store)

        def advance(n: int) -> None:
            job.trainer.step_count += n  # the chunking is under test, not the training
            clock.now += n * STEP_COST
            script(n, control)

        monkeypatch.setattr(job.trainer, "advance", advance)
        return job.run(control), clock


def test_single_steps_do_not_inflate_the_chunk(tmp_path, monkeypatch):
    """Single steps granted while paused, then a resume: every later chunk still trains at most
    CHUNK_SECONDS, so a stop or a pause acts as soon as before the single steps."""
    chunks: dict[str, list[int]] = {"warm": [], "single": [], "resumed": []}

    def script(n: int, control: RunControl) -> None:
        phase = "warm" if not chunks["single"] and not control.paused else "resumed" if not control.paused else "single"
        chunks[phase].append(n)
        if phase == "warm" and len(chunks["warm"]) == 5:
            control.pause()
            control.grant_steps(1)
        elif phase == "single" and len(chunks["single"]) < 5:
            control.grant_steps(1)
        elif phase == "single":
            control.resume()
        elif len(chunks["resumed"]) == 5:
            control.stop()

    status, _ = _run_on_fake_clock(tmp_path, monkeypatch, script)
    assert status == "stopped"
    assert chunks["single"] == [1] * 5 and len(chunks["resumed"]) == 5
    full = round(CHUNK_SECONDS / STEP_COST)  # the steps that fill one chunk
    assert max(chunks["warm"]) == full, chunks  # the warm-up did grow the chunk to a full one
    assert max(chunks["resumed"]) <= full, f"chunks after the single steps: {chunks['resumed']} (full: {full})"


def test_throttle_keeps_the_cap(tmp_path, monkeypatch):
    """Capped at 50 steps/s, every chunk of n steps (cap·CHUNK_SECONDS = 5 after the first) takes n·STEP_COST
    of training plus a sleep of n/cap − n·STEP_COST: exactly the cap, never faster, never slower."""
    cap, taken = 50.0, []

    def script(n: int, control: RunControl) -> None:
        control.max_steps_per_s = cap
        taken.append(n)
        if sum(taken) >= 200:
            control.stop()

    status, clock = _run_on_fake_clock(tmp_path, monkeypatch, script)
    assert status == "stopped"
    assert taken[1:] == [max(1, int(cap * CHUNK_SECONDS))] * (len(taken) - 1), taken
    assert sum(taken) / clock.now == pytest.approx(cap, rel=1e-9)
    assert clock.slept == pytest.approx([n / cap - n * STEP_COST for n in taken])


def test_throttled_run_keeps_its_wall_clock_schedule_despite_snapshot_writes(tmp_path, monkeypatch):
    """300 steps at 20 steps/s with a snapshot every 2 steps (the lecture preset), each snapshot write
    costing WRITE_COST of the fake clock: the run takes 300 / 20 = 15 s within one chunk's time
    (cap·CHUNK_SECONDS = 2 steps = 0.1 s), not 15 s plus 150 writes (each chunk slept n/cap − its own
    training time, so the writes added up: 15 + 150 × 0.02 = 18 s here)."""
    WRITE_COST, cap, steps = 0.02, 20.0, 300  # a write well inside the 0.1 s two steps have at the cap
    clock = _FakeClock()
    monkeypatch.setattr(runner, "time", clock)
    control = RunControl()
    control.stop_event = _FakeStopEvent(clock)
    control.max_steps_per_s = cap
    with RunStore(tmp_path) as store:
        job = RunJob(_cfg(steps, **{"snapshots.linear_every": 2}), store)
        assert list(job.trainer.schedule) == list(range(0, steps + 1, 2))

        def advance(n: int) -> None:
            job.trainer.step_count += n
            clock.now += n * STEP_COST

        append = job._append

        def slow_append(snap, checkpoint):
            clock.now += WRITE_COST
            append(snap, checkpoint)

        monkeypatch.setattr(job.trainer, "advance", advance)
        monkeypatch.setattr(job, "_append", slow_append)
        monkeypatch.setattr(job, "_store_meanfield_twin", lambda: None)  # real threads, real time: not here
        assert job.run(control) == "finished"
    first_write = WRITE_COST  # the step-0 snapshot is written before the schedule begins
    assert clock.now - first_write == pytest.approx(steps / cap, abs=max(1, int(cap * CHUNK_SECONDS)) / cap)


def test_first_step_does_not_wait_for_the_mean_field_twin(tmp_path, monkeypatch, one_torch_thread):
    """The twin (1–3 s of training on 2 cores) is computed beside a run that trains on one torch thread:
    with a twin that cannot finish until the test lets it, the run still trains; it reports ``finished``
    only once the twin is stored."""
    from scansnap.kinds.synthetic.service import twin

    release, computing = threading.Event(), threading.Event()
    real = twin.train_twin

    def held_twin(plan, cancelled=lambda: False):
        computing.set()
        assert release.wait(DEADLINE), "the test never released the twin"
        return real(plan, cancelled)

    monkeypatch.setattr(twin, "train_twin", held_twin)
    with RunStore(tmp_path) as store:
        job, control = RunJob(_cfg(20), store), RunControl()
        statuses: list[str] = []
        job.on_status = lambda status, message: statuses.append(status)
        worker = threading.Thread(target=job.run, args=(control,))
        worker.start()
        try:
            _wait_for(computing.is_set, "the twin to start")
            _wait_for(lambda: control.step == 20, "the run to train while its twin is computed")
            assert "finished" not in statuses  # the final status waits for the twin
        finally:
            release.set()
            worker.join(DEADLINE)
        assert statuses[-1] == "finished" and not worker.is_alive()
        assert store.statics(job.run_id)["mf_steps"].max() == 20


def test_stop_does_not_wait_for_the_twin_and_a_resumed_run_computes_it(tmp_path, monkeypatch, one_torch_thread):
    """Stopped while its twin is still being computed (a twin that would wait for the test forever): the
    run is ``stopped`` at once, without a twin; resumed from its checkpoint, it computes the twin."""
    from scansnap.kinds.synthetic.service import twin

    computing, real = threading.Event(), twin.train_twin

    def endless_twin(plan, cancelled=lambda: False):
        computing.set()
        while not cancelled():  # only a cancel ends it
            time.sleep(0.01)
        return real(plan, cancelled)

    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint with every snapshot
    monkeypatch.setattr(twin, "train_twin", endless_twin)
    with RunStore(tmp_path) as store:
        # 10**5 steps: never ended before the stop; the resumed run's finish() below waits for its Theorem 4
        # overlay too, whose process steps the reduced system to the run's end (10**6 steps: 18 s of it)
        job, control = RunJob(_cfg(10**5), store), RunControl()
        worker = threading.Thread(target=job.run, args=(control,))
        worker.start()
        _wait_for(lambda: computing.is_set() and (store.checkpoint(job.run_id) or (0,))[0] > 0, "a checkpoint")
        control.stop()
        worker.join(DEADLINE)
        assert not worker.is_alive() and job.status == "stopped"
        assert "mf_steps" not in store.statics(job.run_id)
        monkeypatch.setattr(twin, "train_twin", real)
        again = RunJob.resume(store, job.run_id)
        assert again.step > 0
        again._twin.finish()  # computed beside the resumed run (which is not run on here)
        assert "mf_steps" in store.statics(job.run_id)


def test_a_run_on_several_torch_threads_has_its_twin_before_its_first_step(tmp_path):
    """The twin trains on one thread and torch's thread count is the process's: beside a run on two
    threads it would change the count under the run's steps, so there it is stored before the first step."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with RunStore(tmp_path) as store:
            job = RunJob(_cfg(20), store)
            job._store_meanfield_twin()
            assert "mf_steps" in store.statics(job.run_id), "stored before the constructor returned"
            assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(old)
