"""The YZ training step on role blocks, one chunk of replicas at a time, with the decoder's update fused in.

Per sample of class n (role columns: common block, then n's distinct block; science §2.3–2.5):
    s = softmax(z_{ψ(n)} + ln x),  f = s/‖s‖,  o = f_cᵀY_c + f_dᵀY_d[n],  α = softmax(o)
    loss = −Σ w ln α_n,  δ = (α − e_n)·w,  ∂L/∂Y_c = Σ f_c δᵀ,  ∂L/∂Y_d[n] = Σ_{class n} f_d δᵀ,
    ∂L/∂z_{ψ(n)} = Σ s ∘ (g − f (fᵀg))/‖s‖ with g = Yδ.
The logits o and δ live in one reusable buffer; ∂L/∂Y is written by ``baddbmm_`` straight into the
optimiser's momentum buffer (β = μ) or a reused scratch buffer, and the parameter is updated in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch

from scansnap.kinds.synthetic.science.config import OptimConfig
from scansnap.kinds.synthetic.science.optim import finish_update_
from scansnap.kinds.synthetic.science.roles import RoleBatch


class Workspace:
    """Flat buffers reused from step to step, so the step's large intermediates never come fresh from the OS."""

    def __init__(self) -> None:
        self.buffers: dict[str, torch.Tensor] = {}

    def get(self, name: str, shape: tuple[int, ...], like: torch.Tensor) -> torch.Tensor:
        n = math.prod(shape)
        buf = self.buffers.get(name)
        if buf is None or buf.numel() < n or buf.dtype != like.dtype or buf.device != like.device:
            buf = self.buffers[name] = torch.empty(n, dtype=like.dtype, device=like.device)
        return buf[:n].view(shape)


def attention(zc: torch.Tensor, batch: RoleBatch) -> torch.Tensor:
    """f = s/‖s‖ (Rc, K, G, S) with s = softmax(z + ln x) over the role columns; 0 on padding slots."""
    s = torch.softmax(zc.unsqueeze(2) + batch.logx, dim=-1)
    return s.mul_(batch.mask / torch.linalg.vector_norm(s, dim=-1, keepdim=True))


def logits(ws: Workspace, f: torch.Tensor, Yc: torch.Tensor, Yd: torch.Tensor) -> torch.Tensor:
    """o = f_cᵀY_c + f_dᵀY_d[n] (Rc, K, G, O), in the workspace's "o" buffer."""
    Rc, K, G, _ = f.shape
    mc, d, n_out = Yc.shape[1], Yd.shape[2], Yc.shape[2]
    o = ws.get("o", (Rc, K, G, n_out), Yc)
    torch.bmm(f[..., :mc].reshape(Rc, K * G, mc), Yc, out=o.view(Rc, K * G, n_out))
    o.view(Rc * K, G, n_out).baddbmm_(f[..., mc:].reshape(Rc * K, G, d), Yd.reshape(Rc * K, d, n_out))
    return o


def loss_and_delta(o: torch.Tensor, batch: RoleBatch, loss: torch.Tensor) -> None:
    """Turns o into δ = α − e_n in place (unweighted: padding slots have f = 0, the weight goes into the
    GEMMs) and writes the loss −Σ w ln α_n per replica into ``loss`` (Rc,)."""
    Rc, K, G, _ = o.shape
    label = batch.label.unsqueeze(0).expand(Rc, K, G, 1)
    torch.log_softmax(o, dim=-1, out=o)
    torch.sum(o.gather(3, label).view(Rc, K * G) * batch.neg_w, 1, out=loss)
    o.exp_().scatter_add_(3, label, batch.minus_one.unsqueeze(0).expand(Rc, K, G, 1))


