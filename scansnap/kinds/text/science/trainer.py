"""The real-text stepper: one causal LM trained on a token stream, shaped like
``scansnap.kinds.synthetic.science.train``.

``TextTrainer(cfg, corpus).advance(n)`` takes n optimiser steps; ``snapshot()`` measures the
attention statistics of :mod:`scansnap.kinds.text.science.metrics` on the fixed probe set and the validation
loss; ``run()`` yields a snapshot at every scheduled step; ``checkpoint()`` / ``restore()`` give a
bit-exact resume on CPU (parameters, optimiser state, step, the trainer's own RNG state).

Step s uses window k = s mod W of the batchified training stream (W windows per epoch, data.py)
and every learning rate η·γ^⌊s/E⌋ (StepLR stepped once per epoch of E = ``optim.epoch_steps`` steps,
W when unset); the loss is the mean
cross-entropy over the B·T′ next-token targets; gradients are clipped to a global norm.
Dropout draws from the trainer's own RNG state (forked around each call), so other torch code in
the process neither changes nor is changed by a run.  No I/O.
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from torch.nn import functional as fn

from scansnap.core.device import resolve_device
from scansnap.core.errors import DivergedError
from scansnap.kinds.text.science import metrics as tm
from scansnap.kinds.text.science.config import TextRunConfig, check_corpus_fits
from scansnap.kinds.text.science.data import EncodedCorpus, batchify, full_windows, window, windows_per_epoch
from scansnap.kinds.text.science.model import CausalLM, parameter_group
from scansnap.kinds.text.science.schedule import EVAL_CHUNK_LOGITS, schedule

GROUPS = ("attention", "mlp", "other")
__all__ = ["EVAL_CHUNK_LOGITS", "TextDivergedError", "TextSnapshot", "TextTrainer", "schedule"]


class TextDivergedError(DivergedError):
    """The training loss became NaN/Inf; ``step`` is the step count when it was seen.  A
    :class:`~scansnap.core.errors.DivergedError`, so a runner reports any kind of run ``diverged``."""

    def __init__(self, step: int):
        super().__init__(
            step,
            f"training diverged before step {step} (the loss became NaN/Inf): lower the learning rates "
            "(try ÷10), keep gradient clipping on, or use Adam",
        )


@dataclass
class TextSnapshot:
    """Metrics at ``step``.  scalars: attn_entropy, attn_share_frequent / _common / _distinct (L, H); train_loss,
    val_loss, val_ppl (0-d).  arrays: attn_map (L, H, T, T) of the probe window, attn_map_mean
    (L, T, T) its mean over heads."""

    step: int
    arrays: dict[str, np.ndarray]
    scalars: dict[str, np.ndarray]

    def scalar_rows(self) -> list[tuple[int | None, int | None, str, float]]:
        """Tidy rows (layer, head, metric, value).  Per-layer metrics give one row per layer with
        head None (the mean over heads) and, with more than one head, one row per head."""
        rows: list[tuple[int | None, int | None, str, float]] = []
        for name, v in self.scalars.items():
            if v.ndim == 0:
                rows.append((None, None, name, float(v)))
                continue
            for layer in range(v.shape[0]):
                rows.append((layer, None, name, float(v[layer].mean())))
                if v.shape[1] > 1:
                    rows += [(layer, h, name, float(v[layer, h])) for h in range(v.shape[1])]
        return rows


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", copy=True).numpy()


def _b64(t: torch.Tensor) -> str:
    return base64.b64encode(t.cpu().numpy().tobytes()).decode("ascii")


def _unb64(s: str) -> torch.Tensor:
    return torch.from_numpy(np.frombuffer(base64.b64decode(s), dtype=np.uint8).copy())


class TextTrainer:
    def __init__(self, cfg: TextRunConfig, corpus: EncodedCorpus):
        self.cfg, self.corpus = cfg, corpus
        check_corpus_fits(cfg, len(corpus.train_ids), len(corpus.val_ids))
        self.device = resolve_device(cfg.model.device)
        o, p = cfg.optim, cfg.probe
        self.vocab_size = len(corpus.vocab)
        self.train_data = batchify(corpus.train_ids, o.batch).to(self.device)
        self.windows = windows_per_epoch(self.train_data.shape[1], o.bptt)
        self._init_probe(p.eval_batch, p.val_windows, p.probe_window)
        self.model, self._rng_cpu, self._rng_cuda = self._build_model()
        self.base_lr, self.opt = self._build_optimizer()
        self.step_count = 0
        self._loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        self._loss_n = 0
        self.schedule = schedule(cfg)

    # ----------------------------------------------------------------- set-up
    def _init_probe(self, eval_batch: int, val_windows: int, probe_window: int) -> None:
        bptt = self.cfg.optim.bptt
        val = batchify(self.corpus.val_ids, eval_batch)
        full = (val.shape[1] - 1) // bptt
        probed = val if self.cfg.probe.stream == "validation" else self.train_data.cpu()
        self.probe_index = min(probe_window, (probed.shape[1] - 1) // bptt - 1)
        self.probe_x = window(probed, self.probe_index, bptt)[0].to(self.device)
        self.val_x, self.val_y = (t.to(self.device) for t in full_windows(val, 0, min(val_windows, full), bptt))
        self.frequent = tm.frequent_ids(self.corpus.vocab.counts, self.cfg.probe.frequent_top_n)
        self.common, self.distinct = self.corpus.word_groups
        self.is_frequent, self.is_common, self.is_distinct = (
            self._word_set(ids) for ids in (self.frequent, self.common, self.distinct)
        )

    def _word_set(self, ids: np.ndarray) -> torch.Tensor:
        """(V,) bool on the device: True at ``ids``."""
        member = torch.zeros(self.vocab_size, dtype=torch.bool)
        member[torch.tensor(ids, dtype=torch.long)] = True
        return member.to(self.device)

    def _build_model(self) -> tuple[CausalLM, torch.Tensor, torch.Tensor | None]:
        """The model from seed s (CPU draws, then moved), and the dropout RNG states that follow."""
        seed = self.cfg.optim.seed
        with torch.random.fork_rng(devices=[]):
            torch.default_generator.manual_seed(seed)
            model = CausalLM(self.cfg.model, self.vocab_size, self.cfg.optim.bptt)
            rng_cpu = torch.get_rng_state()
        if self.cfg.model.layer_init == "copy":
            for block in model.blocks[1:]:
                block.load_state_dict(model.blocks[0].state_dict())
        rng_cuda = None
        if self.device.type == "cuda":
            rng_cuda = torch.Generator(self.device).manual_seed(seed).get_state()
        return model.to(self.device).train(), rng_cpu, rng_cuda

    def _build_optimizer(self) -> tuple[list[float], torch.optim.Optimizer]:
        o = self.cfg.optim
        lrs = {"attention": o.lr_attention, "mlp": o.lr_mlp, "other": o.lr_other}
        named: dict[str, list[torch.nn.Parameter]] = {g: [] for g in GROUPS}
        for name, prm in self.model.named_parameters():
            group = parameter_group(name)
            if group == "mlp" and o.mlp_lr_layers == "first" and not name.startswith("blocks.0."):
                group = "other"
            named[group].append(prm)
        used = [g for g in GROUPS if named[g]]
        groups = [{"params": named[g], "lr": lrs[g], "name": g} for g in used]
        opt: torch.optim.Optimizer
        if o.method == "adam":
            opt = torch.optim.Adam(groups, betas=(o.beta1, o.beta2), eps=o.eps, weight_decay=o.weight_decay)
        else:
            opt = torch.optim.SGD(groups, momentum=o.momentum, weight_decay=o.weight_decay)
        return [lrs[g] for g in used], opt

    @contextmanager
    def _own_rng(self) -> Iterator[None]:
        rng_cuda = self._rng_cuda if self.device.type == "cuda" else None
        with torch.random.fork_rng(devices=[self.device] if rng_cuda is not None else []):
            torch.set_rng_state(self._rng_cpu)
            if rng_cuda is not None:
                torch.cuda.set_rng_state(rng_cuda, self.device)
            try:
                yield
            finally:
                self._rng_cpu = torch.get_rng_state()
                if rng_cuda is not None:
                    self._rng_cuda = torch.cuda.get_rng_state(self.device)

    # ----------------------------------------------------------------- stepping
    @property
    def epoch_steps(self) -> int:
        """Steps per epoch of the schedule: ``optim.epoch_steps``, else one pass over the corpus (W)."""
        return self.cfg.optim.epoch_steps or self.windows

    @property
    def epoch(self) -> int:
        return self.step_count // self.epoch_steps

    def _step(self) -> None:
        o = self.cfg.optim
        if o.reset_each_epoch and self.step_count and self.step_count % self.epoch_steps == 0:
            self.opt = self._build_optimizer()[1]  # a new epoch: a fresh optimiser, its state reset
        for g, lr0 in zip(self.opt.param_groups, self.base_lr, strict=True):
            g["lr"] = lr0 * o.gamma**self.epoch
        x, y = window(self.train_data, self.step_count % self.windows, o.bptt)
        logits, _ = self.model(x)
        loss = fn.cross_entropy(logits.reshape(-1, self.vocab_size), y.reshape(-1))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        if o.clip_norm is not None:
            torch.nn.utils.clip_grad_norm_(self.model.parameters(), o.clip_norm)
        self.opt.step()
        self._loss_sum += loss.detach().to(torch.float64)
        self._loss_n += 1
        self.step_count += 1

    def advance(self, n: int) -> None:
        """n optimiser steps; raises TextDivergedError if the loss stopped being finite."""
        if n <= 0:
            return
        self.model.train()
        with self._own_rng():
            for _ in range(n):
                self._step()
        if not bool(torch.isfinite(self._loss_sum)):
            raise TextDivergedError(self.step_count)

    def run(self) -> Iterator[TextSnapshot]:
        """Yield a snapshot at every scheduled step (step 0 included) up to ``optim.steps``."""
        for target in self.schedule:
            if target < self.step_count:
                continue
            self.advance(int(target) - self.step_count)
            yield self.snapshot()

    # ----------------------------------------------------------------- measuring
    @torch.no_grad()
    def validation_loss(self) -> float:
        """Mean next-token cross-entropy (nats) over the fixed validation windows (eval mode)."""
        self.model.eval()
        rows = max(1, EVAL_CHUNK_LOGITS // (self.val_x.shape[1] * self.vocab_size))
        total = torch.zeros((), dtype=torch.float64, device=self.device)
        for i in range(0, self.val_x.shape[0], rows):
            logits, _ = self.model(self.val_x[i : i + rows])
            y = self.val_y[i : i + rows].reshape(-1)
            total += fn.cross_entropy(logits.reshape(-1, self.vocab_size), y, reduction="sum").to(torch.float64)
        return float(total) / self.val_y.numel()

    @torch.no_grad()
    def attention_maps(self) -> list[torch.Tensor]:
        """Each layer's attention a (B, H, T, T) on the probe set (eval mode: no dropout)."""
        self.model.eval()
        return self.model(self.probe_x, need_weights=True)[1]

    def _word_sets(self) -> dict[str, torch.Tensor]:
        """The word sets whose attention share a snapshot measures: the most frequent words, and Scan &
        Snap's common and distinct tokens (:mod:`scansnap.kinds.text.science.contexts`)."""
        return {"frequent": self.is_frequent, "common": self.is_common, "distinct": self.is_distinct}

    def snapshot(self) -> TextSnapshot:
        maps = self.attention_maps()
        ent = torch.stack([tm.attention_entropy(a) for a in maps])
        shares = {
            name: torch.stack([tm.share_on_tokens(a, member[self.probe_x]) for a in maps])
            for name, member in self._word_sets().items()
        }
        val = self.validation_loss()
        self.model.train()
        n = self._loss_n
        train = float(self._loss_sum) / n if n else math.nan
        self._loss_sum.zero_()
        self._loss_n = 0
        first = torch.stack([a[0] for a in maps]).float()  # (L, H, T, T): the probe window
        scalars = {
            "attn_entropy": _np(ent.double()),
            **{f"attn_share_{name}": _np(share.double()) for name, share in shares.items()},
            "train_loss": np.array(train),
            "val_loss": np.array(val),
            "val_ppl": np.array(math.exp(min(val, 700.0))),
        }
        return TextSnapshot(self.step_count, {"attn_map": _np(first), "attn_map_mean": _np(first.mean(1))}, scalars)

    def statics(self) -> dict[str, np.ndarray]:
        """Per-run constants: vocabulary and counts, probe ids, frequent ids and reference levels."""
        v, probe = self.corpus.vocab, _np(self.probe_x)
        counts = v.counts
        return {
            "vocab_tokens": np.array(v.itos, dtype=str),
            "vocab_counts": counts,
            "probe_tokens": probe,
            "probe_window": probe[0],
            "probe_window_index": np.array(self.probe_index),
            "frequent_ids": self.frequent,
            "frequent_corpus_share": np.array(counts[self.frequent].sum() / max(1, counts.sum())),
            "uniform_entropy": np.array(tm.uniform_causal_entropy(probe.shape[1])),
            **{f"uniform_share_{k}": np.array(tm.uniform_share(_np(m)[probe])) for k, m in self._word_sets().items()},
            "common_ids": self.common,
            "distinct_ids": self.distinct,
            "train_tokens": np.array(len(self.corpus.train_ids)),
            "val_tokens": np.array(len(self.corpus.val_ids)),
            "windows_per_epoch": np.array(self.windows),
        }

    # ----------------------------------------------------------------- checkpoints
    def checkpoint(self) -> tuple[dict[str, np.ndarray], str]:
        """Arrays (parameters, optimiser tensors, the running train-loss sum) and JSON meta (step,
        optimiser scalars and groups, the RNG states as base64)."""
        arrays = {f"model.{k}": _np(v) for k, v in self.model.state_dict().items()}
        sd = self.opt.state_dict()
        scalars: dict[str, dict[str, float]] = {}
        for idx, st in sd["state"].items():
            for k, v in st.items():
                if torch.is_tensor(v):
                    arrays[f"opt.{idx}.{k}"] = _np(v)
                else:
                    scalars.setdefault(str(idx), {})[k] = v
        arrays["train_loss_sum"] = _np(self._loss_sum)
        meta = {
            "step": self.step_count,
            "train_loss_n": self._loss_n,
            "opt_param_groups": sd["param_groups"],
            "opt_scalars": scalars,
            "rng_cpu": _b64(self._rng_cpu),
            "rng_cuda": None if self._rng_cuda is None else _b64(self._rng_cuda),
        }
        return arrays, json.dumps(meta)

    def restore(self, arrays: dict[str, np.ndarray], meta_json: str) -> None:
        """Load a :meth:`checkpoint` taken from a trainer of the same config and corpus."""
        meta = json.loads(meta_json)
        sd = {k[len("model.") :]: torch.as_tensor(v) for k, v in arrays.items() if k.startswith("model.")}
        self.model.load_state_dict(sd)
        state: dict[int, dict[str, object]] = {}
        for k, v in arrays.items():
            if k.startswith("opt."):
                _, idx, name = k.split(".", 2)
                state.setdefault(int(idx), {})[name] = torch.as_tensor(v).clone()
        for idx, sc in meta["opt_scalars"].items():
            state.setdefault(int(idx), {}).update(sc)
        self.opt.load_state_dict({"state": state, "param_groups": meta["opt_param_groups"]})
        self._loss_sum = torch.as_tensor(arrays["train_loss_sum"], dtype=torch.float64).to(self.device).clone()
        self._loss_n, self.step_count = int(meta["train_loss_n"]), int(meta["step"])
        self._rng_cpu = _unb64(meta["rng_cpu"])
        if meta["rng_cuda"] is not None and self.device.type == "cuda":
            self._rng_cuda = _unb64(meta["rng_cuda"])
