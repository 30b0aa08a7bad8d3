"""The Ray path against the local pool, side by side on this machine (BENCHMARKS.md, "Ray cluster").

A real two-node Ray cluster on loopback (bench/raycluster.py: two ``ray start`` processes, one CPU
each) against the local pool with two worker processes: the same two cores either way.

1. Per run: a Syn-Small run of 100 steps through the job manager (the dashboard's path) from
   submit to its first stored snapshot and to its end; and the control round trip: Pause pressed
   (the manager's ``pause``) until the store says ``paused``, which on the cluster is server → node
   → rows back → store.  Each after one warm-up run, ``--repeats`` times; on the cluster both by the
   head's address (HOST:PORT) and through Ray Client (ray://HOST:PORT, the head's client server).
2. ``python -m scansnap reproduce --quick``: locally and with ``--cluster`` (every item a task, Fig. 6's
   panels too).
3. A 12-cell text grid (positional none/sinusoidal/learned × 1–2 layers × seeds 1–2) with
   ``--jobs 2`` and with ``--cluster``.
4. Predicted wall times on 1, 4 and 16 nodes of 8 cores (``predict``): each unit's time from the
   measurements quoted in the output, plus the measured per-run overhead, list-scheduled longest
   first onto the cores.

    .venv/bin/python -m bench.cluster_overhead [--repeats 3]
"""

from __future__ import annotations

import argparse
import heapq
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.raycluster import ROOT, loopback_cluster

PY = sys.executable
GRID = [
    "--preset",
    "text-seq-32-live",
    "--set",
    "optim.steps=150",
    "--set",
    "snapshots.linear_every=50",
    "--grid",
    "model.positional=none,sinusoidal,learned",
    "--grid",
    "model.n_layers=1,2",
    "--seeds",
    "1-2",
    "--quiet",
]
SYN = {"optim.steps": 100, "model.device": "cpu"}


def _until(cond: Any, timeout: float = 120, every: float = 0.005) -> float:
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("the run did not get there")
        time.sleep(every)
    return time.perf_counter() - t0


def per_run(cluster: str | None, repeats: int) -> dict[str, Any]:
    """Submit → first snapshot, submit → finished, Pause → stored 'paused' (seconds; medians)."""
    from scansnap.paper.presets import get_preset
    from scansnap.service.jobs import JobManager
    from scansnap.service.store import RunStore

    cfg = get_preset("syn-small").config.with_overrides(SYN)
    long = cfg.with_overrides({"optim.steps": 5000})
    with tempfile.TemporaryDirectory() as d:
        store = RunStore(d)
        m = JobManager(store, max_concurrent=2, cluster=cluster)
        first, total, pause = [], [], []
        try:
            for i in range(repeats + 1):
                t0 = time.perf_counter()
                rid = m.submit(cfg)
                f = _until(lambda rid=rid: bool(store.steps(rid)))
                m.wait(rid, 120)
                if i:  # the first is the warm-up
                    first.append(f)
                    total.append(time.perf_counter() - t0)
            for _ in range(repeats):
                rid = m.submit(long)
                m.set_speed(rid, 50)
                _until(lambda rid=rid: len(store.steps(rid)) >= 3)
                t0 = time.perf_counter()
                m.pause(rid)
                _until(lambda rid=rid: store.get_run(rid)["status"] == "paused")
                pause.append(time.perf_counter() - t0)
                m.stop(rid)
                m.wait(rid, 60)
        finally:
            m.shutdown()
            store.close()
    med = statistics.median
    return {
        "first_snapshot_s": med(first),
        "finished_s": med(total),
        "pause_round_trip_s": med(pause),
        "first_snapshot_all": first,
        "pause_all": pause,
    }


def timed(cmd: list[str]) -> float:
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t0


def cell_seconds(data_dir: Path) -> list[float]:
    """Each stored run's created → last update (its queue wait excluded only where it had none)."""
    from scansnap.service.store import RunStore

    with RunStore(data_dir) as store:
        return sorted(r["updated"] - r["created"] for r in store.list_runs())


def makespan(tasks: list[float], slots: int) -> float:
    """Longest-processing-time-first list scheduling of ``tasks`` (seconds) onto ``slots`` cores."""
    free = [0.0] * slots
    for t in sorted(tasks, reverse=True):
        heapq.heappush(free, heapq.heappop(free) + t)
    return max(free)


