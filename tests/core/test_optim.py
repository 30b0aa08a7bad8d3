"""Per-replica SGD/Adam against torch.optim, replica by replica."""

import pytest
import torch

from engine.core.config import OptimConfig
from engine.core.optim import ReplicaOptimizer


@pytest.mark.parametrize(
    "cfg",
    [
        OptimConfig(method="sgd", momentum=0.9),
        OptimConfig(method="sgd", momentum=0.0, weight_decay=0.01),
        OptimConfig(method="adam", weight_decay=0.001),
        OptimConfig(method="adam", beta1=0.5, beta2=0.9, eps=1e-6),
    ],
)
def test_matches_torch_optim_per_replica(cfg):
    g = torch.Generator().manual_seed(0)
    lrs = [0.5, 0.05, 2.0]
    p0 = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    grads = [torch.randn(3, 4, 5, generator=g, dtype=torch.float64) for _ in range(6)]
    ours = p0.clone()
    opt = ReplicaOptimizer(cfg, torch.tensor(lrs, dtype=torch.float64))
    for gr in grads:
        opt.step(ours, gr + 0.1 * ours)  # a gradient that depends on the parameter
    for r, lr in enumerate(lrs):
        p = p0[r].clone().requires_grad_()
        if cfg.method == "sgd":
            ref = torch.optim.SGD([p], lr=lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
        else:
            ref = torch.optim.Adam([p], lr=lr, betas=(cfg.beta1, cfg.beta2), eps=cfg.eps, weight_decay=cfg.weight_decay)
        for gr in grads:
            p.grad = gr[r] + 0.1 * p.detach()
            ref.step()
        assert torch.allclose(ours[r], p.detach(), atol=1e-12, rtol=1e-10), (cfg.method, r)
