"""The YZ model kinds whose decoder is stored by token role and trained by the fused, chunked step (issue 16).

``yz``: mini-batches of finite-T (or T = ∞) contexts, one stream per seed; ``yz-meanfield`` (plain decoder):
every class once with x = P(·|n), weight 1/K.  State: ``Zq`` (R, Q, M_ctx) in the trainer's replica order,
the decoder blocks ``Yc``, ``Yd``, ``Yu`` (scansnap/kinds/synthetic/science/roles.py) in group order.  ``public``
gives Y back in
token and replica order, which is what ``Trainer.params``, checkpoints and tests see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property, partial

import numpy as np
import torch

from scansnap.kinds.synthetic.science.fused import (
    BlockOptimizer,
    Workspace,
    attention,
    attention_grad,
    decoder_grad_into,
    logits,
    loss_and_delta,
)
from scansnap.kinds.synthetic.science.kinds import ModelKind, Params, Sampler, Setup, init_tensor, to_numpy
from scansnap.kinds.synthetic.science.lanes import Lanes
from scansnap.kinds.synthetic.science.optim import ReplicaOptimizer
from scansnap.kinds.synthetic.science.roles import Chunk, ReplicaGroups, RoleBatch, RoleLayout
from scansnap.kinds.synthetic.science.slots import CHUNK_REPLICAS, padded_slots

BLOCKS = ("Yc", "Yd", "Yu")
INIT_PIECE = 1 << 20  # decoder init drawn in pieces of at most this many float64 values


class RoleYZ(ModelKind):
    """Shared by ``yz`` and the plain mean field: role layout, replica groups, init, the fused step."""

    shared_data = False

    def __init__(self, setup: Setup):
        super().__init__(setup)
        self.layout = RoleLayout(setup.problem, setup.device, setup.dtype)
        seeds = list(setup.cfg.replicas.seeds)
        data = [setup.unique_seeds.index(s) for s in seeds]
        self.groups = ReplicaGroups(len(setup.cfg.lr_pairs), data, self.shared_data)
        self.lanes = Lanes()
        self.slots = padded_slots(setup.cfg.optim.batch, self.layout.K)

    # ----------------------------------------------------------------- parameters
    def init_params(self) -> Params:
        """Zq and Y drawn per seed exactly as before (Zq first, then Y row by row from the same generator)."""
        s, L, m = self.s, self.layout, self.s.cfg.model
        pb, R, n_out = s.problem, s.R, s.problem.M_out
        z = torch.empty(R, pb.Q, pb.M_ctx, dtype=s.dtype, device=s.device)
        state = {
            "Zq": z,
            "Yc": torch.zeros(R, L.mc, n_out, dtype=s.dtype, device=s.device),
            "Yd": torch.zeros(R, L.K, L.d, n_out, dtype=s.dtype, device=s.device),
            "Yu": torch.zeros(R, L.mu, n_out, dtype=s.dtype, device=s.device),
        }
        for seed in s.unique_seeds:
            gen = torch.Generator().manual_seed(seed)
            z0 = init_tensor(m.init, (pb.Q, pb.M_ctx), self.fan_in(), m.init_std, gen).to(s.dtype)
            public = [r for r in range(R) if s.replica_seed[r] == seed]
            z[public] = z0.to(s.device)
            rows = self.groups.inverse[public].to(s.device)
            if m.init != "zero":
                for start, piece in self.decoder_init_pieces(gen):
                    L.write_rows(piece.to(s.device, s.dtype), start, [state[b] for b in BLOCKS], rows)
        return state

    def decoder_init_pieces(self, gen: torch.Generator) -> Iterator[tuple[int, torch.Tensor]]:
        """(first token, rows) pieces of Y(0) in token order, the same values as one draw of the whole Y(0)."""
        m, pb = self.s.cfg.model, self.s.problem
        shape = (pb.M_ctx, pb.M_out)
        if m.init == "normal":  # randn's values depend on the tensor's size: draw it whole
            yield 0, init_tensor("normal", shape, self.fan_in(), m.init_std, gen)
            return
        step = max(1, INIT_PIECE // pb.M_out)
        for a in range(0, pb.M_ctx, step):
            rows = min(step, pb.M_ctx - a)
            yield a, init_tensor(m.init, (rows, pb.M_out), self.fan_in(), m.init_std, gen)

    def decoder(self, blocks: list[torch.Tensor], out: torch.Tensor | None = None) -> torch.Tensor:
        """Y (R, M_ctx, O) in token and replica order from role blocks (Y or an optimiser state), into ``out``."""
        rows = self.groups.inverse.to(blocks[0].device)
        return self.layout.join(blocks[0], blocks[1], blocks[2], rows=rows, out=out)

    def decoder_array(self, blocks: list[torch.Tensor]) -> np.ndarray:
        """:meth:`decoder` written straight into a numpy array (a checkpoint: one copy of Y, no more)."""
        b = blocks[0]
        out = np.empty(
            (self.s.R, self.s.problem.M_ctx, b.shape[-1]), dtype=np.float64 if b.dtype == torch.float64 else np.float32
        )
        self.decoder(blocks, out=torch.from_numpy(out))  # on a GPU: gathered there, piece by piece to the host
        return out

    def load_decoder(self, blocks: list[torch.Tensor], Y: torch.Tensor) -> None:
        """Role blocks ← Y (R, M_ctx, O) in token and replica order (a checkpoint), piece by piece."""
        rows = self.groups.inverse.to(self.s.device)
        for a, b in self.layout.pieces(self.s.R, Y.shape[-1]):
            self.layout.write_rows(Y[:, a:b].to(self.s.device, self.s.dtype), a, blocks, rows)

    def public(self, state: Params) -> Params:
        return {"Zq": state["Zq"], "Y": self.decoder([state[b] for b in BLOCKS])}

    def param_arrays(self, state: Params) -> dict[str, np.ndarray]:
        return {"param.Zq": to_numpy(state["Zq"]), "param.Y": self.decoder_array([state[b] for b in BLOCKS])}

    def load_params(self, state: Params, public: Params) -> None:
        state["Zq"].copy_(public["Zq"])
        self.load_decoder([state[b] for b in BLOCKS], public["Y"])

    def yz(self, params: Params) -> tuple[torch.Tensor, torch.Tensor]:
        return self.public(params)["Y"], params["Zq"]

    # ----------------------------------------------------------------- optimisers
    def optimizers(self, state: Params, lr_y: torch.Tensor, lr_z: torch.Tensor) -> dict:
        cfg = self.s.cfg.optim
        blocks = {b: state[b] for b in BLOCKS}
        return {"Zq": ReplicaOptimizer(cfg, lr_z), "Y": BlockOptimizer(cfg, self.groups.to_groups(lr_y), blocks)}

    def optimizer_arrays(self, opt: dict) -> dict[str, np.ndarray]:
        out = {f"opt.Zq.{k}": to_numpy(v) for k, v in opt["Zq"].state.items()}
        y = opt["Y"]
        if y.t == 0:  # as ReplicaOptimizer: no state before the first step
            return out
        for kind in sorted({k.split(".")[0] for k in y.state}):
            out[f"opt.Y.{kind}"] = self.decoder_array([y.state[f"{kind}.{b}"] for b in BLOCKS])
        return out

    def load_optimizers(self, opt: dict, arrays: dict[str, torch.Tensor], steps: dict[str, int]) -> None:
        z = opt["Zq"]
        z.state = {k.split(".")[-1]: v.to(self.s.dtype).clone() for k, v in arrays.items() if k.startswith("opt.Zq.")}
        z.t = int(steps["Zq"])
        y = opt["Y"]
        y.t = int(steps["Y"])
        for kind in {k.split(".")[0] for k in y.state}:
            if f"opt.Y.{kind}" in arrays:
                self.load_decoder([y.state[f"{kind}.{b}"] for b in BLOCKS], arrays[f"opt.Y.{kind}"])

    # ----------------------------------------------------------------- the step
    def batches(self, samplers: Sequence[Sampler]) -> list[RoleBatch]:
        """One grouped batch per data stream (unique seed)."""
        B = self.s.cfg.optim.batch
        return self.layout.batches([sm.sample(B) for sm in samplers], self.slots)

    def train_step(self, state: Params, samplers: Sequence[Sampler], opt: dict, check: Callable) -> torch.Tensor:
        """Loss (R,) of the step; Y updated chunk by chunk (fused), then Zq."""
        s, L, groups = self.s, self.layout, self.groups
        opt["Y"].begin()
        batches = self.batches(samplers)
        zc = groups.to_groups(state["Zq"].flatten(1).index_select(1, L.zidx).view(s.R, L.K, L.S))
        dz = torch.empty_like(zc)
        loss = torch.empty(s.R, dtype=s.dtype, device=s.device)

        def run(chunks: list[Chunk], ws: Workspace) -> None:
            for ch in chunks:
                batch = RoleBatch.join([batches[i] for i, _ in ch.parts], [n for _, n in ch.parts])
                r = ch.rows
                on_loss = partial(check, replicas=groups.order[r])
                self.chunk_step(state, r, zc[r], batch, opt["Y"], ws, dz[r], loss[r], on_loss)

        self.lanes.map(run, groups.chunks(tuple(b.slots for b in batches), CHUNK_REPLICAS))
        dZ = torch.zeros_like(state["Zq"])
        dZ.flatten(1).index_add_(1, L.zidx, groups.to_public(dz).flatten(1), alpha=batches[0].scale)
        opt["Zq"].step(state["Zq"], dZ)
        return groups.to_public(loss)

    def chunk_step(
        self,
        state: Params,
        rows: slice,
        zc: torch.Tensor,
        batch: RoleBatch,
        opt: BlockOptimizer,
        ws: Workspace,
        dz: torch.Tensor,
        loss: torch.Tensor,
        check: Callable[[torch.Tensor], None],
    ) -> None:
        """Forward, backward and the decoder's update for the replicas ``rows`` (group order); writes their
        ∂L/∂z per role column (unweighted) into ``dz`` and their loss into ``loss``; ``check(loss)`` raises
        (DivergedError) before the decoder moves if a loss is not finite."""
        f = attention(zc, batch)
        Yc, Yd, Yu = (state[b][rows] for b in BLOCKS)
        delta = logits(ws, f, Yc, Yd)
        loss_and_delta(delta, batch, loss)
        check(loss)
        attention_grad(f, delta, Yc, Yd, dz)
        sc, sd = opt.sink("Yc", rows, ws), opt.sink("Yd", rows, ws)
        decoder_grad_into(sc, sd, f, delta, opt.beta, batch.scale)
        opt.update("Yc", rows, Yc, sc)
        opt.update("Yd", rows, Yd, sd)
        if self.layout.mu:  # tokens of no class: zero gradient, only decay and momentum move them
            su = opt.sink("Yu", rows, ws)
            if opt.beta:
                su.mul_(opt.beta)
            else:
                su.zero_()  # a reused scratch may hold anything, NaN included
            opt.update("Yu", rows, Yu, su)

    @torch.no_grad()
    def population_loss(self, state: Params) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and accuracy over all K classes with x = P(·|n) (R,), replica order."""
        s, L, groups = self.s, self.layout, self.groups
        batch = L.mean_field(s.problem.P)
        zc = groups.to_groups(state["Zq"].flatten(1).index_select(1, L.zidx).view(s.R, L.K, L.S))
        loss = torch.empty(s.R, dtype=s.dtype, device=s.device)
        acc = torch.empty_like(loss)
        for ch in groups.chunks((1,) * (1 + max(i for _, i in groups.spans)), CHUNK_REPLICAS):
            r = ch.rows
            o = logits(self.lanes.workspaces[0], attention(zc[r], batch), state["Yc"][r], state["Yd"][r])
            label = batch.label.unsqueeze(0).expand(o.shape[0], -1, -1, -1)
            acc[r] = (o.argmax(-1, keepdim=True) == label).to(s.dtype).mean((1, 2, 3))
            loss[r] = -torch.log_softmax(o, dim=-1, out=o).gather(3, label).mean((1, 2, 3))
        return groups.to_public(loss), groups.to_public(acc)


class SampledYZ(RoleYZ):
    """``yz``: sampled contexts, one mini-batch per seed shared by that seed's replicas."""


class MeanFieldYZ(RoleYZ):
    """``yz-meanfield`` with the plain decoder: every class once with x = P(·|n) and weight 1/K."""

    shared_data = True

    @cached_property
    def batch(self) -> RoleBatch:
        return self.layout.mean_field(self.s.problem.P)

    def batches(self, samplers: Sequence[Sampler]) -> list[RoleBatch]:
        return [self.batch]
