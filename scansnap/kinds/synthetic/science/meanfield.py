"""The run's T→∞ mean-field twin: the theory lines of the Lab's token charts.

Every replica's (η_Y, η_Z, seed) trained again as ``model.kind = yz-meanfield`` (x = P(·|n), all
classes every step, no sampling noise), capped at :data:`MEANFIELD_MAX_STEPS` steps.  It is
computed where training runs (a worker process, or the command line), stored with the run's
statics (``mf_steps``, ``mf_z``, ``mf_c``) and only read by the web process.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from scansnap.core.device import torch_threads
from scansnap.core.errors import DivergedError
from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.kinds.synthetic.science.train import Trainer

MEANFIELD_MAX_STEPS = 1500  # the theory line stops here on longer runs (it costs ~0.5 ms a step)
MEANFIELD_MAX_FLOATS = 2_000_000  # stored floats (8 MB): beyond this, fewer replicas get a twin


def twin_config(cfg: RunConfig, replicas: int) -> RunConfig:
    """The mean-field config of the run's first ``replicas`` replicas (or fewer: whole pairs × seeds),
    in the run's replica order (pair-major, as :attr:`RunConfig.lr_pairs` × seeds)."""
    seeds, pairs = list(cfg.replicas.seeds), [list(p) for p in cfg.lr_pairs]
    if replicas < len(seeds):
        pairs, seeds = pairs[:1], seeds[:replicas]
    else:
        pairs = pairs[: replicas // len(seeds)]
    over = {
        "model.kind": "yz-meanfield",
        "replicas.seeds": seeds,
        "replicas.lr_pairs": pairs,
        "optim.steps": min(cfg.optim.steps, MEANFIELD_MAX_STEPS),
    }
    return cfg.with_overrides(over)


def twin_plan(cfg: RunConfig) -> RunConfig | None:
    """The mean-field config that :func:`meanfield_twin` trains for ``cfg``: its first R' replicas (as
    many as fit :data:`MEANFIELD_MAX_FLOATS`); None for the standard model, a run that is mean-field
    already, or a vocabulary too large for even one replica.  Runs with the same plan share a twin."""
    if cfg.model.kind != "yz":
        return None
    pb = build_problem(cfg.data)
    stored = len(snapshot_steps(min(cfg.optim.steps, MEANFIELD_MAX_STEPS), cfg.snapshots))
    per_replica = (pb.Q + pb.K) * pb.M_ctx * stored
    fit = min(cfg.n_replicas, MEANFIELD_MAX_FLOATS // max(per_replica, 1))
    return twin_config(cfg, fit) if fit >= 1 else None


def meanfield_twin(cfg: RunConfig) -> dict[str, np.ndarray] | None:
    """``mf_steps`` (S,), ``mf_z`` (R', S, Q, M_ctx) and ``mf_c`` (R', S, K, M_ctx) float32: the twin of
    :func:`twin_plan` trained (None where there is none)."""
    tw = twin_plan(cfg)
    return None if tw is None else train_twin(tw)


def train_twin(tw: RunConfig, cancelled: Callable[[], bool] = lambda: False) -> dict[str, np.ndarray] | None:
    """Train a :func:`twin_plan` (one torch thread: the same numbers whatever the caller's threads); None
    when ``cancelled()`` turns true (asked after every snapshot)."""
    snaps = []
    try:
        with torch_threads(1):  # a small T→∞ model: one thread is fastest (see torch_threads)
            for snap in Trainer(tw).run():
                if cancelled():
                    return None
                snaps.append(snap)
    except DivergedError:  # the twin diverges where the run may not (or not yet): keep what it had
        if len(snaps) < 2:
            return None
    return {
        "mf_steps": np.array([s.step for s in snaps], dtype=np.int64),
        "mf_z": np.stack([s.arrays["z"] for s in snaps], axis=1).astype(np.float32),
        "mf_c": np.stack([s.arrays["c"] for s in snaps], axis=1).astype(np.float32),
    }
