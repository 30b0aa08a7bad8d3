"""The server's view of a Ray cluster's capacity (scansnap.service.cluster_watch): slots from the live
nodes' CPUs, the per-run memory budget from the smallest memory per CPU, applied to a live manager."""

from __future__ import annotations

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.service.budget import check_budget
from scansnap.paper.presets import get_preset
from scansnap.service import budget
from scansnap.service.cluster_watch import Capacity, capacity_of
from scansnap.service.jobs import JobManager
from scansnap.service.store import RunStore

GB = 2**30


def node(cpus: float, memory: float, alive: bool = True) -> dict:
    return {"Alive": alive, "Resources": {"CPU": cpus, "memory": memory, "node:10.0.0.1": 1.0}}


def test_capacity_counts_live_cpus_and_the_smallest_share_of_memory_per_cpu():
    nodes = [node(8, 32 * GB), node(2, 4 * GB), node(16, 16 * GB, alive=False), {"Alive": True, "Resources": {}}]
    cap = capacity_of(nodes)
    assert cap.cpus == 10  # the dead node and the node without CPUs count for nothing
    assert cap.run_mb == 2 * 1024  # min(32/8, 4/2) GB per CPU = 2 GB = 2,048 MB
    with pytest.raises(ValueError, match="no live node with a CPU"):
        capacity_of([node(4, GB, alive=False)])


@pytest.fixture
def manager(tmp_path, monkeypatch):
    monkeypatch.delenv(budget.MAX_RUN_MB_ENV, raising=False)
    monkeypatch.setattr(budget.CLUSTER, "run_mb", None)  # restored after the test
    m = JobManager(RunStore(tmp_path), max_concurrent=2)
    yield m
    m.shutdown()


def test_the_cluster_sets_the_slots_and_the_memory_budget_of_the_next_run(manager, monkeypatch):
    cfg = get_preset("syn-medium-10").config
    need = check_budget(cfg).total_mb
    manager.use_capacity(Capacity(cpus=5, run_mb=need / 2), fixed_slots=False)
    assert manager.scheduler.slots == manager.max_concurrent == 5 and manager.scheduler.max_light > 0
    with pytest.raises(ConfigError) as e:
        check_budget(cfg)
    said = str(e.value)
    assert f"limit of {need / 2:,.0f} MB" in said and "the Ray cluster's smallest memory per CPU" in said
    manager.use_capacity(Capacity(cpus=1, run_mb=need * 2), fixed_slots=False)  # a node lost, a bigger one joined
    assert manager.scheduler.slots == 1
    assert check_budget(cfg).total_mb == need  # fits now
    monkeypatch.setenv(budget.MAX_RUN_MB_ENV, str(need / 4))  # the operator's limit wins
    with pytest.raises(ConfigError, match="SCANSNAP_MAX_RUN_MB"):
        check_budget(cfg)


def test_slots_the_operator_fixed_stay(manager):
    manager.use_capacity(Capacity(cpus=7, run_mb=1000.0), fixed_slots=True)
    assert manager.scheduler.slots == 2 and budget.max_run_mb() == 1000.0
