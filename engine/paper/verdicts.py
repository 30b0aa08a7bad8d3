"""Pass/fail verdicts for the paper's claims (science §5–§7), one small pure function per claim.

Each function takes plain numpy data and returns a frozen :class:`Verdict` that names the
statistic, its value, the threshold and whether it passed.  Nothing here trains or plots:
``engine.paper.items`` produces the data, these functions judge it.  A non-finite statistic
always fails.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Verdict:
    item: str
    claim: str
    statistic: str
    value: float
    threshold: str
    passed: bool
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a non-finite value becomes None."""
        d = asdict(self)
        d["value"] = self.value if math.isfinite(self.value) else None
        return d


def judge(item: str, claim: str, statistic: str, value: float, op: str, bound: float, detail: str = "") -> Verdict:
    """``value op bound`` (op in <, <=, >, >=); NaN/Inf fails."""
    v = float(value)
    passed = math.isfinite(v) and _OPS[op](v, bound)
    return Verdict(item, claim, statistic, v, f"{op} {bound:g}", bool(passed), detail)


def _arr(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


def _fmt(values: ArrayLike) -> str:
    return ", ".join(f"{v:.4g}" for v in np.ravel(_arr(values)))


# ----------------------------------------------------------------- attention maps (Figs. 4, 5)
def share_falls(item: str, claim: str, share: ArrayLike, min_drop: float = 0.05) -> Verdict:
    """Common-token share Σ_{l∈G_CT} c_{l|n}: the drop share(0) − share(final) ≥ min_drop for
    every trailing column (class n, run).  share: (steps, ...) with steps in time order."""
    s = _arr(share)
    drop = (s[0] - s[-1]).ravel()
    return judge(
        item,
        claim,
        "min over n of [common share(0) − common share(final)]",
        float(drop.min()),
        ">=",
        min_drop,
        f"drops per class/run: {_fmt(drop)}; initial {_fmt(s[0])}",
    )


def argmax_is_top_prob(item: str, c: ArrayLike, P: ArrayLike, distinct: ArrayLike) -> Verdict:
    """Theorem 3 frequency bias: argmax_{l∈G_DT(n)} c_{l|n} = argmax_{l∈G_DT(n)} P(l|n) for every
    class.  c: (..., K, M), P and distinct: (K, M)."""
    d = np.asarray(distinct, dtype=bool)
    c_arr, P_arr = _arr(c), _arr(P)
    got = np.argmax(np.where(d, c_arr, -np.inf), axis=-1)
    want = np.argmax(np.where(d, P_arr, -np.inf), axis=-1)
    hit = np.broadcast_to(got == want, got.shape)
    return judge(
        item,
        "the distinct-token argmax of c_n is the largest-P(l|n) token of each class",
        "fraction of (run, class) whose distinct argmax of c_n is argmax P",
        float(hit.mean()),
        ">=",
        1.0,
        f"argmax c: {got.tolist()}; argmax P: {want.tolist()}",
    )


def higher(item: str, claim: str, statistic: str, high: ArrayLike, low: ArrayLike, margin: float = 0.0) -> Verdict:
    """min(high − low) > margin, elementwise over paired entries (e.g. classes n)."""
    diff = _arr(high) - _arr(low)
    return judge(item, claim, statistic, float(diff.min()), ">", margin, f"high {_fmt(high)}; low {_fmt(low)}")


def converges_faster(
    item: str, steps: ArrayLike, loss_fast: ArrayLike, loss_slow: ArrayLike, level: float = 0.01
) -> Verdict:
    """First step with loss < level: step(slow) − step(fast) > 0.  A run that never gets there
    counts as ∞: the fast run must get there; if only it does, the claim holds (gap = ∞)."""
    st = _arr(steps)

    def first(loss: ArrayLike) -> float:
        below = np.nonzero(_arr(loss) < level)[0]
        return float(st[below[0]]) if below.size else math.inf

    f, s = first(loss_fast), first(loss_slow)
    gap = s - f if math.isfinite(f) else -math.inf
    claim = "the loss converges in fewer steps with η_Y = 10 (science §6.7)"
    statistic = f"first step with loss < {level:g}: slow − fast"
    return Verdict(item, claim, statistic, gap, "> 0", bool(gap > 0), f"fast {f:g}, slow {s:g}")


def top_sets_differ(item: str, c_distinct: ArrayLike, labels: Sequence[str], k: int = 3) -> Verdict:
    """Fig. 5: the top-k distinct tokens of c_n differ between learning rates.  c_distinct:
    (L, D) c_n over the distinct tokens of one class for L learning rates; statistic = the number
    of different top-k sets (≥ 2: not every rate selects the same subset)."""
    c_arr = _arr(c_distinct)
    sets = [tuple(sorted(np.argsort(-row, kind="stable")[:k].tolist())) for row in c_arr]
    shown = "; ".join(f"{lab}: {list(s)}" for lab, s in zip(labels, sets, strict=True))
    return judge(
        item,
        "the selected subset of distinct tokens depends on the learning rate",
        f"number of different top-{k} sets of c_n (distinct tokens) across η",
        float(len(set(sets))),
        ">=",
        2.0,
        f"top-{k} (index within the distinct block): {shown}",
    )


def argmax_not_always_top(item: str, c_distinct: ArrayLike, P_distinct: ArrayLike, labels: Sequence[str]) -> Verdict:
    """Fig. 5, "not necessarily the highest-P token": for at least one learning rate the distinct
    argmax of c_n is not the largest-P(l|n) token.  c_distinct: (L, D); P_distinct: (D,)."""
    got = np.argmax(_arr(c_distinct), axis=-1)
    top = int(np.argmax(_arr(P_distinct)))
    shown = "; ".join(f"{lab}: {int(g)}" for lab, g in zip(labels, got, strict=True))
    return judge(
        item,
        "Adam's winner is not always the largest-P distinct token",
        "number of η whose distinct argmax of c_n is not argmax P",
        float((got != top).sum()),
        ">=",
        1.0,
        f"argmax (index within the distinct block): {shown}; argmax P = {top}",
    )


# ----------------------------------------------------------------- Fig. 6 patterns
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
        f"signed H(2) − H(1) per K: {_fmt(diff.min(axis=1))} (min over η_Z); allowance {allowance:g}·SE",
    )


