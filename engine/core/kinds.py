"""Model kinds as small strategy objects: parameter shapes and init, the (loss, grads) step, effective (Y, Zq).

``yz``           sampled finite-T contexts, class-grouped closed-form gradients (science §2.3–2.5);
``yz-meanfield`` T→∞ expected dynamics over all K classes, decoder ``plain`` (Y) or ``lemma3`` (W = FᵀY);
``standard``     embeddings U, W_Q, W_K, W_V with autograd (science §2.2).

A strategy holds no parameters: the trainer owns them (``params``) and hands them in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from engine.core import metrics as mx
from engine.core.config import RunConfig
from engine.core.data import Problem
from engine.core.model import (
    decoder_from_lemma3,
    effective_yz_standard,
    loss_and_grads_grouped,
    loss_and_grads_lemma3,
    loss_yz,
)

Params = dict[str, torch.Tensor]
LossGrads = tuple[torch.Tensor, Params]


class Sampler(Protocol):
    def sample(self, batch: int) -> tuple[np.ndarray, np.ndarray]: ...


@dataclass
class Setup:
    """What every strategy needs and nothing changes during a run: the problem as tensors and the replica axis."""

    cfg: RunConfig
    problem: Problem
    device: torch.device
    dtype: torch.dtype
    replica_seed: list[int]
    unique_seeds: list[int]
    seed_index: torch.Tensor  # (R,) index of each replica's seed in unique_seeds
    P: torch.Tensor  # (K, M_ctx) P(l|n)
    logP: torch.Tensor
    psi: torch.Tensor  # (K,) query index of class n
    labels: torch.Tensor  # (K,) decoder output of class n
    support: torch.Tensor  # (K, s) token ids of supp(n)

    @property
    def R(self) -> int:
        return len(self.replica_seed)

    def t(self, a: object) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), dtype=self.dtype, device=self.device)

    def f(self, Zq: torch.Tensor) -> torch.Tensor:
        """f_n = c_n/‖c_n‖ (R, K, M_ctx): the normalised attention of each class."""
        c = mx.attention_c(Zq, self.logP, self.psi)
        return c / c.norm(dim=-1, keepdim=True)


def init_tensor(kind: str, shape: tuple[int, ...], fan_in: int, std: float, gen: torch.Generator) -> torch.Tensor:
    """zero; torch-default = nn.Linear's U(−1/√fan_in, 1/√fan_in); normal = N(0, std²)."""
    if kind == "zero":
        return torch.zeros(shape, dtype=torch.float64)
    if kind == "torch-default":
        bound = 1 / math.sqrt(fan_in)
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    return torch.randn(shape, generator=gen, dtype=torch.float64) * std


