"""Size limits derived from a memory and a disk budget: refuse a config before it allocates anything.

One machinery for every kind of run: an :class:`Estimate` (bytes held in memory and bytes stored, by
part, and the work of the whole run), the per-run memory limit ``SCANSNAP_MAX_RUN_MB`` (default 2048, or
the cluster's share of a node where runs train on a Ray cluster), the per-run disk limit
``SCANSNAP_MAX_RUN_DISK_MB`` (default 1024) and :func:`check_within`, which refuses a run over any limit
with what it needs and what to reduce; :func:`checkpoint_seconds` is the time a run spends storing its
checkpoints, for every kind's slot-time estimate.  Each kind supplies its
estimate and its work limit (``scansnap/service/kinds/<kind>/budget.py``).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from scansnap.core.config import ConfigError
from scansnap.service.limits import env_number

SAFETY = 1.5
# A worker process before its run allocates anything: Python, torch and the trainers, forked from the fork
# server (its peak RSS, shared pages counted, training syn-small's 100 steps: 376 MB, bench/estimates.py);
# added after the safety factor.
WORKER_MB = 400.0
# A checkpoint or a step's kept weights is held three times while it is stored: the numpy copies of the
# tensors, the .npz buffer and the bytes taken of it (scansnap.service.blobs.pack_npz).
PACKED_COPIES = 3
DEFAULT_MAX_RUN_MB = 2048
MAX_RUN_MB_ENV = "SCANSNAP_MAX_RUN_MB"
DEFAULT_MAX_RUN_DISK_MB = 1024
MAX_RUN_DISK_ENV = "SCANSNAP_MAX_RUN_DISK_MB"
# Training state is stored with a snapshot at most this often (and never at the last one: a finished run
# keeps no checkpoint); scansnap.service.runner reads it from here.
CHECKPOINT_SECONDS = float(os.environ.get("SCANSNAP_CHECKPOINT_S", "5"))
# A checkpoint packed and written into the store, at most this many bytes a second of one busy slot (a
# 620 MB checkpoint took ~3 s here: bench/estimates.py); and a SQLite page's share beside the bytes stored.
STORE_BYTES_PER_S = 1e8
PAGE_OVERHEAD = 1.1
# A checkpoint takes the disk three times at its largest: the one stored, the next written in its place
# (its pages are taken before the old ones are freed) and that transaction in the WAL until SQLite copies it
# into the file (bench/estimates.py: the store's files at their largest).
CHECKPOINT_DISK_COPIES = 3
# The WAL holds what a run writes until SQLite copies it into the file: up to its autocheckpoint of 1,000
# pages (4 MiB) beside a run's largest transaction (a snapshot; a checkpoint is counted above).
WAL_BYTES = 4 * 2**20


@dataclass(frozen=True)
class WorkLimit:
    """A cap on one run's work, read from ``env`` (default ``default``), in ``unit``s."""

    env: str
    default: float
    unit: str

    def value(self) -> float:
        return float(os.environ.get(self.env, self.default))


class Estimate:
    """What a run will hold, as (what, bytes) ``parts``, what it will store, as (what, bytes)
    ``disk_parts``, and its ``work`` (in its kind's :class:`WorkLimit` units); the memory total is the
    parts' sum × ``SAFETY`` plus the worker process itself (:data:`WORKER_MB`), the disk total the stored
    parts' sum × :data:`PAGE_OVERHEAD`."""

    work: float
    note: str = ""  # what dominates, when that is worth saying

    def parts(self) -> tuple[tuple[str, float], ...]:
        raise NotImplementedError

    def disk_parts(self) -> tuple[tuple[str, float], ...]:
        return ()

    @property
    def disk_bytes(self) -> float:
        return PAGE_OVERHEAD * sum(b for _, b in self.disk_parts())

    def describe_disk(self) -> str:
        parts = ", ".join(f"{what} {b / 2**20:,.1f} MB" for what, b in self.disk_parts())
        return f"~{self.disk_bytes / 2**20:,.1f} MB on disk ({parts}, × {PAGE_OVERHEAD} for the store's pages)"

    @property
    def total_mb(self) -> float:
        return SAFETY * sum(b for _, b in self.parts()) / 2**20 + WORKER_MB

    def describe(self) -> str:
        mb = 2**20
        parts = ", ".join(f"{what} {b / mb:,.1f} MB" for what, b in self.parts())
        return f"~{self.total_mb:,.1f} MB (({parts}) ×{SAFETY} safety, + {WORKER_MB:,.0f} MB the worker process)" + (
            f"; {self.note}" if self.note else ""
        )


