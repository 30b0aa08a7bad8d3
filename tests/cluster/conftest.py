"""A real two-node Ray cluster on loopback (bench/raycluster.py), one per test module: a head and a
second node, two ``ray start`` processes; this test process joins it as a driver."""

from __future__ import annotations

import pytest

from bench.raycluster import loopback_cluster

CHECKPOINT_S = "0.3"  # a node's runs store their training state this often (SCANSNAP_CHECKPOINT_S)


@pytest.fixture(scope="module")
def cluster():
    with loopback_cluster(2, env={"SCANSNAP_CHECKPOINT_S": CHECKPOINT_S}) as c:
        yield c
