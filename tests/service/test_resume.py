"""Checkpoints: a run killed with SIGKILL is `interrupted` on restart and resumes to the very
same result as a run that was never interrupted."""

import os
import signal
import subprocess
import sys
import time

import numpy as np

from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.guards import GUARD_S


def test_restore_continues_bit_for_bit(one_torch_thread):
    """Bit for bit with one torch thread, as a training worker runs (docs/reproduce.md; with more threads two runs may
    split their chunks' sums between threads differently and agree to rounding only: tests/core/test_train.py)."""
    cfg = get_preset("syn-small").config.with_overrides({"replicas.seeds": "[1, 2]", "model.init": "torch-default"})
    a = Trainer(cfg)
    a.advance(40)
    b = Trainer(cfg)
    b.advance(15)
    arrays, meta = b.checkpoint()
    c = Trainer(cfg)
    c.restore(arrays, meta)
    c.advance(25)
    for k in a.params:
        assert np.array_equal(a.params[k].numpy(), c.params[k].numpy()), k
    sa, sc = a.snapshot(), c.snapshot()
    for k in sa.scalars:
        np.testing.assert_array_equal(sa.scalars[k], sc.scalars[k])


WRITER = """
import sys
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "1500", "snapshots.linear_every": "10",
                                                      "snapshots.max_count": "400"})
job = RunJob(cfg, RunStore(sys.argv[1]), name="killed")
print(job.run_id, flush=True)
job.run()
"""


def test_sigkill_mid_run_then_resume_gives_the_uninterrupted_result(tmp_path):
    env = {**os.environ, "SCANSNAP_CHECKPOINT_S": "0.05", "PYTHONPATH": os.getcwd()}
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE, text=True, env=env)
    run_id = proc.stdout.readline().strip()
    reader = RunStore(tmp_path)
    deadline = time.monotonic() + GUARD_S
    while time.monotonic() < deadline:
        ck = reader.checkpoint(run_id)
        if ck is not None and ck[0] >= 100:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert ck is not None and ck[0] < 1500, "the writer finished before it could be killed"
    reopened = RunStore(tmp_path)
    run = reopened.get_run(run_id)
    assert run["status"] == "interrupted"
    kept = reopened.steps(run_id)
    assert kept and all(reopened.snapshot(run_id, s) for s in kept)  # everything written is readable

    job = RunJob.resume(reopened, run_id)
    assert job.step == reopened.checkpoint(run_id)[0] or job.step == 0
    assert job.run() == "finished"
    cfg = job.cfg
    fresh = Trainer(cfg)
    fresh.advance(cfg.optim.steps)
    final = reopened.snapshot(run_id, cfg.optim.steps)
    np.testing.assert_array_equal(final["z"], fresh.snapshot().arrays["z"])
    assert reopened.steps(run_id) == [int(s) for s in fresh.schedule]
    df = reopened.scalars(run_id, ["loss"])
    assert df.groupby("step").size().max() == 1  # no duplicated rows after the rewind


def test_checkpoints_are_kept_while_a_run_can_resume_and_dropped_when_it_finishes(tmp_path, monkeypatch):
    """Every snapshot but the last carries a checkpoint when one is due; a stopped run keeps its
    latest (it can resume); a finished run keeps none (nothing resumes it: facade.RECOVERABLE)."""
    from scansnap.service import runner
    from scansnap.service.control import RunControl
    from scansnap.service.facade import RECOVERABLE

    assert "finished" not in RECOVERABLE
    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint is due at every snapshot
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "40", "replicas.seeds": "[1]"})
    store = RunStore(tmp_path)
    seen: list[tuple[int, int | None]] = []
    job = RunJob(cfg, store, name="whole")

    def record(snap):
        ck = store.checkpoint(job.run_id)
        seen.append((snap.step, None if ck is None else ck[0]))

    assert job.run(on_snapshot=record) == "finished"
    steps = job.trainer.schedule
    assert seen[:-1] == [(int(s), int(s)) for s in steps[:-1]]  # written with each snapshot
    assert seen[-1] == (int(steps[-1]), int(steps[-2]))  # not with the last one
    assert store.checkpoint(job.run_id) is None and store.steps(job.run_id) == [int(s) for s in steps]

    cut = RunJob(cfg, store, name="cut")
    control = RunControl()
    assert cut.run(control, on_snapshot=lambda s: control.stop() if s.step >= 20 else None) == "stopped"
    assert store.checkpoint(cut.run_id)[0] == 20
    again = RunJob.resume(store, cut.run_id)
    assert again.step == 20 and again.run() == "finished" and store.checkpoint(cut.run_id) is None
    np.testing.assert_array_equal(
        store.snapshot(cut.run_id, 40)["z"], store.snapshot(job.run_id, 40)["z"]
    )  # the resumed run ends where the whole one did