# ----------------------------------------------------------------- theory curves (Fig. 9, §6.8, §6.10)
def same_across(item: str, claim: str, statistic: str, values: ArrayLike, rtol: float = 1e-9) -> Verdict:
    """Relative spread (max − min)/|mean| ≤ rtol (e.g. B_n(t_0) across η_Z at fixed ν)."""
    v = _arr(values)
    spread = float((v.max() - v.min()) / max(abs(v.mean()), 1e-300))
    return judge(item, claim, f"relative spread of {statistic}", spread, "<=", rtol, f"values {_fmt(v)}")


def close_to(item: str, claim: str, statistic: str, value: float, target: float, tol: float) -> Verdict:
    """|value − target| ≤ tol; the verdict's value is the measured statistic itself."""
    v = float(value)
    passed = math.isfinite(v) and abs(v - target) <= tol
    return Verdict(
        item,
        claim,
        statistic,
        v,
        f"within {tol:g} of {target:g}",
        bool(passed),
        f"|{v:.4g} − {target:g}| = {abs(v - target):.3g}",
    )


def increasing(item: str, claim: str, statistic: str, x: ArrayLike, y: ArrayLike) -> Verdict:
    """y strictly increases with x: min Δy over x-sorted neighbours > 0."""
    order = np.argsort(_arr(x))
    dy = np.diff(_arr(y)[order])
    return judge(
        item,
        claim,
        f"min step of {statistic}",
        float(dy.min()),
        ">",
        0.0,
        f"x {_fmt(_arr(x)[order])}; y {_fmt(_arr(y)[order])}",
    )


# ----------------------------------------------------------------- Theorems 2–3 (§6.1, §6.3, §6.4)
def max_common_dz(dz: ArrayLike, common: ArrayLike) -> float:
    """max over common tokens of Δz_{ψ(n),l} (NaN when there is none).  dz, common: (K, M)."""
    d = _arr(dz)[np.asarray(common, dtype=bool)]
    return float(d.max()) if d.size else math.nan


def min_distinct_dz_above_median(dz: ArrayLike, P: ArrayLike, distinct: ArrayLike) -> float:
    """min Δz over the distinct tokens whose P(l|n) is above their class median (science §6.1's
    finite-T form of Thm 2a: the lowest-P ones may end near 0 under sampling noise)."""
    dz_arr, P_arr, d = _arr(dz), _arr(P), np.asarray(distinct, dtype=bool)
    picked = [dz_arr[n][d[n] & (P_arr[n] > np.median(P_arr[n][d[n]]))] for n in range(len(P_arr)) if d[n].any()]
    vals = np.concatenate(picked) if picked else np.zeros(0)
    return float(vals.min()) if vals.size else math.nan


