"""The training step before and after issue 16, side by side in one process run.

    .venv/bin/python -m bench.step_speed [--device cpu|cuda|auto] [--repeats N] [--threads N] [--cpu-time] [--json FILE]

Old: tests/oracles/old_step.py (the step as it was: gathered support rows of Y, hand-written softmax,
separate optimiser pass).  New: scansnap/kinds/synthetic/science/train.py (decoder by token role, chunked, fused
update).
Both train the same config from the same initial state; their timed blocks alternate (old, new, old, …)
and each figure is the median of ``--repeats`` blocks after a warm-up, so a change in the machine's load
hits both sides alike.

1. ms/step and ms per replica-step at R = 10 (one lr pair × seeds 1–10: the panel's first 10 runs) and
   R = 160 (the whole panel) for every syn-medium panel (presets syn-medium-1/3/5/10);
2. R = 1 (the Lab's single runs: syn-small, lecture, syn-medium-10 with one seed);
3. chunk sizes 8–64 (replicas per chunk) at R = 160, new step only, for 16 pairs × 10 seeds and for
   160 pairs × 1 seed (one seed: every chunk is full).
Records the torch device, the thread count and the load average before and after.  ``--threads 1
--cpu-time`` times the process's CPU time instead of the wall clock: with one thread that is the step's
own cost, much less disturbed by other programs sharing the cores than wall time is.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections.abc import Callable

import torch

import scansnap.kinds.synthetic.science.yz_kinds as yz_kinds
from scansnap.core.device import describe_device, resolve_device
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.presets import get_preset
from tests.oracles.old_step import OldTrainer

PANELS = ("syn-medium-1", "syn-medium-3", "syn-medium-5", "syn-medium-10")
CLOCK = time.perf_counter


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def side_by_side(trainers: dict[str, Callable[[int], None]], steps: int, repeats: int, device: torch.device) -> dict:
    """Median ms/step of each trainer's ``advance``, timed in alternating blocks of ``steps`` steps."""
    times: dict[str, list[float]] = {k: [] for k in trainers}
    for advance in trainers.values():
        advance(2)  # warm-up: first-touch of buffers, kernel selection
    for _ in range(repeats):
        for name, advance in trainers.items():
            sync(device)
            t0 = CLOCK()
            advance(steps)
            sync(device)
            times[name].append(1e3 * (CLOCK() - t0) / steps)
    return {k: statistics.median(v) for k, v in times.items()}


def on(cfg: RunConfig, device: str, **over: object) -> RunConfig:
    return cfg.with_overrides({"model.device": device, **{k: json.dumps(v) for k, v in over.items()}})


def old_vs_new(cfg: RunConfig, steps: int, repeats: int) -> dict:
    new, old = Trainer(cfg), OldTrainer(cfg)
    ms = side_by_side({"old": old.advance, "new": new.advance}, steps, repeats, new.device)
    R = cfg.n_replicas
    return {
        "R": R,
        "old_ms_per_step": ms["old"],
        "new_ms_per_step": ms["new"],
        "old_ms_per_replica_step": ms["old"] / R,
        "new_ms_per_replica_step": ms["new"] / R,
        "speedup": ms["old"] / ms["new"],
    }


def panels(device: str, repeats: int, names: tuple[str, ...] = PANELS) -> list[dict]:
    rows = []
    for name in names:
        full = on(get_preset(name).config, device)
        ten = on(full, device, **{"replicas.lr_pairs": [[1.0, 1.0]]})
        r10, r160 = old_vs_new(ten, 20, repeats), old_vs_new(full, 5, repeats)
        rows.append(
            {
                "panel": name,
                "R10": r10,
                "R160": r160,
                "new_per_replica_R10_over_R160": r10["new_ms_per_replica_step"] / r160["new_ms_per_replica_step"],
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def single_runs(device: str, repeats: int) -> list[dict]:
    rows = []
    for name in ("syn-small", "lecture", "syn-medium-10"):
        cfg = on(get_preset(name).config, device, **{"replicas.seeds": [1], "replicas.lr_pairs": None})
        rows.append({"config": name, **old_vs_new(cfg, 100, repeats)})
    return rows


def with_chunk(tr: Trainer, chunk: int) -> Callable[[int], None]:
    """``tr.advance`` with ``chunk`` replicas per chunk."""

    def go(n: int) -> None:
        yz_kinds.CHUNK_REPLICAS = chunk
        tr.advance(n)

    return go


def chunk_sizes(device: str, repeats: int) -> list[dict]:
    base = on(get_preset("syn-medium-10").config, device)
    pairs = [[1 + i / 100, 1.0] for i in range(160)]
    one_seed = on(base, device, **{"replicas.seeds": [1], "replicas.lr_pairs": pairs})
    rows = []
    for label, cfg in (("16 pairs × 10 seeds", base), ("160 pairs × 1 seed", one_seed)):
        tr = Trainer(cfg)
        ms = side_by_side({str(c): with_chunk(tr, c) for c in (8, 16, 32, 64)}, 5, repeats, tr.device)
        rows.append({"replicas": label, "ms_per_step": {int(k): v for k, v in ms.items()}})
    yz_kinds.CHUNK_REPLICAS = 32
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--threads", type=int, help="torch intra-op threads (default: torch's, = cores)")
    ap.add_argument("--cpu-time", action="store_true", help="time CPU time of the process (use with --threads 1)")
    ap.add_argument("--panels", nargs="+", choices=PANELS, default=list(PANELS), help="syn-medium panels to time")
    ap.add_argument("--json")
    args = ap.parse_args()
    global CLOCK
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.cpu_time:
        CLOCK = time.process_time
    load_before = os.getloadavg()
    res = {
        "device": describe_device(resolve_device(args.device)),
        "threads": torch.get_num_threads(),
        "clock": "process CPU time" if args.cpu_time else "wall",
        "load_before": load_before,
        "panels": panels(args.device, args.repeats, tuple(args.panels)),
        "single_runs": single_runs(args.device, args.repeats),
        "chunk_sizes": chunk_sizes(args.device, args.repeats),
        "load_after": os.getloadavg(),
    }
    r160 = next((p for p in res["panels"] if p["panel"] == "syn-medium-10"), None)
    if r160 is not None:
        res["targets"] = {
            "syn-medium-10 R=160 <= 0.2 ms per replica-step": r160["R160"]["new_ms_per_replica_step"] <= 0.2,
            "syn-medium-10 per replica >= 2x cheaper at R=160 than at R=10": r160["new_per_replica_R10_over_R160"] >= 2,
        }
    text = json.dumps(res, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