class ModelKind:
    """One model kind: its parameters, its training step and its effective (Y, Zq)."""

    lr_z_names: frozenset[str] = frozenset({"Zq"})  # parameters trained with η_Z (the rest with η_Y)

    def __init__(self, setup: Setup):
        self.s = setup

    def shapes(self) -> dict[str, tuple[int, ...]]:
        pb = self.s.problem
        return {"Zq": (pb.Q, pb.M_ctx), "Y": (pb.M_ctx, pb.M_out)}

    def fan_in(self) -> int:
        return self.s.problem.M

    def draw(self, name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
        m = self.s.cfg.model
        return init_tensor(m.init, shape, self.fan_in(), m.init_std, gen)

    def init_params(self) -> Params:
        """Every seed draws its tensors from its own generator, in ``shapes()`` order; replicas of one seed
        start equal."""
        s, shapes = self.s, self.shapes()
        per_seed: dict[int, Params] = {}
        for seed in s.unique_seeds:
            gen = torch.Generator().manual_seed(seed)
            per_seed[seed] = {name: self.draw(name, shape, gen) for name, shape in shapes.items()}
        return {
            name: torch.stack([per_seed[seed][name] for seed in s.replica_seed]).to(s.device, s.dtype)
            for name in shapes
        }

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        """Per-replica training loss (R,) and ∂L/∂p for every parameter p (the step's direction)."""
        raise NotImplementedError

    def yz(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """Effective (Y (R, M_ctx, M_out), Zq (R, Q, M_ctx))."""
        return params["Y"], params["Zq"]

    def zq(self, params: Params) -> torch.Tensor:
        """The query rows of Z (R, Q, M_ctx), without building Y."""
        return params["Zq"]


class SampledYZ(ModelKind):
    """``yz``: mini-batches of finite-T contexts, grouped by class in support coordinates."""

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        s = self.s
        xs, w = self.grouped_batch(samplers)
        loss, _, dY, dZ = loss_and_grads_grouped(
            params["Y"], params["Zq"], xs, w, s.support, s.psi, s.labels, accuracy=False
        )
        return loss, {"Y": dY, "Zq": dZ}

    def grouped_batch(self, samplers: Sequence[Sampler]) -> tuple[torch.Tensor, torch.Tensor]:
        """A mini-batch grouped by class in support coordinates: xs (R, K, G, s), w (R, K, G)."""
        s = self.s
        K, width = s.problem.support[1].shape
        B = s.cfg.optim.batch
        draws = [sm.sample(B) for sm in samplers]
        G = max(int(np.bincount(cls, minlength=K).max()) for cls, _ in draws)
        xs = np.zeros((len(draws), K, G, width))
        w = np.zeros((len(draws), K, G))
        for i, (cls, counts) in enumerate(draws):
            order = np.argsort(cls, kind="stable")
            start = np.concatenate([[0], np.cumsum(np.bincount(cls, minlength=K))[:-1]])
            slot = np.empty(B, dtype=np.int64)
            slot[order] = np.arange(B) - start[cls[order]]
            xs[i, cls, slot] = counts
            w[i, cls, slot] = 1 / B
        xs[..., 0][w == 0] = 1.0  # padding slots: any valid context, weight 0
        xs_t, w_t = s.t(xs), s.t(w)
        if len(draws) == 1:
            return xs_t.expand(s.R, -1, -1, -1), w_t.expand(s.R, -1, -1)
        return xs_t[s.seed_index], w_t[s.seed_index]


class MeanFieldYZ(ModelKind):
    """``yz-meanfield`` with the plain decoder: every class once with x = P(·|n) and weight 1/K."""

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        s = self.s
        probs = s.problem.support[1]
        K, width = probs.shape
        xs = s.t(probs).view(1, K, 1, width).expand(s.R, -1, -1, -1)
        w = torch.full((s.R, K, 1), 1 / K, dtype=s.dtype, device=s.device)
        loss, _, dY, dZ = loss_and_grads_grouped(
            params["Y"], params["Zq"], xs, w, s.support, s.psi, s.labels, accuracy=False
        )
        return loss, {"Y": dY, "Zq": dZ}


class Lemma3YZ(ModelKind):
    """``yz-meanfield`` with ``meanfield_decoder='lemma3'``: the decoder is W = FᵀY (R, K, M_out), so Y stays
    in span(F) (Lemma 3).  W(0) = F(0)ᵀY(0) with the plain model's Y(0) of the same seed."""

    def init_params(self) -> Params:
        params = super().init_params()
        params["W"] = torch.bmm(self.s.f(params["Zq"]), params.pop("Y"))
        return params

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        s = self.s
        loss, _, dW, dZ = loss_and_grads_lemma3(params["W"], params["Zq"], s.P, s.psi, s.labels)
        return loss, {"W": dW, "Zq": dZ}

    def yz(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        return decoder_from_lemma3(params["W"], self.s.f(params["Zq"])), params["Zq"]


class StandardModel(ModelKind):
    """``standard``: Y = U W_Vᵀ Uᵀ, Z = U W_Q W_Kᵀ Uᵀ/√d; U fixed, W_Q, W_K, W_V trained by autograd."""

    lr_z_names = frozenset({"WQ", "WK"})

    def shapes(self) -> dict[str, tuple[int, ...]]:
        pb, d = self.s.problem, self.s.cfg.model.d
        return {"U": (pb.M, d), "WQ": (d, d), "WK": (d, d), "WV": (d, d)}

    def fan_in(self) -> int:
        return self.s.cfg.model.d

    def draw(self, name: str, shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
        if name == "U":  # fixed near-orthonormal embeddings
            return torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(self.s.cfg.model.d)
        return super().draw(name, shape, gen)

    def index(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(contextual ids, query ids, decoder output ids) in the vocabulary."""
        pb, dev = self.s.problem, self.s.device
        return (
            torch.arange(pb.M_ctx, device=dev),
            torch.as_tensor(pb.query_ids, device=dev),
            torch.as_tensor(pb.output_ids, device=dev),
        )

    def yz(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        return effective_yz_standard(params["U"], params["WQ"], params["WK"], params["WV"], *self.index())

    def zq(self, params: Params) -> torch.Tensor:
        return self.yz(params)[1]

    def dense_batch(self, samplers: Sequence[Sampler]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x (R, B, M_ctx), q (R, B), y (R, B)) over the whole contextual vocabulary."""
        s = self.s
        draws = [sm.sample(s.cfg.optim.batch) for sm in samplers]
        cls = torch.as_tensor(np.stack([d[0] for d in draws]), device=s.device)[s.seed_index]
        x = s.t(np.stack([s.problem.dense_counts(*d) for d in draws]))[s.seed_index]
        return x, s.psi[cls], s.labels[cls]

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        x, q, y = self.dense_batch(samplers)
        leaves = {k: v.detach().requires_grad_(k != "U") for k, v in params.items()}
        with torch.enable_grad():
            Y, Zq = self.yz(leaves)
            loss = loss_yz(Y, Zq, x, q, y)
            names = [k for k in leaves if k != "U"]
            grads = torch.autograd.grad(loss.sum(), [leaves[k] for k in names])
        return loss.detach(), dict(zip(names, grads, strict=True))


def make_kind(setup: Setup) -> ModelKind:
    """The strategy of ``cfg.model.kind`` (and ``meanfield_decoder``)."""
    m = setup.cfg.model
    if m.kind == "standard":
        return StandardModel(setup)
    if m.kind == "yz-meanfield":
        return Lemma3YZ(setup) if m.meanfield_decoder == "lemma3" else MeanFieldYZ(setup)
    return SampledYZ(setup)
