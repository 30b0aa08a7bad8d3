"""Engine speed and memory, measured side by side in one process run.

    .venv/bin/python -m bench.engine_speed [--quick] [--device cpu|cuda|auto] [--json FILE]

1. steps/s of the engine vs the naive reference (tests/oracles/reference.py: one-hot B×T×M, attention
   over positions, autograd, two torch.optim.SGD) on syn-small and on syn-medium-10 (R = 1);
2. a replica batch of R = 160 (one Fig. 6 panel: 16 (η_Y, η_Z) pairs × 10 seeds) vs R = 1, per step;
3. peak memory (fresh subprocess, VmHWM) and steps/s for M ≈ 10,000, K = 20, 10 query tokens,
   batch 128, in the compact and the paper layout.
Timings are medians of repeated timed blocks after a warm-up, all with the same torch thread count, on
the torch device ``--device`` (recorded; the reference runs there too).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch

from scansnap.core.device import describe_device, resolve_device
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.presets import get_preset
from tests.oracles.reference import paper_tokens, train_reference


def median_time(fn: Callable[[], None], repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


DEVICE = "auto"


def sync() -> None:
    if resolve_device(DEVICE).type == "cuda":
        torch.cuda.synchronize()


def single(cfg: RunConfig) -> RunConfig:
    return cfg.with_overrides({"replicas.seeds": "[1]", "replicas.lr_pairs": None, "model.device": DEVICE})


def engine_step_time(cfg: RunConfig, steps: int, repeats: int) -> float:
    tr = Trainer(cfg)
    return median_time(lambda: tr.advance(steps), repeats) / steps


def reference_step_time(cfg: RunConfig, steps: int, repeats: int) -> float:
    d = cfg.data
    tokens = paper_tokens(d.num_last, d.num_next_per_last, d.num_common, d.num_common_per_last, d.num_distinct_per_next)
    o = cfg.optim

    def go() -> None:
        train_reference(
            tokens,
            T=int(d.T),
            batch=o.batch,
            steps=steps,
            lr_y=o.eta_y,
            lr_z=o.eta_z,
            momentum=o.momentum,
            zero_init=cfg.model.init == "zero",
            device=resolve_device(DEVICE),
        )

    return median_time(go, repeats) / steps


def vs_reference(name: str, steps: int, repeats: int) -> dict:
    cfg = single(get_preset(name).config)
    ours = engine_step_time(cfg, steps * 10, repeats)
    ref = reference_step_time(cfg, steps, repeats)
    return {"config": name, "engine_steps_per_s": 1 / ours, "reference_steps_per_s": 1 / ref, "speedup": ref / ours}


def replica_scaling(name: str, steps: int, repeats: int) -> dict:
    cfg = get_preset(name).config.with_overrides({"model.device": DEVICE})
    t160 = engine_step_time(cfg, steps, repeats)
    t1 = engine_step_time(single(cfg), steps * 10, repeats)
    return {
        "config": name,
        "R": cfg.n_replicas,
        "ms_per_step_R": 1e3 * t160,
        "ms_per_step_1": 1e3 * t1,
        "ratio": t160 / t1,
        "per_replica_speedup": cfg.n_replicas * t1 / t160,
    }


LARGE = {
    "data": {"num_last": 10, "num_next_per_last": 2, "num_common": 10, "num_distinct_per_next": 499, "T": 128},
    "optim": {"batch": 128, "steps": 20},
}


def _status_mib(field: str) -> float:
    """A memory figure of this process from /proc/self/status (VmRSS, VmHWM), MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def large_vocab_child(layout: str, steps: int) -> None:
    """Runs in a fresh process: prints steps/s and the peak RSS (MiB) of the M≈10,000 config.

    The peak is VmHWM after resetting it (``clear_refs`` 5) once torch is imported, so the
    import's own transient peak is not counted; ``rss_before_trainer_mib`` is what the
    interpreter and torch hold before the trainer allocates anything."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _status_mib("VmRSS")
    cfg = RunConfig.from_dict({**LARGE, "data": {**LARGE["data"], "layout": layout}, "model": {"device": DEVICE}})
    tr = Trainer(cfg)
    tr.advance(2)
    t0 = time.perf_counter()
    tr.advance(steps)
    dt = time.perf_counter() - t0
    tr.snapshot()
    peak = _status_mib("VmHWM")
    print(
        json.dumps(
            {
                "layout": layout,
                "M": tr.problem.M,
                "K": tr.problem.K,
                "steps_per_s": steps / dt,
                "peak_rss_mib": peak,
                "rss_before_trainer_mib": base,
                "trainer_peak_mib": peak - base,
            }
        )
    )


def large_vocab(layout: str, steps: int) -> dict:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.engine_speed",
            "--child",
            layout,
            "--steps",
            str(steps),
            "--threads",
            str(torch.get_num_threads()),
            "--device",
            DEVICE,
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--json")
    ap.add_argument("--child")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--threads", type=int, help="torch intra-op threads for both sides (default: torch's, = cores)")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    args = ap.parse_args()
    global DEVICE
    DEVICE = args.device
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.child:
        large_vocab_child(args.child, args.steps)
        return
    reps = 3 if args.quick else 5
    res = {
        "device": describe_device(resolve_device(DEVICE)),
        "threads": torch.get_num_threads(),
        "vs_reference": [vs_reference("syn-small", 20, reps), vs_reference("syn-medium-10", 10, reps)],
        "replicas": [replica_scaling("syn-medium-1", 10, reps), replica_scaling("syn-medium-10", 5, reps)],
        "large_vocab": [large_vocab("compact", 20), large_vocab("paper", 5)],
    }
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
