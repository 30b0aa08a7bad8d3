"""The full Fig. 6 sweep (640 runs) as batched replicas vs the same runs one at a time with the
naive reference (tests/oracles/reference.py), measured in one process run.

    .venv/bin/python -m bench.sweep_speed [--sample N] [--cli-repeats N] [--device cpu|cuda|auto] [--json FILE]

Ours: each panel (16 (η_Y, η_Z) pairs × 10 seeds × 100 steps) is one Trainer; we time all four with the
preset's snapshots (``ours_s``), and training alone with the new step and with the step before issue 16
(tests/oracles/old_step.py), side by side (``new_train_s``, ``old_train_s``).
Reference: a sample of N runs per panel (each a full 100-step run with its own seed and learning
rates, spread over the panel's grid) is timed, and the panel's time is extrapolated as 160 × the
mean sampled run time.  Every run of a panel has the same shapes, yet single runs measured here
vary by up to 2× (0.6–1.2 s on syn-medium-10), so the extrapolation is rough.
CLI: the syn-medium-10 panel as one ``python -m scansnap run --preset syn-medium-10`` process (interpreter
start, run store and snapshots included; the median of ``--cli-repeats`` fresh processes) against the
reference doing the same 160 runs one after another, all of them timed (no extrapolation).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import torch

from scansnap.core.device import describe_device, resolve_device
from scansnap.kinds.synthetic.science.train import Trainer
from scansnap.paper.presets import get_preset
from tests.oracles.old_step import OldTrainer
from tests.oracles.reference import paper_tokens, train_reference

PANELS = ("syn-medium-1", "syn-medium-3", "syn-medium-5", "syn-medium-10")
ROOT = Path(__file__).resolve().parents[1]


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def ours(name: str, device: str) -> dict[str, float]:
    cfg = get_preset(name).config.with_overrides({"model.device": device})
    steps = cfg.optim.steps
    return {
        "ours_s": timed(lambda: [None for _ in Trainer(cfg).run()]),
        "old_train_s": timed(lambda: OldTrainer(cfg).advance(steps)),
        "new_train_s": timed(lambda: Trainer(cfg).advance(steps)),
    }


def _reference_runs(name: str, indices: list[int], device: str) -> list[float]:
    """Seconds of each reference run ``i`` of the panel (pair ``i // seeds``, seed ``seeds[i % seeds]``, as
    the preset orders its replicas pair-major), one after another."""
    cfg = get_preset(name).config
    d, o = cfg.data, cfg.optim
    tokens = paper_tokens(d.num_last, d.num_next_per_last, d.num_common, d.num_common_per_last, d.num_distinct_per_next)
    pairs, seeds = cfg.lr_pairs, list(cfg.replicas.seeds)
    times = []
    for i in indices:
        ey, ez = pairs[i // len(seeds)]
        kw = dict(T=int(d.T), batch=o.batch, steps=o.steps, lr_y=ey, lr_z=ez, momentum=o.momentum)
        t0 = time.perf_counter()
        train_reference(tokens, **kw, seed=seeds[i % len(seeds)], zero_init=False, device=device)
        times.append(time.perf_counter() - t0)
    return times


def reference_sample(name: str, n: int, device: str) -> float:
    """Mean seconds of n reference runs spread over the panel's (pair, seed) grid."""
    runs = get_preset(name).config.n_replicas
    times = _reference_runs(name, [(i * runs // n + i) % runs for i in range(n)], device)
    return sum(times) / len(times)


def reference_panel(name: str, device: str) -> list[float]:
    """Seconds of every run of the panel, one after another."""
    return _reference_runs(name, list(range(get_preset(name).config.n_replicas)), device)


def cli_panel(device: str) -> float:
    """Wall time of ``python -m scansnap run --preset syn-medium-10`` (a fresh process, its own run store)."""
    with tempfile.TemporaryDirectory(prefix="sweep-cli-") as data:
        cmd = [sys.executable, "-m", "scansnap", "--data-dir", data, "run", "--preset", "syn-medium-10", "--quiet"]
        cmd += ["--set", f"model.device={device}"]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, env=env, check=True, capture_output=True)
        return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sample", type=int, default=4, help="reference runs timed per panel")
    ap.add_argument("--cli-repeats", type=int, default=3, help="fresh `engine run` processes timed (median)")
    ap.add_argument("--device", default="auto", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--panels", nargs="+", choices=PANELS, default=list(PANELS), help="panels to time")
    ap.add_argument(
        "--reference-panel",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="time the naive reference on every run of syn-medium-10, one after another (minutes)",
    )
    ap.add_argument("--json")
    args = ap.parse_args()
    device = str(resolve_device(args.device))
    load_before = os.getloadavg()
    rows = []
    for name in args.panels:
        runs = get_preset(name).config.n_replicas
        t = ours(name, args.device)
        t_ref_run = reference_sample(name, args.sample, device)
        rows.append({"panel": name, "runs": runs, **t, "reference_per_run_s": t_ref_run})
        rows[-1]["reference_extrapolated_s"] = t_ref_run * runs
        print(json.dumps(rows[-1]), flush=True)
    total = {k: sum(r[k] for r in rows) for k in ("ours_s", "old_train_s", "new_train_s", "reference_extrapolated_s")}
    res = {
        "device": describe_device(resolve_device(args.device)),
        "threads": torch.get_num_threads(),
        "load_before": load_before,
        "panels": rows,
        "total_runs": sum(r["runs"] for r in rows),
        "ours_total_s": total["ours_s"],
        "old_train_total_s": total["old_train_s"],
        "new_train_total_s": total["new_train_s"],
        "reference_total_s_extrapolated": total["reference_extrapolated_s"],
        "speedup": total["reference_extrapolated_s"] / total["ours_s"],
    }
    if args.cli_repeats > 0:
        cli_runs = [cli_panel(args.device) for _ in range(args.cli_repeats)]
        res |= {"cli_panel_s": statistics.median(cli_runs), "cli_panel_runs_s": cli_runs}
    if args.reference_panel:
        ref10_runs = reference_panel("syn-medium-10", device)
        res["reference_panel_s"] = sum(ref10_runs)
        res["reference_panel_run_s"] = {
            "min": min(ref10_runs),
            "median": statistics.median(ref10_runs),
            "max": max(ref10_runs),
        }
    if "cli_panel_s" in res and "reference_panel_s" in res:
        res["cli_panel_vs_reference"] = res["reference_panel_s"] / res["cli_panel_s"]
    res["load_after"] = os.getloadavg()
    if len(rows) == len(PANELS) and "cli_panel_vs_reference" in res:  # the targets are the whole sweep's
        res["targets"] = {
            "full Fig. 6 sweep trains in <= 10 s": total["new_train_s"] <= 10,
            "one-process panel >= 20x the naive reference one run after another": res["cli_panel_vs_reference"] >= 20,
        }
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
