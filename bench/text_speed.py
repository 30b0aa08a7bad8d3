"""Real-text training speed and memory, measured side by side in one process run.

    .venv/bin/python -m bench.text_speed [--device cpu|cuda] [--threads 2] [--steps 20] [--repeats 5]
        [--live-steps N] [--json FILE]

1. tokens/s of TextTrainer on the 1-layer paper model (preset text-fig7-1layer: emsize 200, d_hid
   200, 1 head, dropout 0.3, SGD lr 5 / 10 on the MLP, clip 0.5, batch 20 × bptt 35) on the built-in
   corpus (full vocabulary), next to a plain ``nn.TransformerEncoder`` model of the same size (the
   PyTorch word-LM tutorial's model, as in the paper's notebook) trained by the same loop on the
   same batches: timed blocks of ``--steps`` steps alternate between the two, medians of
   ``--repeats`` blocks after a warm-up (and the ratio of the fastest blocks, less sensitive to
   other load), both with the same torch thread count;
2. the time of one snapshot (probe maps + validation loss);
3. peak RSS of a fresh process that trains 5 steps and takes a snapshot, against the estimate of
   scansnap/kinds/text/service/budget.py;
4. the live variant (preset text-fig7-1layer-live) next to the paper's settings: timed blocks of
   ``--steps`` steps alternating between the two trainers, then the live variant's whole run
   (1,500 steps with its snapshots, as a lecture sees it; ``--live-steps`` fewer): its steps/s and
   layer 0's attention entropy at the start and at its minimum.
Items 1, 2 and 4 train on ``--device``; item 3 is the CPU memory estimate's check, on the CPU.
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import torch
from torch import nn

from scansnap.kinds.text.science.data import window
from scansnap.kinds.text.science.model import sinusoidal_table
from scansnap.kinds.text.science.trainer import TextTrainer
from scansnap.kinds.text.service.budget import estimate
from scansnap.kinds.text.service.corpora import encoded_corpus
from scansnap.paper.presets import get_preset

PRESET = "text-fig7-1layer"
LIVE = "text-fig7-1layer-live"


class TutorialLM(nn.Module):
    """The PyTorch word-LM tutorial's model: Embedding·√d + sinusoids, nn.TransformerEncoder with a
    causal mask (post-LN, ReLU), linear decoder."""

    def __init__(self, vocab: int, d: int, nhead: int, d_hid: int, nlayers: int, dropout: float, max_len: int):
        super().__init__()
        self.embed, self.d = nn.Embedding(vocab, d), d
        self.register_buffer("pe", sinusoidal_table(max_len, d), persistent=False)
        self.drop = nn.Dropout(dropout)
        layer = nn.TransformerEncoderLayer(d, nhead, d_hid, dropout, batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, nlayers, enable_nested_tensor=False)
        self.decoder = nn.Linear(d, vocab)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        h = self.drop(self.embed(x) * math.sqrt(self.d) + self.get_buffer("pe")[:T])
        mask = nn.Transformer.generate_square_subsequent_mask(T, device=x.device)
        return self.decoder(self.encoder(h, mask=mask, is_causal=True))


class TutorialLoop:
    """The notebook's training step on the trainer's own batches: SGD lr 10 on linear1/linear2, 5 else."""

    def __init__(self, tr: TextTrainer):
        m, o = tr.cfg.model, tr.cfg.optim
        self.tr, self.V = tr, tr.vocab_size
        model = TutorialLM(self.V, m.d_model, m.n_heads, m.d_ff, m.n_layers, m.dropout, o.bptt)
        self.model = model.to(tr.device).train()
        ffn = [p for n, p in self.model.named_parameters() if "linear1" in n or "linear2" in n]
        rest = [p for n, p in self.model.named_parameters() if "linear1" not in n and "linear2" not in n]
        self.opt = torch.optim.SGD([{"params": ffn, "lr": o.lr_mlp}, {"params": rest, "lr": o.lr_other}])
        self.step_count = 0

    def advance(self, n: int) -> None:
        o = self.tr.cfg.optim
        for _ in range(n):
            x, y = window(self.tr.train_data, self.step_count % self.tr.windows, o.bptt)
            loss = nn.functional.cross_entropy(self.model(x).reshape(-1, self.V), y.reshape(-1))
            self.opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), o.clip_norm or math.inf)
            self.opt.step()
            self.step_count += 1


def timed(fn: Callable[[], object], device: torch.device) -> float:
    """Wall seconds of ``fn()``, the device's queued work included."""
    sync = torch.cuda.synchronize if device.type == "cuda" else lambda: None
    sync()
    t0 = time.perf_counter()
    fn()
    sync()
    return time.perf_counter() - t0


