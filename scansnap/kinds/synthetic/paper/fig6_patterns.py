"""The three patterns of Fig. 6 (science §5): the distinct-token entropy against η_Z and η_Y/η_Z,
judged on (panel, η_Z, ratio) grids of means and SEMs, with an optional noise allowance in SEs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scansnap.paper.verdicts import Verdict, fmt_values, judge


def _arr(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


def _violations(diff: NDArray, se: NDArray, allowance: float) -> NDArray[np.bool_]:
    """A difference expected > 0 violates when diff ≤ −allowance·se (allowance 0: diff ≤ 0)."""
    return diff <= -allowance * se


def _cell_se(a: NDArray, b: NDArray) -> NDArray:
    return np.sqrt(a**2 + b**2)


def fig6_eta_z_order(item: str, mean: ArrayLike, sem: ArrayLike, allowance: float = 0.0) -> Verdict:
    """Pattern (i): at every K and ratio, H falls as η_Z rises.  mean, sem: (K-panels, η_Z, ratio)
    with η_Z ascending.  Counts adjacent η_Z pairs with H(η_Z') ≥ H(η_Z) − allowance·SE."""
    m, s = _arr(mean), _arr(sem)
    diff = m[:, :-1, :] - m[:, 1:, :]
    bad = _violations(diff, _cell_se(s[:, :-1, :], s[:, 1:, :]), allowance)
    return judge(
        item,
        "(i) entropy decreases monotonically as η_Z rises, at every ratio and K",
        f"adjacent η_Z pairs out of order (of {bad.size})",
        float(bad.sum()),
        "<=",
        0.0,
        f"noise allowance {allowance:g}·SE of the difference; strict reversals {(diff <= 0).sum()}",
    )


def fig6_ratio_rises(item: str, mean: ArrayLike, sem: ArrayLike, lo: int, hi: int, allowance: float = 0.0) -> Verdict:
    """Pattern (ii): H(ratio = 10) > H(ratio = 2) for every K and η_Z.  lo/hi index the ratio axis."""
    m, s = _arr(mean), _arr(sem)
    diff = m[..., hi] - m[..., lo]
    bad = _violations(diff, _cell_se(s[..., hi], s[..., lo]), allowance)
    return judge(
        item,
        "(ii) from ratio 2 to 10 the entropy increases, for every K and η_Z",
        f"(K, η_Z) cells with H(10) ≤ H(2) (of {bad.size})",
        float(bad.sum()),
        "<=",
        0.0,
        f"min H(10) − H(2) = {diff.min():.4f}; noise allowance {allowance:g}·SE",
    )


def fig6_threshold(item: str, mean: ArrayLike, sem: ArrayLike, K: Sequence[int], allowance: float = 0.0) -> Verdict:
    """Pattern (iii): ratio 1 → 2 lowers H for K ≥ 6 and raises it for K = 2 (ratio axis 0, 1)."""
    m, s = _arr(mean), _arr(sem)
    sign = np.where(np.asarray(K) >= 6, -1.0, 1.0)[:, None]
    diff = sign * (m[..., 1] - m[..., 0])  # expected > 0 after the sign flip
    bad = _violations(diff, _cell_se(s[..., 1], s[..., 0]), allowance)
    return judge(
        item,
        "(iii) ratio 1→2 decreases the entropy for K ≥ 6 and increases it for K = 2",
        f"(K, η_Z) cells against the expected sign (of {bad.size})",
        float(bad.sum()),
        "<=",
        0.0,
        f"signed H(2) − H(1) per K: {fmt_values(diff.min(axis=1))} (min over η_Z); allowance {allowance:g}·SE",
    )
