"""The worker side of a synthetic (Y, Z) run (torch: imported where the run trains, by
:func:`engine.service.run_kinds.open_training`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.core.config import RunConfig
from engine.core.train import Snapshot, Trainer
from engine.paper.run_theory import replica_theory, theory_scalars
from engine.paper.theory_view import overlay_tables, step_grid
from engine.service.budget import check_budget
from engine.service.store import RunStore
from engine.service.twin import BackgroundTwin


class YZTraining:
    """The paper's (Y, Z) model (run kind ``synthetic``): its trainer, with Theorem 4 calibrated on the
    run's own start (its charts' overlay stored once with the statics, its values at each snapshot
    beside it), and the mean-field twin computed beside the training."""

    def __init__(self, cfg: RunConfig, store: RunStore):
        check_budget(cfg)
        self.cfg, self.trainer = cfg, Trainer(cfg)
        z0 = self.trainer.Z0.double().cpu().numpy()  # (R, Q, M_ctx)
        schedule = np.asarray(self.trainer.schedule)
        steps = np.union1d(step_grid(cfg.optim.steps), schedule)  # Theorem 4 once, on both time axes
        theories = [replica_theory(cfg, self.trainer.problem, z0[r], r, steps) for r in range(cfg.n_replicas)]
        self.theory = theory_scalars(theories, steps, schedule)
        self.overlay = overlay_tables(theories, steps)

    def started(self, store: RunStore, run_id: str) -> None:
        """Its statics were written with its row (:func:`engine.service.runs.create_run`); the charts'
        Theorem 4 overlay joins them before the first step (once: a resumed run has it)."""
        if "theory_step" not in store.statics(run_id):
            store.add_statics(run_id, self.overlay)

    def stored(self, snap: Snapshot) -> tuple[dict[str, np.ndarray], Any]:
        at = int(np.searchsorted(self.trainer.schedule, snap.step))
        for name, values in self.theory.items():  # B_theory, dz_common_theory: NaN where Thm 4 does not apply
            snap.scalars[name] = values[at]
        return snap.arrays, snap.scalar_blocks()

    def after_first_snapshot(self, store: RunStore, run_id: str) -> BackgroundTwin | None:
        """The theory lines of the token charts, once per run, computed beside the training (so its
        first step does not wait for them: engine/service/twin.py)."""
        return None if "mf_steps" in store.statics(run_id) else BackgroundTwin(self.cfg, store, run_id)