def predict(overhead_s: float) -> dict[str, Any]:
    """Predicted wall times (s) of the full reproduction with 3 seeds and of the open-question grid.

    Unit times (one core each): the full reproduction's synthetic items from BENCHMARKS.md "Reproduce"
    (full: 30.1 s, of which Fig. 6 10.1 s as 3 panels and theorems 17.1 s), the real-text items from
    "Real text" (one thread: 160 ms/step 1 layer, 194 ms 3 layers, 204 ms JoMA's 2 layers);
    fig7 = 1,500 steps of each model, joma-real = 58,580 steps, per seed.  The open-question grid:
    positional none/sinusoidal/learned × 1–4 layers × sequence length 32/128/512 × seeds 1–3 of the
    -live settings, 1,500 steps each, at the steps/s BENCHMARKS.md "Real text live" measured (1 layer
    21.5 steps/s at length 35, 3 layers 19.9, length 512 12.3: interpolated linearly in layers and in
    length)."""
    synthetic = [10.1 / 3] * 3 + [17.1, 30.1 - 10.1 - 17.1]
    fig7_seed = [1500 * 0.160, 1500 * 0.194]
    joma_seed = 58_580 * 0.204
    seeds = 3
    as_items = [*synthetic, seeds * sum(fig7_seed), seeds * joma_seed]  # before: a text item trained its seeds in turn
    as_seeds = [*synthetic, *fig7_seed * seeds, *[joma_seed] * seeds]  # as built: each (model, seed) a task of its own

    def live_seconds(layers: int, length: int) -> float:
        per_layer = (21.5 - 19.9) / 2  # steps/s lost per added layer
        at_35 = 21.5 - per_layer * (layers - 1)
        rate = at_35 - (at_35 - 12.3 * at_35 / 21.5) * (length - 35) / (512 - 35)
        return 1500 / rate

    def paper_seconds(layers: int, length: int) -> float:
        """The paper's settings (full vocabulary, batch 20, 1,500 steps): the measured step time at
        length 35 (160 ms, +17 ms per added layer: 194 ms at 3), times length/35 (the decoder, ~75 %
        of a step, is linear in the tokens of a step; attention's quadratic part is 1-2 %)."""
        return 1500 * (0.160 + 0.017 * (layers - 1)) * length / 35

    grid = [
        live_seconds(L, n)
        for _ in ("none", "sinusoidal", "learned")
        for L in (1, 2, 3, 4)
        for n in (32, 128, 512)
        for _ in range(3)
    ]
    paper_grid = [paper_seconds(L, n) for _ in range(3) for L in (1, 2, 3, 4) for n in (32, 128, 512) for _ in range(3)]
    out: dict[str, Any] = {
        "overhead_per_task_s": overhead_s,
        "units": {"reproduce_as_items": len(as_items), "reproduce_as_seeds": len(as_seeds), "grid_cells": len(grid)},
    }
    for name, tasks in (
        ("reproduce_full_3_seeds", as_items),
        ("reproduce_seed_tasks", as_seeds),
        ("open_question_grid_live", grid),
        ("open_question_grid_paper", paper_grid),
    ):
        with_overhead = [t + overhead_s for t in tasks]
        out[name] = {"one_core": sum(tasks)} | {f"{n}_nodes_x8": makespan(with_overhead, 8 * n) for n in (1, 4, 16)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--predict-from", metavar="JSON", help="only the predictions, from a stored run's overhead")
    args = ap.parse_args()
    if args.predict_from:
        stored = json.loads(Path(args.predict_from).read_text())
        print(json.dumps(predict(stored["result"]["predicted"]["overhead_per_task_s"]), indent=2))
        return
    result: dict[str, Any] = {"local": {}, "cluster": {}, "cluster_client": {}}
    result["local"]["per_run"] = per_run(None, args.repeats)
    with tempfile.TemporaryDirectory() as d:
        out = Path(d)
        reproduce = [PY, "-m", "scansnap", "reproduce", "--quick", "--out", str(out / "r")]
        result["local"]["reproduce_quick_s"] = timed(reproduce)
        result["local"]["grid_12_s"] = timed(
            [
                PY,
                "-m",
                "scansnap",
                "--data-dir",
                str(out / "gd"),
                "sweep",
                *GRID,
                "--jobs",
                "2",
                "--out",
                str(out / "g"),
            ]
        )
        result["local"]["grid_cell_s"] = cell_seconds(out / "gd")
    with loopback_cluster(2) as cluster, tempfile.TemporaryDirectory() as d:
        out = Path(d)
        result["cluster"]["per_run"] = per_run(cluster.address, args.repeats)
        result["cluster"]["reproduce_quick_s"] = timed(
            [PY, "-m", "scansnap", "reproduce", "--quick", "--cluster", cluster.address, "--out", str(out / "r")]
        )
        result["cluster"]["grid_12_s"] = timed(
            [
                PY,
                "-m",
                "scansnap",
                "--data-dir",
                str(out / "gd"),
                "sweep",
                *GRID,
                "--cluster",
                cluster.address,
                "--out",
                str(out / "g"),
            ]
        )
        result["cluster"]["grid_cell_s"] = cell_seconds(out / "gd")
        # last: each join through Ray Client leaves a server process on the head for a while after it ends
        result["cluster_client"]["per_run"] = per_run(cluster.client_address, args.repeats)  # ray://: Ray Client
    loc, ray, client = result["local"], result["cluster"], result["cluster_client"]["per_run"]
    result["ratios_cluster_over_local"] = {
        "first_snapshot": ray["per_run"]["first_snapshot_s"] / loc["per_run"]["first_snapshot_s"],
        "pause_round_trip": ray["per_run"]["pause_round_trip_s"] / loc["per_run"]["pause_round_trip_s"],
        "client_first_snapshot": client["first_snapshot_s"] / loc["per_run"]["first_snapshot_s"],
        "client_pause_round_trip": client["pause_round_trip_s"] / loc["per_run"]["pause_round_trip_s"],
        "reproduce_quick": ray["reproduce_quick_s"] / loc["reproduce_quick_s"],
        "grid_12": ray["grid_12_s"] / loc["grid_12_s"],
    }
    overhead = ray["per_run"]["first_snapshot_s"] - loc["per_run"]["first_snapshot_s"]
    result["predicted"] = predict(max(0.0, overhead))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
