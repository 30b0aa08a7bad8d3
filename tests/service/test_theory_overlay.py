"""Theorem 4's chart overlay is computed once per run, by the worker before the first step, stored with
the run's statics and read back by the charts unchanged: the stored overlay of every replica equals
:func:`calibrated_overlay` computed directly on the run's problem and initial logits."""

from __future__ import annotations

import numpy as np
import pytest

from engine.core.data import build_problem
from engine.paper.presets import get_preset
from engine.paper.theory_view import THEORY_STATICS, calibrated_overlay, overlay_statics, stored_overlay
from engine.service.runner import RunJob
from engine.service.store import RunStore

# Theorem 4's own preset (solid) with a second (η_Y, η_Z) pair, and an Adam run (no theory): 30 steps
SOLID = get_preset("theorem4").config.with_overrides({"optim.steps": 30, "replicas.lr_pairs": [[0.2, 0.2], [0.5, 0.1]]})
ADAM = get_preset("syn-small-adam-1").config.with_overrides({"optim.steps": 30})


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
def test_the_worker_stores_the_overlay_before_the_first_step(tmp_path):
    with RunStore(tmp_path) as store:
        job = RunJob(SOLID, store, name="two pairs")
        statics = store.statics(job.run_id)  # before any step
        assert job.step == 0 and not store.steps(job.run_id)
        z0 = job.trainer.Z0.double().cpu().numpy()
        problem = build_problem(SOLID.data)
        for r in range(SOLID.n_replicas):
            want = calibrated_overlay(SOLID, problem, z0[r], r)
            assert want["solid"] and "step" in want  # Theorem 4 applies to both pairs
            assert_same_overlay(stored_overlay(statics, r), want)
        assert not np.array_equal(statics["theory_B"][0], statics["theory_B"][1])  # each pair its own curve
