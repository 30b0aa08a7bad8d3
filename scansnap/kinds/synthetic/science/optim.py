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

from scansnap.kinds.synthetic.science.config import OptimConfig


def finish_update_(
    cfg: OptimConfig,
    t: int,
    p: torch.Tensor,
    d: torch.Tensor,
    lr: torch.Tensor,
    m: torch.Tensor | None = None,
    v: torch.Tensor | None = None,
) -> None:
    """Step t of ``p`` in place from its direction d, the one update rule of training and the fused step
    (the calibration's reduced system runs it in numpy).  d = g + λp, for SGD with momentum the buffer
    μ·buf + d (d at t = 1); the caller forms it where its gradient lands:
        SGD:  p ← p − η·d
        Adam: m ← β₁m + (1−β₁)d;  v ← β₂v + (1−β₂)d²;  p ← p − (η/(1−β₁ᵗ))·m / (√v/√(1−β₂ᵗ) + ε)
    ``lr`` (η) broadcasts against ``p``; ``m``, ``v``: Adam's moments; for Adam ``d`` is then scratch."""
    if cfg.method == "sgd":
        p.sub_(lr * d)
        return
    assert m is not None and v is not None, "Adam needs its moments"
    b1, b2 = cfg.beta1, cfg.beta2
    m.lerp_(d, 1 - b1)
    v.mul_(b2).addcmul_(d, d, value=1 - b2)
    denom = torch.sqrt(v, out=d).div_((1 - b2**t) ** 0.5).add_(cfg.eps)
    p.sub_(torch.div((lr / (1 - b1**t)) * m, denom, out=denom))


@dataclass
class ReplicaOptimizer:
    """Updates one parameter tensor of shape (R, ...) with learning rates lr (R,) (:func:`finish_update_`)."""

    cfg: OptimConfig
    lr: torch.Tensor
    state: dict[str, torch.Tensor] = field(default_factory=dict)
    t: int = 0

    def step(self, p: torch.Tensor, grad: torch.Tensor) -> None:
        cfg, lr = self.cfg, self.lr.view(-1, *([1] * (p.dim() - 1)))
        self.t += 1
        d = grad + cfg.weight_decay * p if cfg.weight_decay else grad.clone()
        if cfg.method == "sgd" and cfg.momentum > 0:
            buf = self.state.get("buf")
            d = self.state["buf"] = d if buf is None else buf.mul_(cfg.momentum).add_(d)
        if cfg.method == "adam":
            self.state.setdefault("m", torch.zeros_like(p))
            self.state.setdefault("v", torch.zeros_like(p))
        finish_update_(cfg, self.t, p, d, lr, self.state.get("m"), self.state.get("v"))
