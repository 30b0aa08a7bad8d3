"""The server's view of the Ray cluster its runs train on (``SCANSNAP_CLUSTER``): its capacity, asked
at start and again every :data:`CHECK_S` by a short-lived process (the web server never joins Ray), so
that a node lost or added changes the training slots and the per-run memory budget of the next run
(:meth:`scansnap.service.jobs.JobManager.use_capacity`).

Slots = the cluster's CPUs (a run takes one).  Memory: a node of ``C`` CPUs and ``M`` bytes of Ray
memory runs at most ``C`` runs at once, so a run may hold ``M / C``; the budget is the smallest such
share over the live nodes, so a run fits wherever Ray places it.  An operator's
``SCANSNAP_MAX_JOBS`` / ``SCANSNAP_MAX_RUN_MB`` win over both.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from typing import Any

from scansnap.service.worker import CLUSTER_ENV, ROOT

CHECK_S = 60.0  # how often the server asks again (the job manager's cluster watch)


@dataclass(frozen=True)
class Capacity:
    """What the cluster offers: ``cpus`` (the slots) and ``run_mb`` (the memory one run may hold)."""

    cpus: int
    run_mb: float


def capacity_of(nodes: list[dict[str, Any]]) -> Capacity:
    """From ``ray.nodes()``: the live nodes' CPUs, and the smallest memory per CPU among those with CPUs."""
    live = [n["Resources"] for n in nodes if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]
    if not live:
        raise ValueError("the Ray cluster has no live node with a CPU")
    cpus = sum(int(r["CPU"]) for r in live)
    return Capacity(max(1, cpus), min(r.get("memory", 0.0) / r["CPU"] for r in live) / 2**20)


def ask(address: str, timeout_s: float = 120.0) -> Capacity:
    """The capacity of the Ray cluster at ``address`` (:func:`scansnap.service.cluster.cluster_nodes` in a
    process of its own); ValueError says why it could not be reached."""
    code = "import sys; from scansnap.service.cluster import cluster_nodes; print(cluster_nodes(sys.argv[1]))"
    try:
        out = subprocess.run(
            [sys.executable, "-c", code, address],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            cwd=ROOT,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise ValueError(f"{CLUSTER_ENV}={address}: no answer from the Ray cluster in {timeout_s:.0f} s") from None
    if out.returncode != 0:
        last = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise ValueError(f"{CLUSTER_ENV}={address}: {last}")
    return capacity_of(json.loads(out.stdout.strip().splitlines()[-1]))
