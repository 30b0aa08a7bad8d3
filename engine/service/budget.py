"""Size limits derived from a memory budget: refuse a config before it allocates anything.

One machinery for every kind of run: an :class:`Estimate` (bytes held, by part, and the work of the
whole run), the per-run memory limit ``SCANSNAP_MAX_RUN_MB`` (default 2048, or
the cluster's share of a node where runs train on a Ray cluster) and :func:`check_within`,
which refuses a run over either limit with what it needs and what to reduce.  Each kind supplies its
estimate and its work limit (``engine/service/kinds/<kind>/budget.py``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from engine.core.config import ConfigError

SAFETY = 1.5
DEFAULT_MAX_RUN_MB = 2048
MAX_RUN_MB_ENV = "SCANSNAP_MAX_RUN_MB"


@dataclass(frozen=True)
class WorkLimit:
    """A cap on one run's work, read from ``env`` (default ``default``), in ``unit``s."""

    env: str
    default: float
    unit: str

    def value(self) -> float:
        return float(os.environ.get(self.env, self.default))


class Estimate:
    """What a run will hold, as (what, bytes) ``parts``, and its ``work`` (in its kind's
    :class:`WorkLimit` units); the total is their sum × ``SAFETY``."""

    work: float
    note: str = ""  # what dominates, when that is worth saying

    def parts(self) -> tuple[tuple[str, float], ...]:
        raise NotImplementedError

    @property
    def total_mb(self) -> float:
        return SAFETY * sum(b for _, b in self.parts()) / 2**20

    def describe(self) -> str:
        mb = 2**20
        parts = ", ".join(f"{what} {b / mb:,.1f} MB" for what, b in self.parts())
        return f"~{self.total_mb:,.1f} MB ({parts}, ×{SAFETY} safety)" + (f"; {self.note}" if self.note else "")


@dataclass
class ClusterMemory:
    """The memory one run may hold on the Ray cluster the runs train on (MB; None: no cluster), set by
    :mod:`engine.service.cluster_watch` from the cluster's nodes."""

    run_mb: float | None = None


CLUSTER = ClusterMemory()


def check_within(est: Estimate, what: str, limit: WorkLimit, memory_advice: str, work_advice: str) -> None:
    """Raise ConfigError when ``est`` exceeds the memory limit or ``limit`` (``what``: "this run")."""
    if est.total_mb > max_run_mb():
        raise ConfigError(
            f"{what} needs {est.describe()}, over the limit of {max_run_mb():,.0f} MB per run "
            f"({limit_source()}): {memory_advice}"
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


def limit_source() -> str:
    if MAX_RUN_MB_ENV not in os.environ and CLUSTER.run_mb is not None:
        return "the Ray cluster's smallest memory per CPU among its nodes"
    return MAX_RUN_MB_ENV
