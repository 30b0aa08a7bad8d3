"""Attention statistics (science §3): c_n, entropies, shares, relative gain.

Shapes: c and masks are (R, K, M); per-class results are (R, K).  The names under which they are
recorded are in :mod:`scansnap.core.metrics`.
"""

from __future__ import annotations

import torch


def attention_c(Zq: torch.Tensor, logP: torch.Tensor, psi: torch.Tensor) -> torch.Tensor:
    """c_{l|n} = P(l|n) e^{z_{ψ(n),l}} / Σ_l' P(l'|n) e^{z_{ψ(n),l'}} (Eqn. 5), 0 off supp(n)."""
    return torch.softmax(Zq[:, psi] + logP, dim=-1)


def entropy(p: torch.Tensor) -> torch.Tensor:
    """−Σ p ln p in nats over the last axis (0 ln 0 = 0).  ``xlogy`` never takes ln 0, which is
    ~40× slower than a finite log on this CPU, and c_n is 0 on most tokens (those off supp(n))."""
    return -torch.special.xlogy(p, p).sum(-1)


def entropy_distinct(c: torch.Tensor, distinct: torch.Tensor) -> torch.Tensor:
    """H_n of c_n restricted to G_DT(n) and renormalised (science §3, Fig. 6), nats."""
    q = c * distinct
    q = q / q.sum(-1, keepdim=True).clamp_min(torch.finfo(c.dtype).tiny)
    return entropy(q)


def common_mass(c: torch.Tensor, common: torch.Tensor) -> torch.Tensor:
    """Σ_{l ∈ G_CT} c_{l|n}."""
    return (c * common).sum(-1)


def masked_share(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Fraction of the masked entries where ``values`` is True (NaN when the mask is empty)."""
    n = mask.sum(-1).to(torch.float64)
    return ((values & mask).sum(-1) / n).to(torch.float64)


def relative_gain(ctilde_l: torch.Tensor, ctilde_lp: torch.Tensor) -> torch.Tensor:
    """r_{l/l'|n} = c̃_l²/c̃_l'² − 1 (Theorem 3)."""
    return (ctilde_l / ctilde_lp) ** 2 - 1


def common_drop(dz: torch.Tensor, common: torch.Tensor) -> torch.Tensor:
    """−Δz_c: the drop of the common tokens' logits, z_{ψ(n),c}(0) − z_{ψ(n),c}(t), mean over the
    common tokens of class n (NaN for a class without one).  dz: (R, K, M), common: (K, M) bool."""
    n = common.sum(-1).to(dz.dtype)
    return -(dz * common).sum(-1) / n
