"""The full Fig. 6 sweep (640 runs) as batched replicas vs the same runs one at a time with the
naive reference (tests/oracles/reference.py), measured in one process run.

    .venv/bin/python -m bench.sweep_speed [--sample N] [--json FILE]

Ours: each panel (16 (η_Y, η_Z) pairs × 10 seeds × 100 steps) is one Trainer; we time all four.
Reference: a sample of N runs per panel (each a full 100-step run with its own seed and learning
rates) is timed, and the panel's time is extrapolated as 160 × the mean sampled run time —
every run of a panel has the same shapes, so its cost does not depend on the seed or the rates.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

from engine.core.train import Trainer
from engine.paper.presets import get_preset
from tests.oracles.reference import paper_tokens, train_reference

PANELS = ("syn-medium-1", "syn-medium-3", "syn-medium-5", "syn-medium-10")


def ours(name: str) -> float:
    cfg = get_preset(name).config
    t0 = time.perf_counter()
    tr = Trainer(cfg)
    for _ in tr.run():
        pass
    return time.perf_counter() - t0


def reference_sample(name: str, n: int) -> float:
    cfg = get_preset(name).config
    d, o = cfg.data, cfg.optim
    tokens = paper_tokens(d.num_last, d.num_next_per_last, d.num_common, d.num_common_per_last, d.num_distinct_per_next)
    pairs = cfg.lr_pairs
    times = []
    for i in range(n):
        ey, ez = pairs[(i * 5) % len(pairs)]
        t0 = time.perf_counter()
        train_reference(
            tokens,
            T=int(d.T),
            batch=o.batch,
            steps=o.steps,
            lr_y=ey,
            lr_z=ez,
            momentum=o.momentum,
            zero_init=False,
            seed=1 + i,
        )
        times.append(time.perf_counter() - t0)
    return sum(times) / len(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sample", type=int, default=2, help="reference runs timed per panel")
    ap.add_argument("--json")
    args = ap.parse_args()
    rows = []
    for name in PANELS:
        runs = get_preset(name).config.n_replicas
        t_ours = ours(name)
        t_ref_run = reference_sample(name, args.sample)
        rows.append(
            {
                "panel": name,
                "runs": runs,
                "ours_s": t_ours,
                "reference_per_run_s": t_ref_run,
                "reference_extrapolated_s": t_ref_run * runs,
            }
        )
    total_ours = sum(r["ours_s"] for r in rows)
    total_ref = sum(r["reference_extrapolated_s"] for r in rows)
    res = {
        "threads": torch.get_num_threads(),
        "panels": rows,
        "total_runs": sum(r["runs"] for r in rows),
        "ours_total_s": total_ours,
        "reference_total_s_extrapolated": total_ref,
        "speedup": total_ref / total_ours,
    }
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
