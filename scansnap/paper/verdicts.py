"""Verdicts on the paper's claims (science §5–§7), one small pure function per claim.

Each function takes plain numpy data and returns a frozen :class:`Verdict`, the one verdict type
of the project (the Lab's badges, ``reproduce`` and the reports all show it): the statistic, its
value, the threshold and a status, ``pass``, ``fail`` or ``n/a``.  ``n/a`` says why the claim
cannot be judged (``reason``; ``conditions`` lists a theorem's failed conditions), so a claim
that does not apply is never shown as a failure.  A non-finite statistic of an applicable claim
fails.  Nothing here trains or plots.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Status = Literal["pass", "fail", "n/a"]
WORDS = {"pass": "PASS", "fail": "FAIL", "n/a": "N/A"}
_OPS: dict[str, Callable[[float, float], bool]] = {
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
}


@dataclass(frozen=True)
class Verdict:
    """One judged claim.  ``item`` is where it was judged (a reproduce item, or ``run`` for one run
    of the Lab), ``id`` names the claim across places (e.g. ``thm2b``), ``label`` is its badge text."""

    item: str
    claim: str
    statistic: str
    value: float
    threshold: str
    status: Status
    detail: str = ""
    reason: str = ""
    conditions: tuple[str, ...] = ()
    id: str = ""
    label: str = ""

    @property
    def passed(self) -> bool:
        return self.status == "pass"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: a non-finite value becomes None; ``passed`` is kept for older readers."""
        d = asdict(self)
        d["value"] = self.value if math.isfinite(self.value) else None
        d["conditions"] = list(self.conditions)
        d["passed"] = self.passed
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        """The inverse of :meth:`to_dict` (a None value is NaN again; ``passed`` is dropped)."""
        v = {f.name: d[f.name] for f in fields(cls) if f.name in d}
        v["value"] = math.nan if v.get("value") is None else float(v["value"])
        v["conditions"] = tuple(v.get("conditions", ()))
        return cls(**v)

    def named(self, id: str, label: str = "", claim: str | None = None) -> Verdict:
        """The same verdict under a claim id (and badge label, claim text)."""
        return replace(self, id=id, label=label or self.label, claim=self.claim if claim is None else claim)


@dataclass(frozen=True)
class Tally:
    """How many verdicts passed, failed and could not be judged (n/a): every summary counts the three
    apart, so that a claim that does not apply is never read as a pass."""

    passed: int
    failed: int
    na: int

    @classmethod
    def of(cls, statuses: Iterable[str]) -> Tally:
        got = list(statuses)
        return cls(got.count("pass"), got.count("fail"), got.count("n/a"))

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.na

    @property
    def sentence(self) -> str:
        """ "32 pass · 7 n/a · 0 fail"."""
        return f"{self.passed} pass · {self.na} n/a · {self.failed} fail"


def tally(verdicts: Iterable[Verdict]) -> Tally:
    return Tally.of(v.status for v in verdicts)


def judge(item: str, claim: str, statistic: str, value: float, op: str, bound: float, detail: str = "") -> Verdict:
    """``value op bound`` (op in <, <=, >, >=); NaN/Inf fails."""
    v = float(value)
    passed = math.isfinite(v) and _OPS[op](v, bound)
    return Verdict(item, claim, statistic, v, f"{op} {bound:g}", "pass" if passed else "fail", detail)


def not_applicable(
    item: str, claim: str, statistic: str, threshold: str, reason: str, conditions: Sequence[str] = ()
) -> Verdict:
    """A claim that cannot be judged here, and why (no value is shown)."""
    return Verdict(item, claim, statistic, math.nan, threshold, "n/a", reason=reason, conditions=tuple(conditions))


def status_of(passed: bool) -> Status:
    return "pass" if passed else "fail"


def _arr(x: ArrayLike) -> NDArray[np.float64]:
    return np.asarray(x, dtype=np.float64)


def fmt_values(values: ArrayLike) -> str:
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
        f"drops per class/run: {fmt_values(drop)}; initial {fmt_values(s[0])}",
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
    return judge(
        item, claim, statistic, float(diff.min()), ">", margin, f"high {fmt_values(high)}; low {fmt_values(low)}"
    )


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
    return Verdict(item, claim, statistic, gap, "> 0", status_of(gap > 0), f"fast {f:g}, slow {s:g}")


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


# ----------------------------------------------------------------- theory curves (Fig. 9, §6.8, §6.10)
def same_across(item: str, claim: str, statistic: str, values: ArrayLike, rtol: float = 1e-9) -> Verdict:
    """Relative spread (max − min)/|mean| ≤ rtol (e.g. B_n(t_0) across η_Z at fixed ν)."""
    v = _arr(values)
    spread = float((v.max() - v.min()) / max(abs(v.mean()), 1e-300))
    return judge(item, claim, f"relative spread of {statistic}", spread, "<=", rtol, f"values {fmt_values(v)}")


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
        status_of(passed),
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
        f"x {fmt_values(_arr(x)[order])}; y {fmt_values(_arr(y)[order])}",
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
        "Thm 3: r(l/l′|n)(t) = r(l/l′|n)(0)·χ_l(t) in the T→∞ mean field",
        "max over t, n of |r/(r(0)·exp(2Δz)) − 1|",
        err,
        f"< {tol:g} (with Δz_l0 ≥ {min_dz:g})",
        status_of(passed),
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
        "Thm 3 bracket: f_nl₀(0)²·B̂_n ≤ Δz_ml₀(t) ≤ B̂_n at every t",
        "max relative violation of the bracket",
        worst,
        "<=",
        tol,
        f"final B̂ {fmt_values(hi_a[-1])}",
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
        f"per run: {fmt_values(share)} (pure O(ln t) growth over "
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


def verdict_text(v: Verdict) -> str:
    """A run's verdict in one line, the same under the Lab's badge and in ``python -m scansnap run``'s
    summary: statistic = value (threshold) and what was measured beside it (the detail, e.g. the
    measured snap), or why it is n/a (its reason: for a claim outside its theorem, the failed
    conditions, with the measured number in the detail)."""
    beside = f" · {v.detail}" if v.detail and v.detail not in v.reason else ""
    if v.status == "n/a":
        return f"{WORDS['n/a']}: {v.reason}{beside}"  # (within: the measured number is in the detail)
    return f"{WORDS[v.status]}: {v.statistic} = {v.value:.3g} ({v.threshold}){beside}"
