"""One real-text preset trained whole, as a lecture watches it: steps/s with and without its
snapshots, the snapshot time, and layer 0's attention entropy at the start and at its minimum.

    .venv/bin/python -m bench.text_live --preset text-fig7-1layer-live [--threads 1] [--set KEY=VALUE ...]

One torch thread is what the dashboard gives a run when both training slots of a 2-core server are
busy.  BENCHMARKS.md ("Real text live on a CPU") records its figures for every ``-live`` preset.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

from scansnap.kinds.text.paper.text_view import drop_rebound
from scansnap.kinds.text.science.trainer import TextTrainer
from scansnap.kinds.text.service.corpora import encoded_corpus
from scansnap.paper.presets import get_preset


def measure(preset: str, overrides: dict[str, object]) -> dict[str, object]:
    cfg = get_preset(preset, "text").config.with_overrides({"model.device": "cpu", **overrides})
    tr = TextTrainer(cfg, encoded_corpus(cfg.data))
    train_s = snap_s = 0.0
    entropy: list[float] = []
    layers: list[np.ndarray] = []
    steps: list[int] = []
    for target in tr.schedule:
        t0 = time.perf_counter()
        tr.advance(int(target) - tr.step_count)
        t1 = time.perf_counter()
        snap = tr.snapshot()
        snap_s += time.perf_counter() - t1
        train_s += t1 - t0
        entropy.append(float(snap.scalars["attn_entropy"][0].mean()))
        layers.append(snap.scalars["attn_entropy"].mean(axis=1))
        steps.append(snap.step)
    H = np.array(layers)
    read = [drop_rebound(steps, H[:, k]) for k in range(H.shape[1])]
    n_steps = cfg.optim.steps
    return {
        "preset": preset,
        "overrides": overrides,
        "threads": torch.get_num_threads(),
        "vocab": tr.vocab_size,
        "steps": n_steps,
        "snapshots": len(entropy),
        "steps_per_s_whole_run": n_steps / (train_s + snap_s),
        "steps_per_s_training": n_steps / train_s,
        "snapshot_ms": 1000 * snap_s / len(entropy),
        "layer0_entropy_start": entropy[0],
        "layer0_entropy_min": min(entropy),
        "layer0_entropy_end": entropy[-1],
        "smoothed_per_layer": [  # scansnap.kinds.text.paper.text_view: start, minimum (at step), end, rebound
            {"start": d.start, "min": d.min_value, "min_step": d.min_step, "end": d.end, "rebound": d.rebound}
            for d in read
        ],
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--preset", default="text-fig7-1layer-live")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="a dotted override (JSON value)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    overrides = {k: json.loads(v) for k, v in (kv.split("=", 1) for kv in args.set)}
    print(json.dumps(measure(args.preset, overrides), indent=2))


if __name__ == "__main__":
    main()