def side_by_side(steps: int, repeats: int, over: dict[str, object]) -> dict:
    cfg = get_preset(PRESET, "text").config.with_overrides(over)
    corpus = encoded_corpus(cfg.data)
    ours = TextTrainer(cfg, corpus)
    base = TutorialLoop(ours)
    n_ours = sum(p.numel() for p in ours.model.parameters())
    n_base = sum(p.numel() for p in base.model.parameters())
    ours.advance(3)
    base.advance(3)
    t_ours: list[float] = []
    t_base: list[float] = []
    for _ in range(repeats):  # alternate, so load changes hit both sides alike
        for fn, out in ((ours.advance, t_ours), (base.advance, t_base)):
            out.append(timed(lambda fn=fn: fn(steps), ours.device))
    snap = [timed(ours.snapshot, ours.device) for _ in range(3)]
    tokens = cfg.optim.batch * cfg.optim.bptt * steps
    ours_tps, base_tps = tokens / statistics.median(t_ours), tokens / statistics.median(t_base)
    return {
        "preset": PRESET,
        "device": str(ours.device),
        "corpus": corpus.name,
        "vocab": len(corpus.vocab),
        "train_tokens": len(corpus.train_ids),
        "params_ours": n_ours,
        "params_baseline": n_base,
        "steps_per_block": steps,
        "repeats": repeats,
        "ours_tokens_per_s": ours_tps,
        "baseline_tokens_per_s": base_tps,
        "ratio_ours_over_baseline": ours_tps / base_tps,
        "ratio_best_blocks": min(t_base) / min(t_ours),
        "ours_ms_per_step": 1000 * statistics.median(t_ours) / steps,
        "ours_ms_per_step_blocks": [1000 * t / steps for t in t_ours],
        "baseline_ms_per_step_blocks": [1000 * t / steps for t in t_base],
        "baseline_ms_per_step": 1000 * statistics.median(t_base) / steps,
        "snapshot_ms": 1000 * statistics.median(snap),
    }


def timed_blocks(trainers: dict[str, TextTrainer], steps: int, repeats: int) -> dict[str, list[float]]:
    """Seconds of each block of ``steps`` steps, the trainers alternating (load changes hit all alike)."""
    for tr in trainers.values():
        tr.advance(3)
    times: dict[str, list[float]] = {name: [] for name in trainers}
    for _ in range(repeats):
        for name, tr in trainers.items():
            times[name].append(timed(lambda tr=tr: tr.advance(steps), tr.device))
    return times


def live_against_paper(steps: int, repeats: int, over: dict[str, object], live_steps: int | None) -> dict:
    """Steps/s of the live variant and of the paper's settings in one run, then the live run whole
    (or its first ``live_steps`` steps)."""
    cfgs = {name: get_preset(name, "text").config.with_overrides(over) for name in (PRESET, LIVE)}
    trainers = {name: TextTrainer(cfg, encoded_corpus(cfg.data)) for name, cfg in cfgs.items()}
    times = timed_blocks(trainers, steps, repeats)
    rate = {name: steps / statistics.median(t) for name, t in times.items()}
    if live_steps:
        cfgs[LIVE] = cfgs[LIVE].with_overrides({"optim.steps": live_steps})
    live = TextTrainer(cfgs[LIVE], encoded_corpus(cfgs[LIVE].data))
    entropy: list[float] = []
    whole = timed(lambda: entropy.extend(float(s.scalars["attn_entropy"][0].mean()) for s in live.run()), live.device)
    return {
        "paper_steps_per_s": rate[PRESET],
        "live_steps_per_s": rate[LIVE],
        "ratio_live_over_paper": rate[LIVE] / rate[PRESET],
        "live_vocab": live.vocab_size,
        "live_steps": cfgs[LIVE].optim.steps,
        "live_whole_run_s": whole,
        "live_whole_run_steps_per_s": cfgs[LIVE].optim.steps / whole,
        "live_snapshots": len(entropy),
        "live_layer0_entropy_start": entropy[0],
        "live_layer0_entropy_min": min(entropy),
        "live_layer0_entropy_end": entropy[-1],
        "live_layer0_drop": entropy[0] - min(entropy),
    }


def _status_mib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise KeyError(field)


def memory_child() -> None:
    """Fresh process: peak RSS (VmHWM after a reset once torch is imported) of corpus + trainer."""
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    base = _status_mib("VmRSS")
    cfg = get_preset(PRESET, "text").config.with_overrides({"model.device": "cpu"})
    corpus = encoded_corpus(cfg.data)
    tr = TextTrainer(cfg, corpus)
    tr.advance(5)
    tr.snapshot()
    est = estimate(cfg, vocab=len(corpus.vocab), train_tokens=len(corpus.train_ids))
    peak = _status_mib("VmHWM")
    out = {"peak_rss_mib": peak, "rss_before_mib": base, "of_which_run_mib": peak - base}
    print(json.dumps(out | {"estimate_mb": est.total_mb, "estimate_without_safety_mb": est.total_mb / 1.5}))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--device", default="cpu", choices=("auto", "cpu", "cuda"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--live-steps", type=int, help="steps of the live variant's whole run (default: its preset's)")
    ap.add_argument("--vocab-size", type=int, help="cap every config's vocabulary (default: the presets')")
    ap.add_argument("--memory", action=argparse.BooleanOptionalAction, default=True, help="item 3 (a fresh process)")
    ap.add_argument("--json")
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.memory_child:
        memory_child()
        return
    over: dict[str, object] = {"model.device": args.device}
    if args.vocab_size:
        over["data.vocab_size"] = args.vocab_size
    res = {"threads": args.threads, **side_by_side(args.steps, args.repeats, over)}
    res["live"] = live_against_paper(args.steps, args.repeats, over, args.live_steps)
    if args.memory:
        child = subprocess.run(
            [sys.executable, "-m", "bench.text_speed", "--memory-child", "--threads", str(args.threads)],
            capture_output=True,
            text=True,
            check=True,
        )
        res["memory"] = json.loads(child.stdout.strip().splitlines()[-1])
    text = json.dumps(res, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
