"""The worker side of a synthetic (Y, Z) run (torch: imported where the run trains, by
:func:`scansnap.service.run_kinds.open_training`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from scansnap.kinds.synthetic.paper.run_theory import replica_theory, theory_scalars
from scansnap.kinds.synthetic.paper.theory_view import overlay_statics, step_grid
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Snapshot, Trainer
from scansnap.kinds.synthetic.service.budget import check_budget
from scansnap.kinds.synthetic.service.theory import INLINE_WORK, OverlayProcess, curve_work
from scansnap.kinds.synthetic.service.twin import BackgroundTwin
from scansnap.service.store import RunStore


class YZTraining:
    """The paper's (Y, Z) model (run kind ``synthetic``): its trainer, with Theorem 4 calibrated on the
    run's own start stored beside each snapshot where it applies, Theorem 4's overlay of every replica
    for the charts, and the mean-field twin computed beside the training."""

    def __init__(self, cfg: RunConfig, store: RunStore):
        check_budget(cfg)
        self.cfg, self.trainer = cfg, Trainer(cfg)
        self.z0 = self.trainer.Z0.double().cpu().numpy()  # (R, Q, M_ctx)
        schedule = np.asarray(self.trainer.schedule)
        steps = np.union1d(step_grid(cfg.optim.steps), schedule)  # the snapshots' and the charts' steps
        problem, R = self.trainer.problem, cfg.n_replicas
        self.theories = [replica_theory(cfg, problem, self.z0[r], r, steps, only_if_solid=True) for r in range(R)]
        self.theory = theory_scalars(self.theories, schedule)
        small = curve_work(cfg, problem, self.theories) <= INLINE_WORK
        self.overlay = overlay_statics(cfg, problem, self.z0, self.theories) if small else None

    def started(self, store: RunStore, run_id: str) -> None:
        """Its statics were written with its row (:func:`scansnap.kinds.synthetic.service.runs.create_run`); the charts'
        Theorem 4 overlay joins them now when it was quick to compute (else beside the training)."""
        if self.overlay is not None and "theory_step" not in store.statics(run_id):
            store.add_statics(run_id, self.overlay)

    def stored(self, snap: Snapshot) -> tuple[dict[str, np.ndarray], Any]:
        at = int(np.searchsorted(self.trainer.schedule, snap.step))
        for name, values in self.theory.items():  # B_theory, dz_common_theory: NaN where Thm 4 does not apply
            snap.scalars[name] = values[at]
        return snap.arrays, snap.scalar_blocks()

    def after_first_snapshot(self, store: RunStore, run_id: str) -> Beside | None:
        """The theory lines of the charts, once per run, computed beside the training (so its first step
        does not wait for them): Theorem 4's overlay where it takes long (:class:`OverlayProcess`) and
        the mean-field twin (scansnap/kinds/synthetic/service/twin.py)."""
        have = store.statics(run_id)
        overlay = None if "theory_step" in have else OverlayProcess(self.cfg, self.z0, self.theories, store, run_id)
        twin = None if "mf_steps" in have else BackgroundTwin(self.cfg, store, run_id)
        return Beside(overlay, twin) if overlay or twin else None


class Beside:
    """What a run computes beside its training, finished together."""

    def __init__(self, *tasks: OverlayProcess | BackgroundTwin | None) -> None:
        self.tasks = [t for t in tasks if t is not None]

    def finish(self, cancel: bool = False) -> None:
        for task in self.tasks:
            task.finish(cancel)