@dataclass
class ClusterMemory:
    """The memory one run may hold on the Ray cluster the runs train on (MB; None: no cluster), set by
    :mod:`scansnap.service.cluster_watch` from the cluster's nodes."""

    run_mb: float | None = None


CLUSTER = ClusterMemory()


def check_within(
    est: Estimate, what: str, limit: WorkLimit, memory_advice: str, work_advice: str, disk_advice: str = ""
) -> None:
    """Raise ConfigError when ``est`` exceeds the memory limit, the disk limit or ``limit`` (``what``:
    "this run")."""
    if est.total_mb > max_run_mb():
        raise ConfigError(
            f"{what} needs {est.describe()}, over the limit of {max_run_mb():,.0f} MB per run "
            f"({limit_source()}): {memory_advice}"
        )
    if est.disk_bytes > max_run_disk_mb() * 2**20:
        raise ConfigError(
            f"{what} would store {est.describe_disk()}, over the limit of {max_run_disk_mb():,.0f} MB per run "
            f"({MAX_RUN_DISK_ENV}): {disk_advice or 'keep fewer snapshots (snapshots.max_count) or a smaller run'}"
        )
    if est.work > limit.value():
        raise ConfigError(
            f"{what} needs ~{est.work:.2e} {limit.unit}, over the limit of {limit.value():.2e} ({limit.env}): "
            + work_advice
        )


def max_run_mb() -> float:
    """The operator's ``SCANSNAP_MAX_RUN_MB``; else, on a cluster, its share of a node per run; else 2048."""
    if MAX_RUN_MB_ENV in os.environ:
        return float(os.environ[MAX_RUN_MB_ENV])
    return CLUSTER.run_mb if CLUSTER.run_mb is not None else DEFAULT_MAX_RUN_MB


def max_run_disk_mb() -> float:
    """The operator's ``SCANSNAP_MAX_RUN_DISK_MB`` (default 1024): what one run may store."""
    try:
        return float(env_number(MAX_RUN_DISK_ENV, DEFAULT_MAX_RUN_DISK_MB))
    except ValueError as e:
        raise ConfigError(f"{e} of MB (e.g. 1024)") from None


def checkpoint_seconds(other_s: float, snapshots: int, checkpoint_bytes: float) -> float:
    """Seconds a run spends storing checkpoints of ``checkpoint_bytes`` each, beside ``other_s`` seconds of
    everything else: one with a snapshot once :data:`CHECKPOINT_SECONDS` have passed since the last (so at
    most ⌊other_s / CHECKPOINT_SECONDS⌋ + 1 of them), never at the last snapshot, each at
    :data:`STORE_BYTES_PER_S`."""
    if snapshots < 2 or checkpoint_bytes <= 0:
        return 0.0
    count = min(snapshots - 1, math.floor(other_s / max(CHECKPOINT_SECONDS, 1e-9)) + 1)
    return count * checkpoint_bytes / STORE_BYTES_PER_S


def limit_source() -> str:
    if MAX_RUN_MB_ENV not in os.environ and CLUSTER.run_mb is not None:
        return "the Ray cluster's smallest memory per CPU among its nodes"
    return MAX_RUN_MB_ENV