def common_logits_fall(item: str, dz: ArrayLike, common: ArrayLike) -> Verdict:
    """Theorem 2(b) / Corollary 2: Δz_{ψ(n),l} < 0 for every common token.  dz, common: (K, M)."""
    d = _arr(dz)[np.asarray(common, dtype=bool)]
    return judge(
        item,
        "Thm 2: every common token's logit falls (Δz_{ψ(n),l} < 0)",
        "max over common tokens of Δz",
        max_common_dz(dz, common),
        "<",
        0.0,
        f"mean {d.mean():.4g}",
    )


def distinct_logits_rise(item: str, dz: ArrayLike, P: ArrayLike, distinct: ArrayLike) -> Verdict:
    """Theorem 2(a), finite-T form (science §6.1): Δz > 0 for every distinct token whose P(l|n)
    is above its class median."""
    dz_arr, d = _arr(dz), np.asarray(distinct, dtype=bool)
    sums = [float(dz_arr[n][d[n]].sum()) for n in range(len(dz_arr))]
    return judge(
        item,
        "Thm 2: distinct tokens' logits rise (Δz > 0 above the median P)",
        "min Δz over distinct tokens with P above the class median",
        min_distinct_dz_above_median(dz, P, distinct),
        ">",
        0.0,
        f"Σ_DT Δz per class: {_fmt(sums)}",
    )


def ordered_by_probability(item: str, z: ArrayLike, P: ArrayLike, distinct: ArrayLike, min_rho: float = 0.9) -> Verdict:
    """Theorem 3 frequency bias (science §6.2): Spearman ρ(z_{ψ(n),l}, P(l|n)) over G_DT(n) > min_rho
    for every class.  z: (K, M) rows z_{ψ(n)}, P and distinct: (K, M)."""
    from scipy.stats import spearmanr

    z_a, P_a, d = _arr(z), _arr(P), np.asarray(distinct, dtype=bool)
    rho = [float(spearmanr(z_a[n][d[n]], P_a[n][d[n]]).statistic) for n in range(len(P_a))]
    return judge(
        item,
        "Thm 3: final distinct-token logits are ordered by P(l|n)",
        "min over n of Spearman ρ(z_{ψ(n),l}, P(l|n)) over distinct l",
        float(np.min(rho)),
        ">",
        min_rho,
        f"ρ per class: {_fmt(rho)}",
    )


def frozen_after(item: str, claim: str, steps: ArrayLike, H: ArrayLike, from_step: int, frac: float = 0.1) -> Verdict:
    """§6.5 the snap within a short run: the range of H over steps ≥ from_step is < frac of the
    total drop H(0) − H(end).  H: (steps,) in time order."""
    st, h = _arr(steps), _arr(H)
    late = h[st >= from_step]
    drop = h[0] - h[-1]
    ratio = float((late.max() - late.min()) / drop) if drop > 0 else math.inf
    return judge(
        item,
        claim,
        f"range of H over steps ≥ {from_step} / (H(0) − H(end))",
        ratio,
        "<",
        frac,
        f"H(0) {h[0]:.4f}, H(end) {h[-1]:.4f}, late range {late.max() - late.min():.4g}",
    )


def relative_gain_identity(
    item: str, r: ArrayLike, r_pred: ArrayLike, dz0: ArrayLike, tol: float = 1e-3, min_dz: float = 0.5
) -> Verdict:
    """Theorem 3: r_{l0/l1|n}(t) = r(0)·e^{2Δz_{l0}}; max |r/r_pred − 1| < tol, and the identity
    must be exercised (min final Δz_{l0} ≥ min_dz), else the verdict fails."""
    err = float(np.max(np.abs(_arr(r) / _arr(r_pred) - 1)))
    exercised = float(np.min(_arr(dz0)))
    passed = err < tol and exercised >= min_dz
    return Verdict(
        item,
        "Thm 3: r_{l/l'|n}(t) = r_{l/l'|n}(0)·χ_l(t) in the T→∞ mean field",
        "max over t, n of |r/(r(0)e^{2Δz}) − 1|",
        err,
        f"< {tol:g} (with Δz_l0 ≥ {min_dz:g})",
        bool(passed),
        f"final min Δz_l0 = {exercised:.3g}",
    )


