"""Model kinds as small strategy objects: parameter shapes and init, the training step, effective (Y, Zq).

``yz``, ``yz-meanfield`` (plain)   the decoder stored by token role, fused chunked step:
scansnap/kinds/synthetic/science/yz_kinds.py;
``yz-meanfield`` (lemma3)          T→∞ dynamics with the decoder W = FᵀY (Lemma 3): :class:`Lemma3YZ`;
``standard``                       embeddings U, W_Q, W_K, W_V with autograd (science §2.2): :class:`StandardModel`.

A strategy holds no parameters: the trainer owns its state and hands it in; ``public`` turns the state into
the parameters that ``Trainer.params`` and checkpoints show.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import torch

from scansnap.kinds.synthetic.science import stats as mx
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import Problem
from scansnap.kinds.synthetic.science.model import (
    decoder_from_lemma3,
    effective_yz_standard,
    loss_and_grads_lemma3,
    loss_and_grads_yz,
    loss_yz,
)
from scansnap.kinds.synthetic.science.optim import ReplicaOptimizer

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
        return c / torch.linalg.vector_norm(c, dim=-1, keepdim=True)


def to_numpy(t: torch.Tensor) -> np.ndarray:
    """A numpy copy (never a view of a tensor the trainer keeps mutating)."""
    return t.detach().to("cpu", copy=True).numpy()


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

    def public(self, state: Params) -> Params:
        """The parameters as ``Trainer.params`` shows them (token and replica order)."""
        return state

    def load_params(self, state: Params, public: Params) -> None:
        """Set ``state`` from parameters in the public layout (a checkpoint)."""
        for name in state:
            state[name] = public[name].to(self.s.dtype).clone()

    def optimizers(self, state: Params, lr_y: torch.Tensor, lr_z: torch.Tensor) -> dict:
        """One optimiser per parameter; η_Z for ``lr_z_names``, η_Y for the rest."""
        cfg = self.s.cfg.optim
        return {name: ReplicaOptimizer(cfg, lr_z if name in self.lr_z_names else lr_y) for name in state}

    def param_arrays(self, state: Params) -> dict[str, np.ndarray]:
        """The parameters in the public layout as numpy copies, named ``param.<parameter>`` (a checkpoint)."""
        return {f"param.{k}": to_numpy(v) for k, v in self.public(state).items()}

    def optimizer_arrays(self, opt: dict) -> dict[str, np.ndarray]:
        """Optimiser state in the public layout as numpy copies, named ``opt.<parameter>.<buffer>``."""
        return {f"opt.{name}.{k}": to_numpy(v) for name, o in opt.items() for k, v in o.state.items()}

    def load_optimizers(self, opt: dict, arrays: dict[str, torch.Tensor], steps: dict[str, int]) -> None:
        for name, o in opt.items():
            prefix = f"opt.{name}."
            o.state = {k.split(".")[-1]: v.to(self.s.dtype).clone() for k, v in arrays.items() if k.startswith(prefix)}
            o.t = int(steps[name])

    def loss_and_grads(self, params: Params, samplers: Sequence[Sampler]) -> LossGrads:
        """Per-replica training loss (R,) and ∂L/∂p for every parameter p (the step's direction)."""
        raise NotImplementedError

    def train_step(self, state: Params, samplers: Sequence[Sampler], opt: dict, check: Callable) -> torch.Tensor:
        """One optimiser step; ``check(loss, replicas)`` raises before any update if the loss is not finite."""
        loss, grads = self.loss_and_grads(state, samplers)
        check(loss)
        for name, g in grads.items():
            opt[name].step(state[name], g)
        return loss

    @torch.no_grad()
    def population_loss(self, state: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and accuracy over all K classes with T→∞ contexts (x = P(·|n)), noise-free."""
        Y, Zq = self.yz(state)
        s, R, K = self.s, self.s.R, self.s.problem.K
        loss, acc, _, _ = loss_and_grads_yz(
            Y, Zq, s.P.unsqueeze(0).expand(R, -1, -1), s.psi.expand(R, K), s.labels.expand(R, K)
        )
        return loss, acc

    def yz(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """Effective (Y (R, M_ctx, M_out), Zq (R, Q, M_ctx))."""
        return params["Y"], params["Zq"]

    def zq(self, params: Params) -> torch.Tensor:
        """The query rows of Z (R, Q, M_ctx), without building Y."""
        return params["Zq"]


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
