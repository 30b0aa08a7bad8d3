"""The Ray executor on a real two-node cluster (two ``ray start`` processes on loopback): grids,
reproduce and live runs give the numbers the local pool gives; a node killed mid-grid loses no cell;
a node killed mid-run leaves the run interrupted, and its resume equals an uninterrupted run."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from bench.raycluster import SECOND
from scansnap.cli import main
from scansnap.paper.presets import get_preset
from scansnap.service.cluster import LOST, drive
from scansnap.service.control import RunControl
from scansnap.service.run_kinds import create_run
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.guards import GUARD_MS, GUARD_S
from tests.reproduction_help import assert_same_reproduction
from tests.service.test_run_rows import TEXT_SMALL, assert_same_run

pytestmark = pytest.mark.cluster
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def _sets(sets: dict[str, object]) -> list[str]:
    return [x for k, v in sets.items() for x in ("--set", f"{k}={v}")]


def _second_nodes() -> list[str]:
    """The ids (their first 8 digits) of the alive nodes with the ``second`` resource."""
    import ray

    return [n["NodeID"][:8] for n in ray.nodes() if n["Alive"] and SECOND in n["Resources"]]


def _second_node_id() -> str:
    (node,) = _second_nodes()
    return node


def _replace_the_second_node(cluster, killed: str) -> None:
    """A new second node for the tests after one that killed it (only then: a test that fails before its
    kill leaves two nodes, and a third would change what the tests after it see); back once the cluster
    counts the killed node dead and the new one alive (counting nodes alone passed while the killed one
    was still counted alive: the next test's run was placed on it and lost)."""
    cluster.start_node(f'{{"{SECOND}": 1}}')
    assert _poll(
        lambda: len(ids := _second_nodes()) == 1 and ids[0] != killed and cluster.alive_nodes() == 2, GUARD_S
    ), f"no new second node in {GUARD_S} s (alive: {_second_nodes()}, killed: {killed})"


def _poll(done, timeout: float, every: float = 0.1) -> bool:
    end = time.monotonic() + timeout
    while not done():
        if time.monotonic() > end:
            return False
        time.sleep(every)
    return True


def _same_cells(a_dir: Path, b_dir: Path, a_out: Path, b_out: Path) -> None:
    """The two sweeps' cells (matched by their values and seed) hold the same stored values."""
    a, b = pd.read_parquet(a_out / "summary.parquet"), pd.read_parquet(b_out / "summary.parquet")
    keys = [c for c in a.columns if c.startswith(("model.", "optim.", "data.")) or c == "seed"]
    a, b = a.sort_values(keys).reset_index(drop=True), b.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(a.drop(columns="run"), b.drop(columns="run"))
    with RunStore(a_dir) as sa, RunStore(b_dir) as sb:
        for ra, rb in zip(a["run"], b["run"], strict=True):
            assert_same_run(sa, sb, ra, rb)


def _where_and_threads(_item: object) -> tuple[str, str, int, str]:
    """On a node: the node's id, where ``scansnap`` was imported from, torch's threads and BLAS's."""
    import os

    import ray
    import torch

    import scansnap

    return (
        ray.get_runtime_context().get_node_id()[:8],
        scansnap.__file__,
        torch.get_num_threads(),
        os.environ["OMP_NUM_THREADS"],
    )


def test_the_nodes_run_the_package_the_server_ships_with_one_thread(cluster):
    """The nodes were started outside the checkout with nothing of it on their path (bench/raycluster.py):
    every task imports ``scansnap`` from what the driver shipped (Ray's runtime_env), and computes with one
    torch thread and one BLAS thread, as a local worker; the second node's tasks too."""
    import sys

    from ray import cloudpickle

    from scansnap.service.cluster import task_map

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the nodes have no tests/ to import it from
    root = str(Path(__file__).resolve().parents[2])
    seen = list(task_map(_where_and_threads, range(8)))
    assert all("runtime_resources" in path and not path.startswith(root) for _, path, _, _ in seen), seen
    assert {(threads, blas) for _, _, threads, blas in seen} == {(1, "1")}
    if _second_node_id() not in {node for node, _, _, _ in seen}:  # Ray placed every task on the head: once more
        import ray

        on_second = ray.remote(num_cpus=1, resources={SECOND: 1})(_where_and_threads)
        node, path, threads, blas = ray.get(on_second.remote(0))
        assert node == _second_node_id() and not path.startswith(root) and (threads, blas) == (1, "1")


def test_a_grid_on_the_cluster_stores_what_the_local_pool_stores(cluster, tmp_path):
    """A text grid (2 cells, one actor on each node) and a synthetic rate grid (one run of replicas,
    its mean-field twin computed on the node) through the cluster: every stored value equals the
    local pool's, and each run records the node it trained on."""
    grids = [
        ["--preset", "text-seq-32-live", *_sets(TEXT_SMALL), "--grid", "model.positional=none,learned"],
        ["--preset", "syn-small", "--set", "optim.steps=20", "--grid", "optim.eta_y=1,10", "--seeds", "1-2"],
    ]
    for i, grid in enumerate(grids):
        local, remote = tmp_path / f"local{i}", tmp_path / f"remote{i}"
        here = ["--data-dir", str(local), "sweep", *grid, "--jobs", "2", "--out", str(local / "o"), "--quiet"]
        there = ["--data-dir", str(remote), "sweep", *grid, "--cluster", cluster.address, "--out", str(remote / "o")]
        assert main(here) == 0 and main([*there, "--quiet"]) == 0
        _same_cells(local, remote, local / "o", remote / "o")
        with RunStore(remote) as store:
            nodes = {r["node"] for r in store.list_runs()}
        assert None not in nodes and all("node " in n for n in nodes)
        if i == 0:  # two cells at once on two nodes of one CPU each: one on each
            assert len(nodes) == 2, nodes


def test_a_node_killed_mid_grid_loses_no_cell(cluster, tmp_path, one_torch_thread):
    """Two text cells, one on each node; the second node is killed while its cell trains: the cell is
    resumed from its last checkpoint on the node left, and every cell equals its config trained alone."""
    sets = {**TEXT_SMALL, "optim.steps": 800, "snapshots.linear_every": 40}
    grid = ["--preset", "text-seq-32-live", *_sets(sets), "--grid", "model.positional=none,learned"]
    data, out = tmp_path / "data", tmp_path / "out"
    second = _second_node_id()
    code: list[int] = []
    sweep = threading.Thread(
        target=lambda: code.append(
            main(["--data-dir", str(data), "sweep", *grid, "--cluster", cluster.address, "--out", str(out), "--quiet"])
        )
    )
    # the store is opened once, before the sweep, and read from then on: opening it ten times a second beside
    # the sweep's own opening (each open writes the schema) once failed the sweep with "database is locked"
    watch = RunStore(data)

    def on_second_with_a_checkpoint() -> bool:  # and in its first half: the kill lands long before its end
        return any(
            second in (r["node"] or "") and watch.checkpoint(r["id"]) is not None and r["last_step"] <= 400
            for r in watch.list_runs()
        )

    sweep.start()
    killed = False
    try:
        assert _poll(on_second_with_a_checkpoint, GUARD_S), f"no cell trained on the second node (sweep exit {code})"
        cluster.kill(cluster.nodes.pop())
        killed = True
    finally:
        sweep.join(300)
        watch.close()
        if killed:
            _replace_the_second_node(cluster, second)
    assert code == [0]
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(summary) == 2 and set(summary["status"]) == {"finished"}
    base = get_preset("text-seq-32-live", "text").config.with_overrides(sets)
    with RunStore(data) as store:
        nodes = {store.get_run(r)["node"] for r in summary["run"]}
        # the lost cell finished on the node left (one finished on the killed node: the kill came after its end)
        assert all(second not in n for n in nodes), f"a cell finished on the killed node {second}: {nodes}"
        for _, cell in summary.iterrows():
            cfg = base.with_overrides({"model.positional": cell["model.positional"]})
            alone = RunJob(cfg, store, name="alone")
            assert alone.run() == "finished"
            a, b = store.scalars(cell["run"]), store.scalars(alone.run_id)
            pd.testing.assert_frame_equal(a, b)  # max |Δ| = 0 on every metric, at every step


def test_a_node_killed_mid_run_leaves_it_interrupted_and_its_resume_is_exact(cluster, tmp_path, one_torch_thread):
    """A live run throttled to 100 steps/s on the second node; the node is killed after a checkpoint:
    the run is stored ``interrupted`` with its snapshots up to that checkpoint; resumed (on any node) it
    ends equal to the same config trained uninterrupted here: max |Δ| = 0."""
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 600, "model.device": "cpu"})
    store = RunStore(tmp_path / "data")
    second = _second_node_id()
    try:
        rid = create_run(store, cfg, "killed", status="queued")
        control = RunControl()
        control.max_steps_per_s = 100
        result: list[tuple] = []
        run = threading.Thread(target=lambda: result.append(drive(store, rid, control, resources={SECOND: 1})))

        def checkpointed() -> bool:
            return (store.checkpoint(rid) or (0,))[0] >= 60

        run.start()
        killed = False
        try:
            assert _poll(lambda: checkpointed() or not run.is_alive(), GUARD_S) and checkpointed(), (
                f"no checkpoint on the second node (the run: {result or 'still training'})"
            )
            cluster.kill(cluster.nodes.pop())
            killed = True
            run.join(GUARD_S)
        finally:
            if killed:
                _replace_the_second_node(cluster, second)
        (status, why), stored = result[0], store.get_run(rid)
        assert status == LOST and stored["status"] == "interrupted" and why == stored["message"]
        assert "was lost at step" in why
        ckpt = store.checkpoint(rid)[0]
        kept = store.steps(rid)
        assert ckpt >= 60 and max(kept) < cfg.optim.steps
        assert drive(store, rid) == ("finished", None)
        assert set(kept) - {s for s in kept if s > ckpt} <= set(store.steps(rid))
        alone = RunJob(cfg, RunStore(tmp_path / "alone"), name="killed")
        assert alone.run() == "finished"
        a, b = store.scalars(rid), alone.store.scalars(alone.run_id)
        pd.testing.assert_frame_equal(a, b)
        assert store.steps(rid) == alone.store.steps(alone.run_id)
        for step in store.steps(rid)[-3:]:
            x, y = store.snapshot(rid, step), alone.store.snapshot(alone.run_id, step)
            for k in x:
                np.testing.assert_array_equal(x[k], y[k])
        alone.store.close()
    finally:
        store.close()


