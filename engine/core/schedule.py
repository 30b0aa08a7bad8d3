"""Snapshot schedules: linear and log-spaced steps with a bounded count per run."""

from __future__ import annotations

import numpy as np

from engine.core.config import SnapshotConfig

FULL_SNAPSHOT_FLOATS = 1_000_000  # above this R·(Q+K)·M, snapshots keep the top-k tokens per class
TOPK = 32


def full_snapshots(R: int, Q: int, K: int, M: int) -> bool:
    """Whether a snapshot stores full z rows and c_n (R·(Q+K)·M ≤ FULL_SNAPSHOT_FLOATS floats), or
    only the TOPK largest c_{l|n} per class with their z (the per-run size bound)."""
    return R * (Q + K) * M <= FULL_SNAPSHOT_FLOATS


def topk_note(R: int, Q: int, K: int, M: int) -> str:
    """Why a run keeps only top-k snapshots, with its numbers, and how to get full ones."""
    return (
        f"This run stores only the top-{min(TOPK, M)} tokens per class in its snapshots: "
        f"R·(Q+K)·M = {R}·({Q}+{K})·{M} = {R * (Q + K) * M:,} floats a snapshot is over the "
        f"per-run bound of {FULL_SNAPSHOT_FLOATS:,}, so the per-token charts are off. "
        "Fewer replicas (or a smaller vocabulary) keep full snapshots."
    )


def snapshot_steps(steps: int, cfg: SnapshotConfig) -> np.ndarray:
    """Sorted unique steps in [0, steps]: 0 and ``steps``, ``log_count`` log-spaced steps, and
    every ``linear_every``-th step, thinned evenly so that at most ``max_count`` remain
    (log-spaced steps are kept first: they carry the early, fast part of the dynamics)."""
    ends = np.array([0, steps])
    log = np.unique(np.round(np.logspace(0, np.log10(max(steps, 1)), cfg.log_count)).astype(np.int64))
    log = log[(log > 0) & (log <= steps)] if cfg.log_count else np.array([], dtype=np.int64)
    if cfg.linear_every:  # at most 4·max_count evenly spread multiples: never the whole range
        n_lin = steps // cfg.linear_every + 1
        idx = (
            np.arange(n_lin)
            if n_lin <= 4 * cfg.max_count
            else np.unique(np.round(np.linspace(0, n_lin - 1, 4 * cfg.max_count)).astype(np.int64))
        )
        lin = idx * cfg.linear_every
    else:
        lin = np.array([], dtype=np.int64)
    keep = np.unique(np.concatenate([ends, log])).astype(np.int64)
    if len(keep) > cfg.max_count:
        keep = _thin(keep, cfg.max_count)
    room = cfg.max_count - len(keep)
    extra = np.setdiff1d(lin, keep)
    if room > 0 and len(extra):
        keep = np.union1d(keep, _thin(extra, room) if len(extra) > room else extra)
    return keep.astype(np.int64)


def _thin(values: np.ndarray, count: int) -> np.ndarray:
    """``count`` values spread evenly over ``values`` (first and last kept)."""
    if count >= len(values):
        return values
    idx = np.unique(np.round(np.linspace(0, len(values) - 1, count)).astype(np.int64))
    return values[idx]
