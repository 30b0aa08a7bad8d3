"""``reproduce`` on a Ray cluster (scansnap.service.cluster.reproduce_items): the items go to the cluster
longest first and their results come back in the report's order.  The cluster's ``task_map`` is replaced
by a recorder (the real cluster: tests/cluster)."""

from __future__ import annotations

from scansnap.paper.items.catalog import ITEMS
from scansnap.paper.items.costs import longest_first
from scansnap.service import cluster


def test_the_items_go_to_the_cluster_longest_first_and_come_back_in_report_order(monkeypatch):
    submitted: list[str] = []

    def recorder(fn, items):
        submitted.extend(items)
        return iter(f"result of {name}" for name in items)

    monkeypatch.setattr(cluster, "task_map", recorder)
    names = list(ITEMS)
    assert cluster.reproduce_items(names, quick=True) == [f"result of {n}" for n in names]
    assert submitted == longest_first(names, True) != names
