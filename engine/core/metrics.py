"""Attention statistics (science §3).  One vocabulary from engine to chart legend:
``c``, ``z``, ``loss``, ``accuracy``, ``entropy_distinct``, ``entropy_all``, ``common_mass``,
``B_hat``, ``dz_dominant``, ``bracket_lo``, ``rel_gain``, ``rel_gain_pred``,
``share_distinct_up``, ``share_common_down``.

Shapes: c and masks are (R, K, M); per-class metrics are (R, K).
"""

from __future__ import annotations

import torch

# Names of the per-class (R, K) metrics and of the per-replica (R,) metrics.
PER_CLASS = (
    "entropy_distinct",
    "entropy_all",
    "common_mass",
    "B_hat",
    "dz_dominant",
    "bracket_lo",
    "rel_gain",
    "rel_gain_pred",
    "share_distinct_up",
    "share_common_down",
)
PER_REPLICA = ("loss", "accuracy", "train_loss")


def attention_c(Zq: torch.Tensor, logP: torch.Tensor, psi: torch.Tensor) -> torch.Tensor:
    """c_{l|n} = P(l|n) e^{z_{ψ(n),l}} / Σ_l' P(l'|n) e^{z_{ψ(n),l'}} (Eqn. 5), 0 off supp(n)."""
    return torch.softmax(Zq[:, psi] + logP, dim=-1)


def entropy(p: torch.Tensor) -> torch.Tensor:
    """−Σ p ln p in nats over the last axis (0 ln 0 = 0)."""
    return -torch.where(p > 0, p * torch.log(p), torch.zeros_like(p)).sum(-1)


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


def per_class_gather(t: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """t[r, n, idx[n]] for t (R, K, M) and idx (K,) → (R, K)."""
    return torch.gather(t, 2, idx.view(1, -1, 1).expand(t.shape[0], -1, 1)).squeeze(-1)
