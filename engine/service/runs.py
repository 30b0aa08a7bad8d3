"""A new run in the store, created without torch (the web process creates runs; workers train them)."""

from __future__ import annotations

from engine.core.config import RunConfig
from engine.core.data import build_problem, run_statics
from engine.paper.environment import environment
from engine.service.budget import check_budget
from engine.service.store import RunStore

PENDING_DEVICE = "chosen when training starts"


def create_run(
    store: RunStore, cfg: RunConfig, name: str | None = None, owner: str | None = None, status: str = "queued"
) -> str:
    """Check the budget (before anything is allocated), then write the run and its statics in one
    transaction; returns the run id.  The device is recorded by whoever trains it."""
    check_budget(cfg)
    statics = run_statics(cfg.lr_pairs, list(cfg.replicas.seeds), build_problem(cfg.data))
    versions = environment(PENDING_DEVICE)["versions"]
    return store.create_run(
        name or cfg.name or "run", cfg.to_json(), PENDING_DEVICE, versions, owner=owner, statics=statics, status=status
    )
