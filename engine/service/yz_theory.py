"""Theorem 4's chart overlay of a synthetic run stored before runs kept it with their statics: computed
once, from the run's config and its first stored logits (what its charts computed on every view before),
and stored with its statics.  A run that trains gets it from its worker (:mod:`engine.service.yz_training`)."""

from __future__ import annotations

import numpy as np

from engine.core.config import RunConfig
from engine.paper.history import problem_from_statics
from engine.paper.theory_view import overlay_statics
from engine.service.store import RunStore


def backfill_overlay(store: RunStore, run_id: str, statics: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """``statics`` with the overlay (:func:`overlay_statics`), computed and stored now if the run has
    none, a snapshot, and no worker that will store it (queued or running: the worker's own)."""
    if "theory_step" in statics or "P" not in statics:
        return statics
    info = store.get_run(run_id)
    steps = store.steps(run_id)
    if info is None or info["status"] in ("queued", "running") or not steps:
        return statics
    cfg = RunConfig.from_json(info["config_json"])
    first = store.snapshot(run_id, steps[0])
    shape = (cfg.n_replicas, len(statics["query_tokens"]), statics["P"].shape[1])
    z0 = first["z"].astype(np.float64) if "z" in first else np.zeros(shape)
    derived = overlay_statics(cfg, problem_from_statics(statics, cfg), z0)
    store.add_statics(run_id, derived)
    return statics | derived