def test_quick_reproduce_on_the_cluster_gives_the_local_verdicts(cluster, quick_reproduction, tmp_path):
    """Every item a cluster task (Fig. 6's panels too): the verdicts and every data file equal the
    local run's (``quick_reproduction``: tests/conftest.py).  Equal to 1e-9 relative, not bit for bit:
    the mean-field part of ``theorems`` varies by ~1e-15 between two local runs too (float64 sums)."""
    assert main(["reproduce", "--quick", "--cluster", cluster.address, "--out", str(tmp_path)]) == 0
    assert_same_reproduction(tmp_path, quick_reproduction[0])


@pytest.mark.browser
@pytest.mark.server
def test_the_dashboard_with_scansnap_cluster_trains_a_lab_run_on_a_node(cluster, tmp_path):
    """A server started with SCANSNAP_CLUSTER set to the head's Ray Client address (ray://HOST:PORT, what a
    server outside the cluster's network uses): its slots are the cluster's CPUs; a Lab run started in the
    browser trains on a node (the run records it) and the page watches it finish."""
    import re

    from playwright.sync_api import sync_playwright

    from bench.webserver import launch_chromium
    from tests.e2e.watching import serve_watched

    data = tmp_path / "data"
    client = cluster.client_address  # ray://127.0.0.1:PORT
    with serve_watched(data, tmp_path / "server.log", SCANSNAP_CLUSTER=client) as srv, sync_playwright() as p:
        browser = launch_chromium(p)
        page = browser.new_page(viewport={"width": 1280, "height": 720})
        page.set_default_timeout(GUARD_MS)
        page.goto(f"{srv.url}/?preset=syn-small&optim.steps=200&speed=100")
        page.get_by_role("button", name="▶ Start").click()
        page.wait_for_function("() => window.location.search.includes('run=')")
        run_id = re.search(r"run=(\w+)", page.url).group(1)
        page.get_by_text(re.compile(r"^finished · step 200")).wait_for(timeout=GUARD_MS)
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "cluster-lab.png"))
        browser.close()
    with RunStore(data) as store:
        run = store.get_run(run_id)
    assert run["status"] == "finished" and run["last_step"] == 200
    assert "node " in run["node"] and run["device"].startswith("cpu")


