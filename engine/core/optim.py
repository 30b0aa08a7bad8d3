"""SGD (momentum) and Adam with a learning rate per replica, matching ``torch.optim``.

torch.optim takes one learning rate per parameter group; a (η_Y, η_Z) grid on a replica axis
needs one per replica, so the update rules are re-stated here (tests check them against
torch.optim.SGD / Adam replica by replica):

    SGD:  d = g + λp;  buf = d (first step) else μ·buf + d;  p ← p − η·buf
    Adam: d = g + λp;  m ← β₁m + (1−β₁)d;  v ← β₂v + (1−β₂)d²;
          p ← p − (η/(1−β₁ᵗ)) · m / (√v/√(1−β₂ᵗ) + ε)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from engine.core.config import OptimConfig


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
