"""Snapshot schedules: linear and log-spaced steps with a bounded count per run."""

from __future__ import annotations

import numpy as np

from scansnap.core.config import SnapshotConfig

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
    """Sorted unique steps in [0, steps]: 0 and ``steps``, ``log_count`` log-spaced steps and every
    ``linear_every``-th step, at most ``max_count`` of them.  When they do not fit, the run's start keeps
    its own spacing and the rest is log-spaced: the first half of the budget is the schedule's first steps
    (what a short run of the same config stores, where the scan and the snap happen), the other half
    log-spaced from there to the end; so a long run keeps the dynamics a short one shows."""
    ends = np.array([0, steps], dtype=np.int64)
    log = _log_spaced(1, steps, cfg.log_count) if cfg.log_count else np.zeros(0, dtype=np.int64)
    n_lin = steps // cfg.linear_every + 1 if cfg.linear_every else 0
    if n_lin <= cfg.max_count:  # every linear step, checked below for room
        lin = np.arange(n_lin, dtype=np.int64) * (cfg.linear_every or 1)
        everything = np.unique(np.concatenate([ends, log, lin]))
        if len(everything) <= cfg.max_count:
            return everything.astype(np.int64)
    head_count = max(1, cfg.max_count // 2)
    head_lin = np.arange(min(n_lin, head_count), dtype=np.int64) * (cfg.linear_every or 1)
    head = np.unique(np.concatenate([[0], log, head_lin]))[:head_count]
    tail = _log_spaced(int(head[-1]), steps, cfg.max_count - len(head) + 1)
    out = np.union1d(head, tail)
    return np.append(out[out < steps][: cfg.max_count - 1], steps).astype(np.int64)


def _log_spaced(start: int, end: int, count: int) -> np.ndarray:
    """Up to ``count`` distinct integers log-spaced from ``start`` to ``end`` (both included when count ≥ 2)."""
    if count <= 0 or end < start:
        return np.zeros(0, dtype=np.int64)
    lo = max(start, 1)
    out = np.unique(np.round(np.geomspace(lo, max(end, lo), count)).astype(np.int64))
    if start == 0:
        out = np.union1d([0], out[1:] if count > 1 else out)
    return out[(out >= start) & (out <= end)]