def test_a_run_stopped_before_any_node_takes_it_ends_stopped(cluster, tmp_path):
    """A run whose host no node can place (it asks for a resource none has) waits; Stop ends it, and
    the store says so (nothing was trained)."""
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 50, "model.device": "cpu"})
    with RunStore(tmp_path) as store:
        rid = create_run(store, cfg, "never placed", status="queued")
        control = RunControl()
        threading.Timer(1.0, control.stop).start()
        status, message = drive(store, rid, control, resources={"no-such-resource": 1})
        assert (status, message) == ("stopped", "stopped before a cluster node took it")
        run = store.get_run(rid)
        assert run["status"] == "stopped" and run["node"] is None and store.steps(rid) == []


def test_the_server_follows_the_clusters_cpus_and_memory(cluster, tmp_path, monkeypatch):
    """A manager on the cluster: its slots are the cluster's CPUs and a run's memory budget the nodes'
    memory per CPU, asked again while it runs: the second node killed, one slot; back, two."""
    import ray

    from scansnap.service import budget, cluster_watch
    from scansnap.service.cluster import connect
    from scansnap.service.jobs import JobManager

    connect(cluster.address)
    monkeypatch.setattr(cluster_watch, "CHECK_S", 0.5)
    monkeypatch.delenv(budget.MAX_RUN_MB_ENV, raising=False)
    monkeypatch.setattr(budget.CLUSTER, "run_mb", None)  # restored after the test
    share = min(n["Resources"]["memory"] / n["Resources"]["CPU"] for n in ray.nodes() if n["Alive"]) / 2**20
    m = JobManager(RunStore(tmp_path), cluster=cluster.address)
    second = _second_node_id()
    try:
        assert m.scheduler.slots == 2 and budget.max_run_mb() == pytest.approx(share)
        try:
            cluster.kill(cluster.nodes.pop())
            assert _poll(lambda: m.scheduler.slots == 1, GUARD_S), "the server still counts the lost node's CPU"
        finally:
            _replace_the_second_node(cluster, second)
        assert _poll(lambda: m.scheduler.slots == 2, GUARD_S), "the server does not count the node that came back"
    finally:
        m.shutdown()
