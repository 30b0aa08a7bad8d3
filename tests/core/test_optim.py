"""Per-replica SGD/Adam against torch.optim, replica by replica; the fused decoder update and the
calibration's numpy stepper against it (one rule, :func:`scansnap.kinds.synthetic.science.optim.finish_update_`)."""

import numpy as np
import pytest
import torch

from scansnap.kinds.synthetic.science.calibration import _Stepper
from scansnap.kinds.synthetic.science.config import OptimConfig
from scansnap.kinds.synthetic.science.fused import BlockOptimizer, Workspace
from scansnap.kinds.synthetic.science.optim import ReplicaOptimizer

CONFIGS = [
    OptimConfig(method="sgd", momentum=0.9),
    OptimConfig(method="sgd", momentum=0.0, weight_decay=0.01),
    OptimConfig(method="sgd", momentum=0.9, weight_decay=0.01),
    OptimConfig(method="adam", weight_decay=0.001),
    OptimConfig(method="adam", beta1=0.5, beta2=0.9, eps=1e-6),
]


@pytest.mark.parametrize("cfg", CONFIGS)
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


def _steps(cfg: OptimConfig, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
    """Learning rates (3,), a start p0 (3, 4, 5) and six gradients, float64."""
    g = torch.Generator().manual_seed(seed)
    p0 = torch.randn(3, 4, 5, generator=g, dtype=torch.float64)
    return (
        torch.tensor([0.5, 0.05, 2.0], dtype=torch.float64),
        p0,
        [torch.randn(3, 4, 5, generator=g, dtype=torch.float64) for _ in range(6)],
    )


@pytest.mark.parametrize("cfg", CONFIGS)
def test_the_fused_decoder_update_is_the_same_rule_bit_for_bit(cfg):
    """BlockOptimizer's sink (∂L/∂Y accumulated with β = μ into the momentum buffer, else a scratch) and
    update, on two row ranges of one block, equal ReplicaOptimizer exactly (both call finish_update_);
    with weight decay to float64 rounding: the fused step adds λp once the gradient has landed in the
    buffer, (μ·buf + g) + λp, where ReplicaOptimizer forms μ·buf + (g + λp) as torch.optim does."""
    lr, p0, grads = _steps(cfg)
    ours, theirs = p0.clone(), p0.clone()
    block, ref = BlockOptimizer(cfg, lr, {"Y": ours}), ReplicaOptimizer(cfg, lr.clone())
    ws = Workspace()
    ws.buffers["grad.Y"] = torch.full((p0.numel(),), torch.nan, dtype=p0.dtype)  # a reused scratch's garbage
    for gr in grads:
        block.begin()
        for rows in (slice(0, 2), slice(2, 3)):
            sink = block.sink("Y", rows, ws)
            if block.beta:  # the engine's sink write (baddbmm_ with beta): β·sink + g, and with β = 0 just g:
                sink.mul_(block.beta).add_(gr[rows])
            else:  # a scratch may hold NaN (torch.empty; above: on purpose), and 0·NaN is NaN
                sink.copy_(gr[rows])
            block.update("Y", rows, ours[rows], sink)
        ref.step(theirs, gr)
    if cfg.weight_decay:
        torch.testing.assert_close(ours, theirs, rtol=1e-14, atol=1e-15)
        assert not torch.equal(ours, p0)
    else:
        assert torch.equal(ours, theirs)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_the_calibration_stepper_is_the_same_rule_in_numpy(cfg):
    """The reduced system's numpy stepper (the web process computes it and loads no torch) follows
    finish_update_ to float64 rounding, weight decay on every coordinate."""
    lr, p0, grads = _steps(cfg, seed=1)
    ours = p0.clone()
    ref = ReplicaOptimizer(cfg, lr.clone())
    flat_lr = lr[:, None].expand(3, 20).reshape(-1).numpy()
    stepper, p = _Stepper(cfg, flat_lr, np.ones(60)), p0.reshape(-1).numpy().copy()
    for gr in grads:
        ref.step(ours, gr)
        p = stepper.step(p, gr.reshape(-1).numpy())
    np.testing.assert_allclose(p, ours.reshape(-1).numpy(), rtol=1e-12, atol=1e-14)
