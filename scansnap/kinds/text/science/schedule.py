"""When a real-text run takes its snapshots, and how large an evaluation forward may be (no torch:
the budget check and the web process use them before anything trains)."""

from __future__ import annotations

import numpy as np

from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.text.science.config import TextRunConfig

EVAL_CHUNK_LOGITS = 2**24  # at most this many logits (positions × vocabulary) per evaluation forward


def schedule(cfg: TextRunConfig) -> np.ndarray:
    """The snapshot steps of ``cfg.snapshots`` plus the quarter points 0, ¼, ½, ¾ and the end (Fig. 7
    shows iterations 0, ¼, ½ and the end of a run), at most ``max_count`` in all: the schedule is thinned
    by as many steps as the quarter points add."""
    steps, snaps = cfg.optim.steps, cfg.snapshots
    quarters = np.round(np.array([0, 0.25, 0.5, 0.75, 1.0]) * steps).astype(np.int64)
    room = snaps.max_count
    while True:
        out = np.union1d(snapshot_steps(steps, snaps.model_copy(update={"max_count": room})), quarters)
        if len(out) <= snaps.max_count or room <= 2:
            return out.astype(np.int64)
        room -= len(out) - snaps.max_count


WEIGHTS_KEPT = 12  # steps of a run whose model weights are kept (a typed sentence's attention is computed at them)


def weight_steps(snapshots: np.ndarray, keep: int = WEIGHTS_KEPT) -> np.ndarray:
    """The snapshot steps whose weights are kept, at most ``keep`` (≥ 5): those at the quarter points
    0, ¼, ½, ¾ and the end of the run (its last snapshot), and ``keep`` minus that many more, evenly
    spread over the snapshots by index (the log-spaced start of a run is kept as densely as it is
    snapshotted)."""
    steps = np.unique(np.asarray(snapshots, dtype=np.int64))
    if len(steps) <= keep:
        return steps
    quarters = np.round(np.array([0, 0.25, 0.5, 0.75, 1.0]) * int(steps[-1])).astype(np.int64)
    fixed = np.intersect1d(steps, quarters)
    spread = steps[np.round(np.linspace(0, len(steps) - 1, keep - len(fixed))).astype(np.int64)]
    return np.union1d(fixed, spread)
