"""``python -m scansnap run`` for real text: a text preset (``python -m scansnap presets`` lists them) or
a text config file trains in this process with a progress bar, is stored like any run, prints a
summary and, with ``--out``, exports config.json, scalars.<fmt> (metric ``attn_entropy`` per
``layer``, ...) and attn_maps.npz (:mod:`scansnap.service.export`).

The built-in corpus is a pip dependency (:mod:`scansnap.kinds.text.service.corpora`): nothing is downloaded.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from scansnap.core.metrics import METRICS, metric_names
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import load_presets
from scansnap.service.control import ProgressControl


def is_text_request(args: argparse.Namespace) -> bool:
    """A text preset by name, or a config file that holds a text config (its ``probe`` section)."""
    if args.preset:
        return args.preset in load_presets("text")
    if args.config and Path(args.config).is_file():
        try:
            d = json.loads(Path(args.config).read_text())
        except (ValueError, OSError):
            return False  # the synthetic loader reports what is wrong with the file
        return isinstance(d, dict) and "probe" in d
    return False


def load_text_config(args: argparse.Namespace, sets: dict[str, str]) -> TextRunConfig:
    if args.preset:
        cfg = load_presets("text")[args.preset].config
    else:
        cfg = TextRunConfig.from_json(Path(args.config).read_text())
    return cfg.with_overrides(sets) if sets else cfg


def run_text(args: argparse.Namespace, sets: dict[str, str]) -> tuple[Any, str, float, dict, dict, list[Path]]:
    """Train, store and export; returns (job, status, wall seconds, first scalars, last scalars, files)."""
    from tqdm import tqdm

    from scansnap.service.export import export_run
    from scansnap.service.runner import RunJob  # torch: only on this path
    from scansnap.service.store import RunStore

    cfg = load_text_config(args, sets)
    job = RunJob(cfg, RunStore(args.data_dir), name=args.name)
    bar = tqdm(total=cfg.optim.steps, unit="step", disable=args.quiet or not sys.stderr.isatty(), file=sys.stderr)
    first: dict[str, np.ndarray] = {}
    last: dict[str, np.ndarray] = {}

    def on_snapshot(s: Any) -> None:
        first.update({} if first else {**s.scalars, "step": np.array(s.step)})
        last.update({**s.scalars, "step": np.array(s.step)})

    t0 = time.perf_counter()
    status = job.run(ProgressControl(bar), on_snapshot=on_snapshot)
    wall = time.perf_counter() - t0
    bar.close()
    files = export_run(job.store, job.run_id, args.out, args.format) if args.out else []
    return job, status, wall, first, last, files


def text_summary(job: Any, status: str, wall: float, first: dict, last: dict, files: list[Path]) -> str:
    cfg, tr = job.cfg, job.trainer
    m, o, c = cfg.model, cfg.optim, tr.corpus
    steps = job.step
    tokens = steps * o.batch * o.bptt
    rate = f"{steps / wall:.1f} steps/s, {tokens / wall:,.0f} tokens/s" if wall > 0 else ""
    lines = [
        f"run {job.run_id}  {cfg.name or ''}  status={status}" + (f"  ({job.message})" if job.message else ""),
        f"device {job.device}  steps {steps}  wall {wall:.1f}s  {rate}",
        f"corpus: {c.name} — {len(c.train_ids):,} training / {len(c.val_ids):,} validation tokens, "
        f"vocabulary {len(c.vocab):,}",
        f"model: {m.n_layers} layer(s) × {m.n_heads} head(s), d_model {m.d_model}, d_ff {m.d_ff}, {m.positional} "
        f"positions, MLP {m.mlp}; {o.method} lr attention {o.lr_attention:g} / MLP {o.lr_mlp:g} / other "
        f"{o.lr_other:g}; batch {o.batch} × bptt {o.bptt}",
    ]
    if first and last:
        lines.append(f"{'metric':<28}{'step ' + str(int(first['step'])):>12}{'step ' + str(int(last['step'])):>12}")
        lines += [row for name in metric_names("text") if name in first for row in _rows(name, first, last)]
        lines.append(
            f"uniform causal attention over {o.bptt} positions: {float(tr.statics()['uniform_entropy']):.4f} nats"
        )
    lines += [f"wrote {p}" for p in files]
    return "\n".join(lines)


def _rows(name: str, first: dict, last: dict) -> list[str]:
    """One line per layer (mean over heads) for a per-layer metric, else one line."""
    if not METRICS[name].per_layer:
        return [f"{name:<28}{float(first[name]):>12.4g}{float(last[name]):>12.4g}"]
    a, b = first[name].mean(axis=1), last[name].mean(axis=1)
    return [f"{f'{name} (layer {k})':<28}{a[k]:>12.4g}{b[k]:>12.4g}" for k in range(len(a))]


def describe_text_presets() -> list[str]:
    return [f"{p.name:<26}{p.title}\n{'':<26}{p.description}" for p in load_presets("text").values()]