def bracket_holds(item: str, lo: ArrayLike, dz: ArrayLike, hi: ArrayLike, tol: float) -> Verdict:
    """Theorem 3 bracket f_{nl0}²(0)·B̂_n ≤ Δz_{ml0} ≤ B̂_n; statistic = largest violation relative
    to max(1, B̂) over all snapshots and classes (≤ 0 when it holds exactly)."""
    lo_a, dz_a, hi_a = _arr(lo), _arr(dz), _arr(hi)
    scale = np.maximum(1.0, np.abs(hi_a))
    worst = float(np.max(np.maximum(lo_a - dz_a, dz_a - hi_a) / scale))
    return judge(
        item,
        "Thm 3 bracket: f_{nl0}(0)²·B̂_n ≤ Δz_{ml0}(t) ≤ B̂_n at every t",
        "max relative violation of the bracket",
        worst,
        "<=",
        tol,
        f"final B̂ {_fmt(hi_a[-1])}",
    )


# ----------------------------------------------------------------- snap and JoMA (§6.9, §7)
def _at(steps: NDArray, H: NDArray, t: float) -> NDArray:
    """H at step t, linear in ln(1 + step) between snapshots.  H: (steps, runs)."""
    x = np.log1p(steps)
    return np.array([np.interp(np.log1p(t), x, H[:, j]) for j in range(H.shape[1])])


def last_decade_share(steps: ArrayLike, values: ArrayLike) -> NDArray[np.float64]:
    """|v(t_end) − v(t_end/10)| / |v(t_end) − v(0)| per run: the share of the whole change that
    happens in the last decade of steps.  values: (steps,) or (steps, runs), in time order.

    Thm 4: while B_n = O(ln t) (scanning) every decade adds the same amount, so over d decades the
    last one carries ≈ 1/d of the change (25% over 10⁰–10⁴); once B_n = O(ln ln t) (snapping) it
    carries little.  A run that never changed gives inf (it cannot show a snap)."""
    st, v = _arr(steps), _arr(values)
    v = v[:, None] if v.ndim == 1 else v
    end = float(st[-1])
    last = np.abs(_at(st, v, end) - _at(st, v, end / 10))
    total = np.abs(v[-1] - v[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(total > 0, last / np.where(total > 0, total, 1.0), np.inf)


def snap_ratio(
    item: str, claim: str, steps: ArrayLike, values: ArrayLike, what: str = "H", tol: float = 0.1
) -> Verdict:
    """§6.9 the snap: the last decade of steps carries < tol of the total change of ``what``
    (entropy_distinct or B̂_n), for every run; see :func:`last_decade_share`."""
    share = last_decade_share(steps, values)
    end = float(_arr(steps)[-1])
    return judge(
        item,
        claim,
        f"max over runs of |Δ{what} over steps {end / 10:g}–{end:g}| / |Δ{what} over 0–{end:g}|",
        float(share.max()),
        "<",
        tol,
        f"per run: {_fmt(share)} (pure O(ln t) growth over "
        f"{np.log10(max(end, 10)):.0f} decades would give {1 / np.log10(max(end, 10)):.2f})",
    )


def entropy_drops(item: str, claim: str, H: ArrayLike, min_drop: float = 0.1) -> Verdict:
    """H(0) − min_t H(t) ≥ min_drop (nats)."""
    h = _arr(H)
    return judge(
        item,
        claim,
        "H(0) − min H (nats)",
        float(h[0] - h.min()),
        ">=",
        min_drop,
        f"H(0) {h[0]:.4f}, min {h.min():.4f} at index {int(h.argmin())}",
    )


def entropy_rebounds(item: str, claim: str, H: ArrayLike, min_rebound: float = 0.1) -> Verdict:
    """H(end) − min_t H(t) ≥ min_rebound (nats): the entropy bounces back after its minimum."""
    h = _arr(H)
    return judge(
        item,
        claim,
        "H(end) − min H (nats)",
        float(h[-1] - h.min()),
        ">=",
        min_rebound,
        f"min {h.min():.4f} at index {int(h.argmin())}, end {h[-1]:.4f}",
    )


def entropy_never_rises(item: str, claim: str, H: ArrayLike, tol: float = 1e-6) -> Verdict:
    """max_t [H(t) − min_{s≤t} H(s)] ≤ tol: no rebound at any time."""
    h = _arr(H)
    rise = float(np.max(h - np.minimum.accumulate(h)))
    return judge(
        item,
        claim,
        "largest rise above the running minimum (nats)",
        rise,
        "<=",
        tol,
        f"H(0) {h[0]:.4f}, end {h[-1]:.4f}",
    )
