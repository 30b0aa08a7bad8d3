"""The step-by-step estimate B̂_n (science §4), computed on each class's distinct tokens only.

    B̂_n += Σ_{l∈G_DT(n)} Δz_{ψ(n),l} / Σ_{l∈G_DT(n)} f_{nl}²      (f before the step)

Only z on G_DT(n) and Σ_{G_DT(n)} f² = Σ_{G_DT(n)} c² / Σ_{supp(n)} c² enter, so neither a copy of Z nor
c over the whole vocabulary is needed per step: c is a softmax over supp(n) alone.
"""

from __future__ import annotations

import numpy as np
import torch

from scansnap.kinds.synthetic.science.data import Problem


class DistinctTracker:
    """Index tables of G_DT(n) and supp(n) in the flattened query rows Zq.view(R, Q·M_ctx)."""

    def __init__(self, problem: Problem, device: torch.device, dtype: torch.dtype):
        M, psi = problem.M_ctx, problem.psi[:, None]
        ids = problem.token_roles.distinct
        self.flat = torch.as_tensor(psi * M + np.maximum(ids, 0), device=device)  # (K, d)
        self.mask = torch.as_tensor(ids >= 0, dtype=dtype, device=device)
        sup, probs = problem.support
        self.support_flat = torch.as_tensor(psi * M + sup, device=device)  # (K, s)
        with np.errstate(divide="ignore"):
            self.logP = torch.as_tensor(np.log(probs), dtype=dtype, device=device)  # −∞ on padding slots
        self.support_distinct = torch.as_tensor(problem.distinct_mask[np.arange(problem.K)[:, None], sup] & (probs > 0))
        self.support_distinct = self.support_distinct.to(device, dtype)

    def z(self, Zq: torch.Tensor) -> torch.Tensor:
        """z_{ψ(n),l} for l ∈ G_DT(n): (R, K, d) (padding entries hold z_{ψ(n),0}, masked later)."""
        return Zq.flatten(1)[:, self.flat]

    def f2(self, Zq: torch.Tensor) -> torch.Tensor:
        """Σ_{l∈G_DT(n)} f_{nl}² (R, K) with c = softmax over supp(n) of z + ln P(l|n)."""
        c = torch.softmax(Zq.flatten(1)[:, self.support_flat] + self.logP, dim=-1)
        c2 = c * c
        return (c2 * self.support_distinct).sum(-1) / c2.sum(-1)

    def increment(self, z_before: torch.Tensor, Zq: torch.Tensor, f2_before: torch.Tensor) -> torch.Tensor:
        """This step's term of B̂ (R, K), float64; 0 for a class without distinct tokens."""
        num = ((self.z(Zq) - z_before) * self.mask).sum(-1)
        den = f2_before
        return torch.where(den > 0, num / den.clamp_min(1e-300), torch.zeros_like(num)).to(torch.float64)
