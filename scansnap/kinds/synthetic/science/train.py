"""The training stepper: R replicas (every (η_Y, η_Z) pair × every seed) in one tensor program.

``Trainer.advance(n)`` takes n optimiser steps; ``Trainer.snapshot()`` returns the metrics
at the current step.  The trainer does no I/O: a runner decides where snapshots go.
A replica's data stream and initialisation depend only on its seed, so a batched run of R
replicas equals R separate runs, and the same seed gives the same trajectory.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import torch

from scansnap.core.device import resolve_device
from scansnap.core.errors import DivergedError
from scansnap.core.scalar_columns import ScalarBlocks, per_class, per_replica
from scansnap.core.schedule import TOPK, full_snapshots, snapshot_steps
from scansnap.kinds.synthetic.science import stats as mx
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import ContextSampler, Problem, build_problem, run_statics
from scansnap.kinds.synthetic.science.kinds import Lemma3YZ, ModelKind, Setup, StandardModel
from scansnap.kinds.synthetic.science.kinds import to_numpy as _np
from scansnap.kinds.synthetic.science.tracking import DistinctTracker
from scansnap.kinds.synthetic.science.yz_kinds import MeanFieldYZ, SampledYZ

PER_CLASS_ROWS = 4000  # above this R·K, only class means of per-class metrics are kept


class RatesDivergedError(DivergedError):
    """The loss or parameters of the replica trained at (η_Y, η_Z) stopped being finite after ``step``."""

    def __init__(self, step: int, eta_y: float, eta_z: float):
        super().__init__(
            step,
            f"training diverged after step {step} (loss or parameters became NaN/Inf) at "
            f"η_Y={eta_y:g}, η_Z={eta_z:g}: lower the learning rates (try ÷10) or use Adam",
        )


@dataclass
class Snapshot:
    step: int
    arrays: dict[str, np.ndarray]
    scalars: dict[str, np.ndarray]  # name → (R,) or (R, K)

    def scalar_blocks(self, per_class_limit: int = PER_CLASS_ROWS) -> ScalarBlocks:
        """One block of rows per metric: an (R,) metric gives one row per replica; an (R, K) one
        gives its class means and, when R·K ≤ ``per_class_limit``, every (replica, class) value."""
        return {
            name: per_replica(v) if v.ndim == 1 else per_class(v, keep_classes=v.size <= per_class_limit)
            for name, v in self.scalars.items()
        }


def make_kind(setup: Setup) -> ModelKind:
    """The strategy of ``cfg.model.kind`` (and ``meanfield_decoder``)."""
    m = setup.cfg.model
    if m.kind == "standard":
        return StandardModel(setup)
    if m.kind == "yz-meanfield":
        return Lemma3YZ(setup) if m.meanfield_decoder == "lemma3" else MeanFieldYZ(setup)
    return SampledYZ(setup)


class Trainer:
    def __init__(self, cfg: RunConfig):
        self.cfg = cfg
        self.problem: Problem = build_problem(cfg.data)
        self.device = resolve_device(cfg.model.device)
        self.dtype = torch.float64 if cfg.model.dtype == "float64" else torch.float32
        pb = self.problem
        pairs, seeds = cfg.lr_pairs, list(cfg.replicas.seeds)
        self.replica_lr = [p for p in pairs for _ in seeds]
        self.replica_seed = [s for _ in pairs for s in seeds]
        self.unique_seeds = sorted(set(seeds))
        self.seed_index = torch.tensor([self.unique_seeds.index(s) for s in self.replica_seed], device=self.device)
        self.R = len(self.replica_lr)
        t = self._t
        self.P = t(pb.P)
        self.logP = torch.log(self.P)
        self.psi = torch.as_tensor(pb.psi, device=self.device)
        self.labels = torch.as_tensor(pb.label_ids, device=self.device)
        self.distinct = torch.as_tensor(pb.distinct_mask, device=self.device)
        self.common = torch.as_tensor(pb.common_mask, device=self.device)
        self.support = torch.as_tensor(pb.support[0], device=self.device)
        self.setup = self._setup()
        self.kind = make_kind(self.setup)
        self._state = self.kind.init_params()
        self.opt = self.kind.optimizers(
            self._state, t([p[0] for p in self.replica_lr]), t([p[1] for p in self.replica_lr])
        )
        T = None if cfg.data.infinite_T else int(cfg.data.T)
        self.samplers = [ContextSampler(pb, T, s) for s in self.unique_seeds]
        self.step_count = 0
        self.schedule = snapshot_steps(cfg.optim.steps, cfg.snapshots)
        self._train_loss_sum = torch.zeros(self.R, dtype=torch.float64, device=self.device)
        self._train_loss_n = 0
        self.tracker = DistinctTracker(pb, self.device, self.dtype)
        self.Z0, self.f0, self.B_hat = self._init_tracking()
        self._f2 = self.tracker.f2(self.Z0)  # Σ_{G_DT(n)} f_nl² at the current step

    def _t(self, a: object) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), dtype=self.dtype, device=self.device)

    def _setup(self) -> Setup:
        return Setup(
            cfg=self.cfg,
            problem=self.problem,
            device=self.device,
            dtype=self.dtype,
            replica_seed=self.replica_seed,
            unique_seeds=self.unique_seeds,
            seed_index=self.seed_index,
            P=self.P,
            logP=self.logP,
            psi=self.psi,
            labels=self.labels,
            support=self.support,
        )

    @property
    def params(self) -> dict[str, torch.Tensor]:
        """The parameters in token and replica order (Zq, Y; W for Lemma 3; U, WQ, WK, WV for ``standard``).
        Zq and the non-decoder tensors are the live ones; Y of the role-stored kinds is a copy."""
        return self.kind.public(self._state)

    def yz(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Effective (Y, Zq) of any model kind (Y: (R, M_ctx, M_out), Zq: (R, Q, M_ctx))."""
        return self.kind.yz(self._state)

    def _f(self, Zq: torch.Tensor) -> torch.Tensor:
        return self.setup.f(Zq)

    # ----------------------------------------------------------------- stepping
    @torch.no_grad()
    def step(self) -> None:
        """One optimiser step on every replica; tracks B̂_n (science §4,
        scansnap/kinds/synthetic/science/tracking.py) on the way.

        B̂_n += Σ_{l∈G_DT(n)} Δz_{ψ(n),l} / Σ_{l∈G_DT(n)} f_{nl}²  (f before the step): the
        f²-weighted pool of the per-token estimators Δz_l/f_l².  In the exact T→∞ dynamics
        (ż_l = η_Z f_l² ξ_n for every distinct l, Eqn. 98) every per-token estimator equals it;
        with sampling noise, momentum or the plain decoder they disagree, and the pool is the
        stable choice (low-P tokens with tiny f² would dominate a single-token estimator)."""
        z_before = self.tracker.z(self._zq_now())
        loss = self.kind.train_step(self._state, self.samplers, self.opt, self._check_loss)
        self.step_count += 1
        self._train_loss_sum += loss.to(torch.float64)
        self._train_loss_n += 1
        zq = self._zq_now()
        finite = torch.isfinite(zq).flatten(1).all(1)
        if not bool(finite.all()):  # name the first replica whose parameters overflowed
            raise RatesDivergedError(self.step_count - 1, *self.replica_lr[int(torch.nonzero(~finite)[0])])
        self.B_hat += self.tracker.increment(z_before, zq, self._f2)
        self._f2 = self.tracker.f2(zq)

    def _check_loss(self, loss: torch.Tensor, replicas: torch.Tensor | None = None) -> None:
        """DivergedError naming the first replica whose loss is NaN/Inf (``replicas``: the replica of each
        entry of ``loss``, default all in order)."""
        if not bool(torch.isfinite(loss).all()):
            bad = int(torch.nonzero(~torch.isfinite(loss))[0])
            raise RatesDivergedError(self.step_count, *self.replica_lr[bad if replicas is None else int(replicas[bad])])

    def advance(self, n: int) -> None:
        for _ in range(n):
            self.step()

    def _zq_now(self) -> torch.Tensor:
        return self.kind.zq(self._state)

    # ----------------------------------------------------------------- tracking
    def _init_tracking(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Fix Z(0), f_n(0), the dominant distinct token l_0 (largest initial c̃) and the
        runner-up l_1; returns (Z(0), f(0), B̂ = 0)."""
        z0 = self._zq_now().clone()
        f0 = self._f(z0)
        score = torch.where(self.distinct, f0, torch.full_like(f0, -1.0))
        top = torch.topk(score, k=min(2, self.problem.M_ctx), dim=-1).indices  # (R, K, 2)
        self.l0 = top[..., 0]
        self.l1 = top[..., -1]
        self.r0 = mx.relative_gain(self._g(f0, self.l0), self._g(f0, self.l1))
        B_hat = torch.zeros(self.R, self.problem.K, dtype=torch.float64, device=self.device)
        return z0, f0, B_hat

    @staticmethod
    def _g(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        return torch.gather(t, 2, idx.unsqueeze(-1)).squeeze(-1)

    @torch.no_grad()
    def population_loss(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Loss and accuracy over all K classes with T→∞ contexts (x = P(·|n)), noise-free."""
        return self.kind.population_loss(self._state)

    @torch.no_grad()
    def snapshot(self) -> Snapshot:
        Zq = self._zq_now()
        c = mx.attention_c(Zq, self.logP, self.psi)
        f = c / c.norm(dim=-1, keepdim=True)
        dz = (Zq - self.Z0)[:, self.psi]
        loss, acc = self.population_loss()
        d, cm = self.distinct, self.common
        dz0 = self._g(dz, self.l0)
        r = mx.relative_gain(self._g(f, self.l0), self._g(f, self.l1))
        n_tl = self._train_loss_n
        scal = {
            "loss": loss,
            "accuracy": acc,
            "train_loss": self._train_loss_sum / n_tl if n_tl else torch.full_like(loss, float("nan")),
            "entropy_distinct": mx.entropy_distinct(c, d),
            "entropy_all": mx.entropy(c),
            "common_mass": mx.common_mass(c, cm),
            "B_hat": self.B_hat,
            "dz_dominant": dz0,
            "bracket_lo": self._g(self.f0, self.l0) ** 2 * self.B_hat,
            "rel_gain": r,
            "rel_gain_pred": self.r0 * torch.exp(2 * dz0),
            "share_distinct_up": mx.masked_share(dz > 0, d),
            "share_common_down": mx.masked_share(dz < 0, cm),
            "dz_common": mx.common_drop(dz, cm),
        }
        self._train_loss_sum.zero_()
        self._train_loss_n = 0
        return Snapshot(
            self.step_count, self._arrays(Zq, c, dz), {k: _np(v.to(torch.float64)) for k, v in scal.items()}
        )

    def _arrays(self, Zq: torch.Tensor, c: torch.Tensor, dz: torch.Tensor) -> dict[str, np.ndarray]:
        pb = self.problem
        if full_snapshots(self.R, pb.Q, pb.K, pb.M_ctx):
            return {"z": _np(Zq.float()), "c": _np(c.float())}
        k = min(TOPK, pb.M_ctx)
        val, idx = torch.topk(c, k, dim=-1)
        zrows = torch.gather(Zq[:, self.psi], 2, idx)
        return {"topk_idx": _np(idx.int()), "topk_c": _np(val.float()), "topk_z": _np(zrows.float())}

    def statics(self) -> dict[str, np.ndarray]:
        """The arrays stored once per run (:func:`scansnap.kinds.synthetic.science.data.run_statics`)."""
        return run_statics(self.cfg.lr_pairs, list(self.cfg.replicas.seeds), self.problem)

    # ----------------------------------------------------------------- checkpoints
    def checkpoint(self) -> tuple[dict[str, np.ndarray], str]:
        """Everything needed to continue bit-for-bit: parameters, optimiser state, tracking
        tensors (arrays) and the step, optimiser step counts and sampler RNG states (JSON)."""
        arrays = self.kind.param_arrays(self._state) | self.kind.optimizer_arrays(self.opt)
        arrays |= {
            "Z0": _np(self.Z0),
            "f0": _np(self.f0),
            "f_cache": _np(self._f(self._zq_now())),  # f at the current step (the format of earlier runs)
            "B_hat": _np(self.B_hat),
            "train_loss_sum": _np(self._train_loss_sum),
        }
        meta = {
            "step": self.step_count,
            "train_loss_n": self._train_loss_n,
            "opt_t": {k: o.t for k, o in self.opt.items()},
            "rng": [[sm.rng_classes.bit_generator.state, sm.rng.bit_generator.state] for sm in self.samplers],
        }
        return arrays, json.dumps(meta)

    def restore(self, arrays: dict[str, np.ndarray], meta_json: str) -> None:
        """Load a :meth:`checkpoint` taken from a trainer of the same config."""
        meta = json.loads(meta_json)
        t = {k: torch.as_tensor(v, device=self.device) for k, v in arrays.items()}
        self.kind.load_params(
            self._state, {k.removeprefix("param."): v for k, v in t.items() if k.startswith("param.")}
        )
        self.kind.load_optimizers(self.opt, t, meta["opt_t"])
        self.Z0, self.f0 = t["Z0"].to(self.dtype), t["f0"].to(self.dtype)
        self._f2 = self.tracker.f2(self._zq_now())  # f_cache is f of the restored Zq: recomputed as every step does
        self.B_hat, self._train_loss_sum = t["B_hat"].clone(), t["train_loss_sum"].clone()
        self._train_loss_n, self.step_count = int(meta["train_loss_n"]), int(meta["step"])
        for sm, (rc, rx) in zip(self.samplers, meta["rng"], strict=True):
            sm.rng_classes.bit_generator.state = rc
            sm.rng.bit_generator.state = rx

    def run(self):
        """Yield a Snapshot at every scheduled step (step 0 included) until ``optim.steps``."""
        for target in self.schedule:
            self.advance(int(target) - self.step_count)
            yield self.snapshot()
