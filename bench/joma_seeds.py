"""JoMA's real-data run at the authors' settings, seeds 1–3, every snapshot's attention entropy per
layer; then each layer's minimum and rebound as mean ± SD over the seeds (scansnap.kinds.text.paper.text_view).

    .venv/bin/python -m bench.joma_seeds --steps 6000 --out joma_seeds.json [--set KEY=VALUE ...]

Defaults: ``text-joma-real`` (copied layers, Adam rebuilt every 2,929 steps at a constant rate,
batch 20 × bptt 35) with the vocabulary capped at 2,000 words, a snapshot every 100 steps, one torch
thread.  The 6,000-step record is tests/fixtures/joma_entropy_6000.json (the recorded curves the
verdict tests read); BENCHMARKS.md ("JoMA's drop and rebound over seeds") has its figures.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from scansnap.kinds.text.paper.text_view import across_seeds
from scansnap.kinds.text.science.trainer import TextTrainer
from scansnap.kinds.text.service.corpora import encoded_corpus
from scansnap.paper.presets import get_preset

SEEDS = (1, 2, 3)


def record(preset: str, steps: int, overrides: dict[str, object]) -> dict[str, object]:
    over = {
        "model.device": "cpu",
        "data.vocab_size": 2000,
        "probe.val_windows": 4,
        "optim.steps": steps,
        "snapshots.linear_every": 100,
        "snapshots.log_count": 10,
    } | overrides
    out: dict[str, object] = {"preset": preset, "overrides": over, "H": {}}
    for seed in SEEDS:
        cfg = get_preset(preset, "text").config.with_overrides(over | {"optim.seed": seed})
        t0 = time.perf_counter()
        snaps = list(TextTrainer(cfg, encoded_corpus(cfg.data)).run())
        out["steps"] = [s.step for s in snaps]
        out["H"][str(seed)] = [[round(float(h), 5) for h in s.scalars["attn_entropy"].mean(axis=1)] for s in snaps]
        print(f"seed {seed}: {steps} steps in {time.perf_counter() - t0:.0f} s", flush=True)
    return out


def summarise(rec: dict[str, object]) -> list[str]:
    steps = np.asarray(rec["steps"])
    H = np.array([rec["H"][str(s)] for s in SEEDS])  # (seeds, snapshots, layers)
    return [across_seeds(steps, H[:, :, k]).sentence(k) for k in range(H.shape[2])]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="text-joma-real")
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--out", default="joma_seeds.json")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a dotted override (JSON value)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    overrides = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    rec = record(args.preset, args.steps, overrides)
    with open(args.out, "w") as f:
        json.dump(rec, f)
    print("\n".join(summarise(rec)))


if __name__ == "__main__":
    main()