def attention_grad(f: torch.Tensor, delta: torch.Tensor, Yc: torch.Tensor, Yd: torch.Tensor, out: torch.Tensor) -> None:
    """∂L/∂z (Rc, K, S) per class and role column, up to the sample weight, into ``out``:
    Σ_g s ∘ (g − f(fᵀg))/‖s‖ = Σ_g f ∘ (g − f(fᵀg)) with g = Yδ (Lemma 1)."""
    Rc, K, G, n_out = delta.shape
    mc, d = Yc.shape[1], Yd.shape[2]
    gc = torch.bmm(delta.view(Rc, K * G, n_out), Yc.transpose(1, 2)).view(Rc, K, G, mc)
    gd = torch.bmm(delta.view(Rc * K, G, n_out), Yd.reshape(Rc * K, d, n_out).transpose(1, 2)).view(Rc, K, G, d)
    fg = torch.cat([gc, gd], dim=-1).mul_(f)
    torch.sum(torch.addcmul(fg, f * f, fg.sum(-1, keepdim=True), value=-1), 2, out=out)


def decoder_grad_into(
    sink_c: torch.Tensor, sink_d: torch.Tensor, f: torch.Tensor, delta: torch.Tensor, beta: float, scale: float
) -> None:
    """sink ← β·sink + ∂L/∂Y for both blocks (∂L/∂Y_c = w Σ f_c δᵀ over all samples, ∂L/∂Y_d[n] over class n's)."""
    Rc, K, G, n_out = delta.shape
    mc, d = sink_c.shape[1], sink_d.shape[2]
    fc = f[..., :mc].reshape(Rc, K * G, mc)
    fd = f[..., mc:].reshape(Rc * K, G, d)
    sink_c.baddbmm_(fc.transpose(1, 2), delta.view(Rc, K * G, n_out), beta=beta, alpha=scale)
    sink_d.view(Rc * K, d, n_out).baddbmm_(fd.transpose(1, 2), delta.view(Rc * K, G, n_out), beta=beta, alpha=scale)


@dataclass
class BlockOptimizer:
    """SGD (momentum) / Adam on the decoder's role blocks:
    :func:`scansnap.kinds.synthetic.science.optim.finish_update_`.

    ``begin()`` once per step; then per chunk ``sink`` says where ∂L/∂Y goes (the momentum buffer, accumulated
    with β = μ after the first step, or a scratch) and ``update`` applies the rule to the block's rows.
    ``state`` holds "buf.<block>" (SGD with momentum) or "m.<block>", "v.<block>" (Adam), in group order.
    """

    cfg: OptimConfig
    lr: torch.Tensor  # (R,) in group order
    blocks: dict[str, torch.Tensor]  # name → parameter block (R, …), for shapes
    state: dict[str, torch.Tensor] = field(default_factory=dict)
    t: int = 0

    def __post_init__(self) -> None:
        kinds: tuple[str, ...] = ("buf",) if self.cfg.method == "sgd" and self.cfg.momentum > 0 else ()
        kinds = ("m", "v") if self.cfg.method == "adam" else kinds
        self.state = {f"{k}.{b}": torch.zeros_like(p) for k in kinds for b, p in self.blocks.items()}

    def begin(self) -> None:
        self.t += 1

    @property
    def beta(self) -> float:
        """β of the gradient's accumulation into its sink: μ into the momentum buffer after the first step."""
        return self.cfg.momentum if self.cfg.method == "sgd" and self.cfg.momentum > 0 and self.t > 1 else 0.0

    def sink(self, block: str, rows: slice, ws: Workspace) -> torch.Tensor:
        """Where the gradient of ``block``'s rows goes: the momentum buffer itself, or a scratch of ``ws``."""
        if "buf." + block in self.state:
            return self.state["buf." + block][rows]
        p = self.blocks[block][rows]
        return ws.get("grad." + block, tuple(p.shape), p)

    def update(self, block: str, rows: slice, p: torch.Tensor, g: torch.Tensor) -> None:
        """Finish the step of ``p`` (the block's rows) whose gradient sits in ``g`` (its sink)."""
        lr = self.lr[rows].view(-1, *([1] * (p.dim() - 1)))
        if self.cfg.weight_decay:  # d = g + λp (with momentum: the buffer μ·buf + g + λp)
            g.add_(p, alpha=self.cfg.weight_decay)
        m, v = self.state.get("m." + block), self.state.get("v." + block)
        finish_update_(self.cfg, self.t, p, g, lr, None if m is None else m[rows], None if v is None else v[rows])
