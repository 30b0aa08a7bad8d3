"""Theorem 4's chart overlay is computed once per run, by the worker beside the training, stored with
the run's statics and read back by the charts unchanged: the stored overlay of every replica equals
:func:`calibrated_overlay` computed directly on the run's problem and initial logits."""

from __future__ import annotations

import os

import numpy as np
import psutil
import pytest

from scansnap.kinds.synthetic.paper.run_theory import replica_theory
from scansnap.kinds.synthetic.paper.theory_view import (
    THEORY_STATICS,
    calibrated_overlay,
    overlay_statics,
    step_grid,
    stored_overlay,
)
from scansnap.kinds.synthetic.science.data import build_problem, run_statics
from scansnap.kinds.synthetic.service import theory as yz_theory
from scansnap.kinds.synthetic.service import training as yz_training
from scansnap.kinds.synthetic.service.theory import (
    BACKGROUND_NICE,
    INLINE_WORK,
    OverlayProcess,
    backfill_overlay,
    curve_work,
)
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore

# Theorem 4's own preset (solid) with a second (η_Y, η_Z) pair, and an Adam run (no theory): 30 steps
SOLID = get_preset("theorem4").config.with_overrides({"optim.steps": 30, "replicas.lr_pairs": [[0.2, 0.2], [0.5, 0.1]]})
ADAM = get_preset("syn-small-adam-1").config.with_overrides({"optim.steps": 30})
INDICATIVE = get_preset("syn-small").config.with_overrides({"optim.steps": 30, "replicas.lr_pairs": [[1, 1], [2, 1]]})
# momentum: outside Theorem 4; 40,000 steps of its reduced system take about a second per replica
# (a cancelled overlay is killed long before the four are done)
SLOW = get_preset("theorem4").config.with_overrides({"optim.momentum": 0.9, "replicas.seeds": [1, 2, 3, 4]})


def assert_same_overlay(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for key, value in want.items():
        if isinstance(value, np.ndarray | float):
            np.testing.assert_array_equal(got[key], value, err_msg=key)
        else:
            assert got[key] == value, key


@pytest.mark.parametrize("cfg", [SOLID, ADAM, get_preset("syn-small").config], ids=["theorem4", "adam", "syn-small"])
def test_the_stored_overlay_is_the_calibrated_overlay_of_each_replica(tmp_path, cfg):
    """Through the store's own encoding (the failed conditions as a string array, no pickle)."""
    problem = build_problem(cfg.data)
    z0 = np.random.default_rng(0).normal(0, 0.01, (cfg.n_replicas, problem.Q, problem.M_ctx))
    with RunStore(tmp_path) as store:
        rid = store.create_run("overlay", cfg.to_json(), "cpu", {})
        store.add_statics(rid, overlay_statics(cfg, problem, z0))
        statics = store.statics(rid)
    assert set(THEORY_STATICS) <= statics.keys()
    for r in range(cfg.n_replicas):
        assert_same_overlay(stored_overlay(statics, r), calibrated_overlay(cfg, problem, z0[r], r))


def test_no_overlay_before_the_worker_stores_it():
    assert stored_overlay({"P": np.ones((2, 3))}, 0) is None


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize(
    ("cfg", "inline_work"),
    [(SOLID, INLINE_WORK), (INDICATIVE, INLINE_WORK), (INDICATIVE, 0)],
    ids=["theorem4-two-pairs", "syn-small-two-pairs", "syn-small-two-pairs-in-a-process"],
)
def test_a_finished_run_has_the_overlay_of_every_replica(tmp_path, monkeypatch, cfg, inline_work):
    """The curves the run needed for its snapshots where Theorem 4 applies, the others' computed before
    the first step, or (``inline_work`` = 0: as for a long run) in a process beside the training, stored
    before ``finished`` is."""
    monkeypatch.setattr(yz_training, "INLINE_WORK", inline_work)
    with RunStore(tmp_path) as store:
        job = RunJob(cfg, store, name="two pairs")
        z0 = job.trainer.Z0.double().cpu().numpy()
        assert job.run() == "finished"
        statics = store.statics(job.run_id)
    problem = build_problem(cfg.data)
    for r in range(cfg.n_replicas):
        assert_same_overlay(stored_overlay(statics, r), calibrated_overlay(cfg, problem, z0[r], r))
    assert not np.array_equal(statics["theory_B"][0], statics["theory_B"][1])  # each pair its own curve


def _indicative(cfg, tmp_path):
    problem = build_problem(cfg.data)
    z0 = np.zeros((cfg.n_replicas, problem.Q, problem.M_ctx))
    steps = np.union1d(step_grid(cfg.optim.steps), [0, cfg.optim.steps])
    theories = [replica_theory(cfg, problem, z0[r], r, steps, only_if_solid=True) for r in range(cfg.n_replicas)]
    assert not any(th.solid for th in theories) and curve_work(cfg, problem, theories) > INLINE_WORK
    store = RunStore(tmp_path)
    return problem, z0, theories, store, store.create_run("long", cfg.to_json(), "cpu", {})


def test_a_long_runs_overlay_is_computed_in_a_process_of_its_own(tmp_path):
    """Too long to compute before the first step: a subprocess stores it, equal to calibrated_overlay."""
    cfg = SLOW.with_overrides({"optim.steps": 20_000})
    problem, z0, theories, store, rid = _indicative(cfg, tmp_path)
    OverlayProcess(cfg, z0, theories, store, rid).finish()
    statics = store.statics(rid)
    for r in range(cfg.n_replicas):
        assert_same_overlay(stored_overlay(statics, r), calibrated_overlay(cfg, problem, z0[r], r))
    store.close()


def test_a_cancelled_overlay_stores_nothing_and_its_process_yields_the_cpu(tmp_path):
    """Stop does not wait for it (a resumed run computes it again).  While it computes, its process runs
    BACKGROUND_NICE below its parent (the worker): a hall's first steps and pages come first."""
    _, z0, theories, store, rid = _indicative(SLOW, tmp_path)
    overlay = OverlayProcess(SLOW, z0, theories, store, rid)
    expected = min(19, os.nice(0) + BACKGROUND_NICE)  # Linux caps niceness at 19
    assert psutil.Process(overlay.pid).nice() == expected
    overlay.finish(cancel=True)
    assert not any(k.startswith("theory_") for k in store.statics(rid))
    store.close()


def test_a_long_stopped_run_without_an_overlay_gets_it_from_a_process_not_from_the_page(tmp_path):
    """A run stopped before its overlay was stored: the page's read starts the process and returns at
    once; the overlay it stores equals calibrated_overlay on the run's first stored logits."""
    cfg = SLOW
    problem = build_problem(cfg.data)
    z0 = np.random.default_rng(1).normal(0, 0.01, (cfg.n_replicas, problem.Q, problem.M_ctx))
    with RunStore(tmp_path) as store:
        statics = run_statics(cfg.lr_pairs, list(cfg.replicas.seeds), problem)
        rid = store.create_run("stopped", cfg.to_json(), "cpu", {}, statics=statics, status="stopped")
        store.append_snapshot(rid, 0, {"z": z0.astype(np.float32), "c": np.zeros(1, np.float32)}, [])
        read = backfill_overlay(store, store.get_run(rid), store.statics(rid))
        assert "theory_step" not in read  # not computed by this read
        yz_theory._BACKFILLS[rid].finish()
        stored = store.statics(rid)
    first = z0.astype(np.float32).astype(np.float64)  # as stored
    for r in range(cfg.n_replicas):
        assert_same_overlay(stored_overlay(stored, r), calibrated_overlay(cfg, problem, first[r], r))
