"""The training step before issue 16 (batched replicas that get cheaper per replica), kept as a test oracle.

A verbatim copy of the engine's ``Trainer`` initialisation, step (class-grouped closed-form gradients over
gathered support rows of Y, hand-written softmax, separate optimiser pass), B̂ tracking and the model
functions it used, as they were at commit babc72e.  ``tests/core/test_step_vs_old.py`` compares the engine's
step with it on every model kind and layout, and ``bench/step_speed.py`` times both side by side.
It imports only the problem definition, the config, the device choice and the snapshot schedule from ``scansnap/``.
``checkpoint()`` writes the format that runs stored before issue 16 have (tests restore it into the new trainer).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np
import torch

from scansnap.core.device import resolve_device
from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.synthetic.science.config import OptimConfig, RunConfig
from scansnap.kinds.synthetic.science.data import ContextSampler, Problem, build_problem


def _np(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", copy=True).numpy()


def attention_c(Zq: torch.Tensor, logP: torch.Tensor, psi: torch.Tensor) -> torch.Tensor:
    """c_{l|n} = P(l|n) e^{z_{ψ(n),l}} / Σ_l' P(l'|n) e^{z_{ψ(n),l'}} (Eqn. 5), 0 off supp(n)."""
    return torch.softmax(Zq[:, psi] + logP, dim=-1)


class DivergedError(RuntimeError):
    def __init__(self, step: int, eta_y: float, eta_z: float):
        self.step = step
        super().__init__(f"training diverged after step {step} at η_Y={eta_y:g}, η_Z={eta_z:g}")


# -------------------------------------------------------------------------------------------------- model


def attention_mass(z_rows: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """s_l = x_l e^{z_ml} / Σ_l' x_l' e^{z_ml'}  (= X^T b for a context with counts x)."""
    return torch.softmax(z_rows + torch.log(x), dim=-1)


def loss_yz(Y: torch.Tensor, Zq: torch.Tensor, x: torch.Tensor, q: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Per-replica mean cross-entropy (R,), differentiable (used for autograd paths and tests).

    q: (R, B) query index of each sample; y: (R, B) label index in [0, O)."""
    z_rows = torch.gather(Zq, 1, q.unsqueeze(-1).expand(-1, -1, Zq.shape[-1]))  # (R, B, M)
    s = attention_mass(z_rows, x)
    f = s / s.norm(dim=-1, keepdim=True)
    o = torch.bmm(f, Y)  # (R, B, O)
    logp = torch.log_softmax(o, dim=-1)
    return -torch.gather(logp, 2, y.unsqueeze(-1)).squeeze(-1).mean(1)


def loss_and_grads_yz(
    Y: torch.Tensor, Zq: torch.Tensor, x: torch.Tensor, q: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Closed-form gradients of the mean cross-entropy (Lemma 1, Eqns. 3–4), minus sign included.

        ∂L/∂Y   = (1/B) Σ_b f (α − e_n)^T
        ∂L/∂z_m = (1/B) Σ_{b: x_T=m} s ∘ [P^⊥_f Y(α − e_n)] / ‖s‖
    (diag(s) = X^T diag(b) X for one-hot rows, and s^T P^⊥_f = 0 removes the softmax's
    −s s^T term).  Returns (loss (R,), accuracy (R,), dY, dZq).
    """
    _, B, M = x.shape
    z_rows = torch.gather(Zq, 1, q.unsqueeze(-1).expand(-1, -1, M))
    s = attention_mass(z_rows, x)
    norm = s.norm(dim=-1, keepdim=True)
    f = s / norm
    o = torch.bmm(f, Y)  # (R, B, O)
    logp = torch.log_softmax(o, dim=-1)
    loss = -torch.gather(logp, 2, y.unsqueeze(-1)).squeeze(-1).mean(1)
    acc = (o.argmax(-1) == y).to(o.dtype).mean(1)
    delta = logp.exp()
    delta.scatter_add_(2, y.unsqueeze(-1), torch.full_like(y, -1, dtype=o.dtype).unsqueeze(-1))
    delta /= B  # (α − e_n)/B
    dY = torch.bmm(f.transpose(1, 2), delta)  # (R, M, O)
    g = torch.bmm(delta, Y.transpose(1, 2))  # Y(α − e_n)/B : (R, B, M)
    u = (g - f * (f * g).sum(-1, keepdim=True)) / norm
    dz_rows = s * u
    dZq = torch.zeros_like(Zq).scatter_add_(1, q.unsqueeze(-1).expand(-1, -1, M), dz_rows)
    return loss, acc, dY, dZq


def loss_and_grads_grouped(
    Y: torch.Tensor,
    Zq: torch.Tensor,
    xs: torch.Tensor,
    w: torch.Tensor,
    support: torch.Tensor,
    psi: torch.Tensor,
    labels: torch.Tensor,
    accuracy: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same loss and gradients as :func:`loss_and_grads_yz`, computed in support coordinates.

    A sample of class n only has tokens of supp(n), so the batch is grouped by class:
    xs (R, K, G, s) holds counts of slot g of class n over the s tokens ``support[n]``
    (K, s); w (R, K, G) is each sample's weight (1/B, 0 for padding slots, whose counts must
    be positive somewhere).  Work drops from O(B·M·O) to O(K·G·s·O), G·K ≈ B, s = |supp|.
    α = softmax(o) is formed once (e^{o−max o}/Σ) and ln α_n = o_n − max o − ln Σ, so no
    full-size log-softmax is needed.  ``accuracy=False`` skips the argmax (returns NaN).
    """
    R, K, G, s_ = xs.shape
    M, n_out = Zq.shape[-1], Y.shape[-1]
    z_S = torch.gather(Zq[:, psi], 2, support.unsqueeze(0).expand(R, -1, -1))  # (R, K, s)
    s = attention_mass(z_S.unsqueeze(2), xs)  # (R, K, G, s)
    norm = s.norm(dim=-1, keepdim=True)
    f = s / norm
    Y_S = torch.index_select(Y, 1, support.reshape(-1)).view(R, K, s_, n_out)  # rows of supp(n), contiguous
    o = torch.matmul(f, Y_S)  # (R, K, G, O)
    lab = labels.view(1, K, 1, 1).expand(R, K, G, 1)
    o_max = o.amax(-1, keepdim=True)
    delta = torch.exp(o - o_max)
    total = delta.sum(-1, keepdim=True)
    logp_y = (torch.gather(o, 3, lab) - o_max - torch.log(total)).squeeze(-1)
    loss = -(w * logp_y).sum((1, 2))
    acc = (
        (w * (o.argmax(-1) == lab.squeeze(-1)).to(o.dtype)).sum((1, 2))
        if accuracy
        else torch.full_like(loss, float("nan"))
    )
    delta /= total  # α
    delta.scatter_add_(3, lab, torch.full_like(lab, -1, dtype=o.dtype))
    delta *= w.unsqueeze(-1)  # (α − e_n)·w
    dY_S = torch.matmul(f.transpose(2, 3), delta)  # (R, K, s, O)
    dY = torch.zeros_like(Y).index_add_(1, support.reshape(-1), dY_S.view(R, K * s_, n_out))
    g = torch.matmul(delta, Y_S.transpose(2, 3))  # (R, K, G, s)
    u = (g - f * (f * g).sum(-1, keepdim=True)) / norm
    dz_S = (s * u).sum(2)  # (R, K, s)
    flat = (psi.unsqueeze(1) * M + support).reshape(-1)
    dZq = torch.zeros(R, Zq.shape[1] * M, dtype=Zq.dtype, device=Zq.device).index_add_(1, flat, dz_S.reshape(R, -1))
    return loss, acc, dY, dZq.view_as(Zq)


def loss_and_grads_lemma3(
    W: torch.Tensor, Zq: torch.Tensor, P: torch.Tensor, psi: torch.Tensor, y: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """T→∞ expected dynamics with the decoder kept in span(F) (Lemma 3 + Eqn. 10).

    The decoder is W = F^T Y (R, K, O), so o_n = w_n, and Y = F (F^T F)^{-1} W.  The
    back-propagated gradient g_n = Y(α_n − e_n) then lies in span(F), which makes
    ż_{ml} = η_Z f_{nl}² ξ_n exact for distinct tokens (Theorem 3's identity).
    Classes are weighted uniformly (1/K).  Returns (loss, accuracy, dW, dZq).
    """
    R, K, _ = W.shape
    M = P.shape[-1]
    Pb = P.unsqueeze(0).expand(R, -1, -1)
    qb = psi.unsqueeze(0).expand(R, -1)
    z_rows = torch.gather(Zq, 1, qb.unsqueeze(-1).expand(-1, -1, M))
    s = attention_mass(z_rows, Pb)  # c_n : (R, K, M)
    norm = s.norm(dim=-1, keepdim=True)
    f = s / norm
    logp = torch.log_softmax(W, dim=-1)
    yb = y.unsqueeze(0).expand(R, -1)
    loss = -torch.gather(logp, 2, yb.unsqueeze(-1)).squeeze(-1).mean(1)
    acc = (W.argmax(-1) == yb).to(W.dtype).mean(1)
    delta = logp.exp()
    delta.scatter_add_(2, yb.unsqueeze(-1), torch.full_like(yb, -1, dtype=W.dtype).unsqueeze(-1))
    delta /= K
    G = torch.bmm(f, f.transpose(1, 2))  # F^T F : (R, K, K)
    C = torch.linalg.lstsq(G, torch.bmm(W, delta.transpose(1, 2))).solution  # (F^TF)^{-1} W D^T
    g = torch.bmm(C.transpose(1, 2), f)  # row n: Σ_n' C[n', n] f_n' = Y(α_n − e_n)/K : (R, K, M)
    u = (g - f * (f * g).sum(-1, keepdim=True)) / norm
    dZq = torch.zeros_like(Zq).scatter_add_(1, qb.unsqueeze(-1).expand(-1, -1, M), s * u)
    return loss, acc, delta, dZq


def decoder_from_lemma3(W: torch.Tensor, f: torch.Tensor) -> torch.Tensor:
    """Y = F (F^T F)^{-1} W, the minimum-norm decoder with F^T Y = W.  f: (R, K, M)."""
    G = torch.bmm(f, f.transpose(1, 2))
    return torch.bmm(f.transpose(1, 2), torch.linalg.lstsq(G, W).solution)


def effective_yz_standard(
    U: torch.Tensor,
    WQ: torch.Tensor,
    WK: torch.Tensor,
    WV: torch.Tensor,
    ctx: torch.Tensor,
    query: torch.Tensor,
    out: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Y = U W_V^T U^T and Z = U W_Q W_K^T U^T / √d (science §2.2), restricted to the rows and
    columns that matter: Y[ctx, out] (R, M, O) and Z[query, ctx] (R, Q, M).  U: (R, V, d)."""
    d = U.shape[-1]
    Uc, Uq, Uo = U[:, ctx], U[:, query], U[:, out]
    Zq = torch.bmm(torch.bmm(Uq, WQ), torch.bmm(Uc, WK).transpose(1, 2)) / math.sqrt(d)
    Y = torch.bmm(torch.bmm(Uc, WV.transpose(1, 2)), Uo.transpose(1, 2))
    return Y, Zq


# -------------------------------------------------------------------------------------------------- optimiser


@dataclass
class ReplicaOptimizer:
    """Updates one parameter tensor of shape (R, ...) with learning rates lr (R,)."""

    cfg: OptimConfig
    lr: torch.Tensor
    state: dict[str, torch.Tensor] = field(default_factory=dict)
    t: int = 0

    def step(self, p: torch.Tensor, grad: torch.Tensor) -> None:
        lr = self.lr.view(-1, *([1] * (p.dim() - 1)))
        d = grad if self.cfg.weight_decay == 0 else grad + self.cfg.weight_decay * p
        self.t += 1
        if self.cfg.method == "sgd":
            if self.cfg.momentum > 0:
                buf = self.state.get("buf")
                if buf is None:
                    buf = self.state["buf"] = d.clone()
                else:
                    buf.mul_(self.cfg.momentum).add_(d)
                d = buf
            p.sub_(lr * d)
            return
        b1, b2 = self.cfg.beta1, self.cfg.beta2
        m = self.state.setdefault("m", torch.zeros_like(p))
        v = self.state.setdefault("v", torch.zeros_like(p))
        m.lerp_(d, 1 - b1)
        v.mul_(b2).addcmul_(d, d, value=1 - b2)
        bc1, bc2 = 1 - b1**self.t, 1 - b2**self.t
        denom = (v.sqrt() / bc2**0.5).add_(self.cfg.eps)
        p.sub_((lr / bc1) * m / denom)


# -------------------------------------------------------------------------------------------------- trainer


def init_tensor(kind: str, shape: tuple[int, ...], fan_in: int, std: float, gen: torch.Generator) -> torch.Tensor:
    """zero; torch-default = nn.Linear's U(−1/√fan_in, 1/√fan_in); normal = N(0, std²)."""
    if kind == "zero":
        return torch.zeros(shape, dtype=torch.float64)
    if kind == "torch-default":
        bound = 1 / math.sqrt(fan_in)
        return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * bound
    return torch.randn(shape, generator=gen, dtype=torch.float64) * std


class OldTrainer:
    """The trainer's parameters, step and B̂ tracking exactly as before issue 16 (no snapshots, no checkpoints)."""

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
        self.params = self._init_params()
        lr_y = t([p[0] for p in self.replica_lr])
        lr_z = t([p[1] for p in self.replica_lr])
        self.opt = {
            name: ReplicaOptimizer(cfg.optim, lr_z if name in ("Zq", "WQ", "WK") else lr_y) for name in self.params
        }
        T = None if cfg.data.infinite_T else int(cfg.data.T)
        self.samplers = [ContextSampler(pb, T, s) for s in self.unique_seeds]
        self.step_count = 0
        self.schedule = snapshot_steps(cfg.optim.steps, cfg.snapshots)
        self._train_loss_sum = torch.zeros(self.R, dtype=torch.float64, device=self.device)
        self._train_loss_n = 0
        self.Z0, self._f_cache, self.f0, self.B_hat = self._init_tracking()

    def _t(self, a: object) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a), dtype=self.dtype, device=self.device)

    # ----------------------------------------------------------------- parameters
    def _init_params(self) -> dict[str, torch.Tensor]:
        pb, m = self.problem, self.cfg.model
        shapes: dict[str, tuple[int, ...]]
        if m.kind == "standard":
            shapes = {"U": (pb.M, m.d), "WQ": (m.d, m.d), "WK": (m.d, m.d), "WV": (m.d, m.d)}
        else:  # the Lemma-3 decoder starts from the plain model's Y(0) of the same seed (W = F^T Y below)
            shapes = {"Zq": (pb.Q, pb.M_ctx), "Y": (pb.M_ctx, pb.M_out)}
        per_seed: dict[int, dict[str, torch.Tensor]] = {}
        for s in self.unique_seeds:
            gen = torch.Generator().manual_seed(s)
            per_seed[s] = {}
            for name, shape in shapes.items():
                kind = m.init
                if name == "U":  # fixed near-orthonormal embeddings
                    per_seed[s][name] = torch.randn(shape, generator=gen, dtype=torch.float64) / math.sqrt(m.d)
                    continue
                fan_in = m.d if m.kind == "standard" else pb.M
                per_seed[s][name] = init_tensor(kind, shape, fan_in, m.init_std, gen)
        params = {
            name: torch.stack([per_seed[s][name] for s in self.replica_seed]).to(self.device, self.dtype)
            for name in shapes
        }
        if m.kind == "yz-meanfield" and m.meanfield_decoder == "lemma3":  # W = F(0)^T Y(0)  (R, K, M_out)
            params["W"] = torch.bmm(self._f(params["Zq"]), params.pop("Y"))
        return params

    def yz(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Effective (Y, Zq) of any model kind (Y: (R, M_ctx, M_out), Zq: (R, Q, M_ctx))."""
        p = self.params
        if "U" in p:
            return effective_yz_standard(p["U"], p["WQ"], p["WK"], p["WV"], *self._standard_index())
        if "W" in p:
            return decoder_from_lemma3(p["W"], self._f(p["Zq"])), p["Zq"]
        return p["Y"], p["Zq"]

    def _f(self, Zq: torch.Tensor) -> torch.Tensor:
        c = attention_c(Zq, self.logP, self.psi)
        return c / c.norm(dim=-1, keepdim=True)

    # ----------------------------------------------------------------- stepping
    def _grouped_batch(self) -> tuple[torch.Tensor, torch.Tensor]:
        """A mini-batch grouped by class in support coordinates: xs (R, K, G, s), w (R, K, G).

        Mean field: every class once with x = P(·|n) and weight 1/K."""
        probs = self.problem.support[1]
        K, s = probs.shape
        if self.cfg.model.kind == "yz-meanfield":
            xp = self._t(probs).view(1, K, 1, s).expand(self.R, -1, -1, -1)
            return xp, torch.full((self.R, K, 1), 1 / K, dtype=self.dtype, device=self.device)
        B = self.cfg.optim.batch
        draws = [sm.sample(B) for sm in self.samplers]
        G = max(int(np.bincount(cls, minlength=K).max()) for cls, _ in draws)
        xs = np.zeros((len(draws), K, G, s))
        w = np.zeros((len(draws), K, G))
        for i, (cls, counts) in enumerate(draws):
            order = np.argsort(cls, kind="stable")
            start = np.concatenate([[0], np.cumsum(np.bincount(cls, minlength=K))[:-1]])
            slot = np.empty(B, dtype=np.int64)
            slot[order] = np.arange(B) - start[cls[order]]
            xs[i, cls, slot] = counts
            w[i, cls, slot] = 1 / B
        xs[..., 0][w == 0] = 1.0  # padding slots: any valid context, weight 0
        xs_t, w_t = self._t(xs), self._t(w)
        if len(draws) == 1:
            return xs_t.expand(self.R, -1, -1, -1), w_t.expand(self.R, -1, -1)
        return xs_t[self.seed_index], w_t[self.seed_index]

    def _dense_batch(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(x (R, B, M_ctx), q (R, B), y (R, B)) for the autograd (standard model) path."""
        draws = [sm.sample(self.cfg.optim.batch) for sm in self.samplers]
        cls = torch.as_tensor(np.stack([d[0] for d in draws]), device=self.device)[self.seed_index]
        x = self._t(np.stack([self.problem.dense_counts(*d) for d in draws]))[self.seed_index]
        return x, self.psi[cls], self.labels[cls]

    def _grads(self) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        p = self.params
        if "W" in p:
            loss, _, dW, dZ = loss_and_grads_lemma3(p["W"], p["Zq"], self.P, self.psi, self.labels)
            return loss, {"W": dW, "Zq": dZ}
        if "Y" in p:
            xs, w = self._grouped_batch()
            loss, _, dY, dZ = loss_and_grads_grouped(
                p["Y"], p["Zq"], xs, w, self.support, self.psi, self.labels, accuracy=False
            )
            return loss, {"Y": dY, "Zq": dZ}
        x, q, y = self._dense_batch()
        leaves = {k: v.detach().requires_grad_(k != "U") for k, v in p.items()}
        with torch.enable_grad():
            Y, Zq = effective_yz_standard(
                leaves["U"], leaves["WQ"], leaves["WK"], leaves["WV"], *self._standard_index()
            )
            loss = loss_yz(Y, Zq, x, q, y)
            names = [k for k in leaves if k != "U"]
            grads = torch.autograd.grad(loss.sum(), [leaves[k] for k in names])
        return loss.detach(), dict(zip(names, grads, strict=True))

    def _standard_index(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        pb = self.problem
        return (
            torch.arange(pb.M_ctx, device=self.device),
            torch.as_tensor(pb.query_ids, device=self.device),
            torch.as_tensor(pb.output_ids, device=self.device),
        )

    @torch.no_grad()
    def step(self) -> None:
        """One optimiser step on every replica; tracks B̂_n (science §4) on the way.

        B̂_n += Σ_{l∈G_DT(n)} Δz_{ψ(n),l} / Σ_{l∈G_DT(n)} f_{nl}²  (f before the step): the
        f²-weighted pool of the per-token estimators Δz_l/f_l².  In the exact T→∞ dynamics
        (ż_l = η_Z f_l² ξ_n for every distinct l, Eqn. 98) every per-token estimator equals it;
        with sampling noise, momentum or the plain decoder they disagree, and the pool is the
        stable choice (low-P tokens with tiny f² would dominate a single-token estimator)."""
        f_before = self._f_cache
        z_before = self._zq_now().clone()
        loss, grads = self._grads()
        if not bool(torch.isfinite(loss).all()):
            bad = int(torch.nonzero(~torch.isfinite(loss))[0])
            raise DivergedError(self.step_count, *self.replica_lr[bad])
        for name, g in grads.items():
            self.opt[name].step(self.params[name], g)
        self.step_count += 1
        self._train_loss_sum += loss.to(torch.float64)
        self._train_loss_n += 1
        zq = self._zq_now()
        if not bool(torch.isfinite(zq).all()):
            raise DivergedError(self.step_count - 1, *self.replica_lr[0])
        dz = (zq - z_before)[:, self.psi]  # (R, K, M)
        d = self.distinct
        num = (dz * d).sum(-1)
        den = (f_before**2 * d).sum(-1)
        self.B_hat += torch.where(den > 0, num / den.clamp_min(1e-300), torch.zeros_like(num)).to(torch.float64)
        self._f_cache = self._f(zq)

    def advance(self, n: int) -> None:
        for _ in range(n):
            self.step()

    def _zq_now(self) -> torch.Tensor:
        return self.yz()[1] if "U" in self.params else self.params["Zq"]

    # ----------------------------------------------------------------- tracking
    def _init_tracking(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """Fix Z(0), f_n(0), the dominant distinct token l_0 (largest initial c̃) and the
        runner-up l_1; returns (Z(0), f(0) as the step cache, f(0), B̂ = 0)."""
        z0 = self._zq_now().clone()
        f0 = self._f(z0)
        score = torch.where(self.distinct, f0, torch.full_like(f0, -1.0))
        top = torch.topk(score, k=min(2, self.problem.M_ctx), dim=-1).indices  # (R, K, 2)
        self.l0 = top[..., 0]
        self.l1 = top[..., -1]
        B_hat = torch.zeros(self.R, self.problem.K, dtype=torch.float64, device=self.device)
        return z0, f0.clone(), f0, B_hat

    # ----------------------------------------------------------------- checkpoints
    def checkpoint(self) -> tuple[dict[str, np.ndarray], str]:
        """Everything needed to continue bit-for-bit: parameters, optimiser state, tracking
        tensors (arrays) and the step, optimiser step counts and sampler RNG states (JSON)."""
        arrays = {f"param.{k}": _np(v) for k, v in self.params.items()}
        for name, opt in self.opt.items():
            arrays |= {f"opt.{name}.{k}": _np(v) for k, v in opt.state.items()}
        arrays |= {
            "Z0": _np(self.Z0),
            "f0": _np(self.f0),
            "f_cache": _np(self._f_cache),
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