def test_a_run_stopped_between_snapshots_says_the_step_its_row_shows(tmp_path, one_torch_thread):
    """Stopped a step after a snapshot (the trainer is past it, the next snapshot not reached): its message,
    its control's step (what its job's status says) and its stored ``last_step`` are all the last
    snapshot's step, the step it shows and that Resume from checkpoint gets back to."""
    from scansnap.service.control import RunControl
    from scansnap.service.store import stopped_message

    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "60", "snapshots.linear_every": "7"})
    store = RunStore(tmp_path)
    job, control = RunJob(cfg, store, name="cut between"), RunControl()
    schedule = [int(s) for s in job.trainer.schedule]
    shown, mid = schedule[2], schedule[2] + 3  # 14 and 17: between the snapshots at 14 and 21
    assert mid < schedule[3]
    real = job.trainer.advance

    def one_step_at_a_time(n):
        real(1)
        if job.step == mid:
            control.stop()

    job.trainer.advance = one_step_at_a_time
    assert job.run(control) == "stopped" and job.step == mid  # trained to 17, stored to 14
    run = store.get_run(job.run_id)
    assert run["last_step"] == shown == store.steps(job.run_id)[-1]
    assert run["message"] == stopped_message(shown) == f"stopped at step {shown}"
    assert control.step == shown and store.stopped_at(job.run_id) == shown
    again = RunJob.resume(store, job.run_id)
    assert again.step <= shown and again.run() == "finished"  # the steps after 14 computed again
    store.close()


def test_a_run_that_fills_the_disk_is_interrupted_and_resumes_exactly_once_there_is_space(tmp_path, monkeypatch):
    """Finding (the budgets issue): a run that hit a full disk ended ``failed`` and could not resume once
    space was freed.  SQLite's "database or disk is full" at a snapshot now leaves it ``interrupted``, saying
    so; its resume from the last checkpoint ends as an uninterrupted run would, to the bit."""
    import sqlite3

    from scansnap.service import runner
    from scansnap.service.facade import RECOVERABLE

    monkeypatch.setattr(runner, "CHECKPOINT_SECONDS", 0.0)  # a checkpoint with every snapshot
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": "60", "replicas.seeds": "[1]"})
    store = RunStore(tmp_path)
    real = store.append_snapshot

    def full_disk(run_id, step, *args, **kwargs):
        if step >= 30:
            raise store._translate(sqlite3.OperationalError("database or disk is full"), "writing the snapshot")
        return real(run_id, step, *args, **kwargs)

    monkeypatch.setattr(store, "append_snapshot", full_disk)
    job = RunJob(cfg, store, name="disk full")
    assert job.run() == "interrupted"
    run = store.get_run(job.run_id)
    assert run["status"] == "interrupted" in RECOVERABLE and "disk filled up" in run["message"]
    monkeypatch.setattr(store, "append_snapshot", real)  # space freed
    resumed = RunJob.resume(store, job.run_id)
    assert resumed.run() == "finished"
    fresh = Trainer(cfg)
    fresh.advance(cfg.optim.steps)
    np.testing.assert_array_equal(store.snapshot(job.run_id, 60)["z"], fresh.snapshot().arrays["z"])
