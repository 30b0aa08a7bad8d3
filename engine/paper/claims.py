"""The claims of Theorems 2–4 judged on one replica of one run: the Lab's badges, the per-run
report and ``reproduce`` call these same functions, so they agree on the same run.

A run is seen through :class:`Observed` (stored steps, the query rows of Z at those steps, the
entropy series and the statics), built from the run store (:mod:`engine.paper.history`) or from a
trainer's snapshots (:mod:`engine.paper.items.common`).  Each claim returns a
:class:`~engine.paper.verdicts.Verdict` with its id and badge label; a claim that cannot be
judged yet (too few steps, nothing to order) is ``n/a`` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from scipy.stats import spearmanr

from engine.core.data import KIND_COMMON, KIND_DISTINCT
from engine.paper import verdicts as vd
from engine.paper.verdicts import Verdict

SIGN_STEP = 10  # Thm 2 is judged on Δz over the first 10 steps (science §6.1); Y(0) = 0 makes step 1's ΔZ vanish
MIN_RHO = 0.9  # Thm 3: Spearman ρ(Δz, P) over each class's distinct tokens (science §6.2)
SNAP_FRACTION = 0.05  # Thm 4: after the snap, each doubling of t moves the entropy by < 5 % of its total change
MIN_ENTROPY_CHANGE = 1e-3  # nats: a run whose entropy moved less shows no snap to measure
ITEM = "run"


@dataclass(frozen=True)
class Observed:
    """One replica of a run: ``steps`` (S,) stored steps in time order; ``z`` (S, Q, M_ctx) the query
    rows of Z (None for runs that keep only the top-k tokens); ``entropy`` (S,) entropy_distinct,
    mean over classes; ``P`` (K, M_ctx); ``token_kind`` (K, M_ctx); ``rows`` (K,) row of z that
    holds ψ(n); ``shares`` the last stored share_common_down / share_distinct_up (top-k fallback)."""

    steps: np.ndarray
    z: np.ndarray | None
    entropy: np.ndarray
    P: np.ndarray
    token_kind: np.ndarray
    rows: np.ndarray
    shares: dict[str, float]


def dz_at(obs: Observed, step: int) -> np.ndarray | None:
    """(K, M_ctx) Δz_{ψ(n),l} = z(t) − z(0) at the first stored step t ≥ ``step`` (the last one if the
    run is shorter); None without per-token history or before step 1."""
    if obs.z is None or len(obs.steps) < 2:
        return None
    i = int(np.searchsorted(obs.steps, step))
    i = min(i, len(obs.steps) - 1)
    return obs.z[i][obs.rows] - obs.z[0][obs.rows]


def _sign_step(obs: Observed) -> int:
    return int(obs.steps[min(int(np.searchsorted(obs.steps, SIGN_STEP)), len(obs.steps) - 1)])


def thm2b_common_fall(obs: Observed) -> Verdict:
    """Theorem 2(b) / Corollary 2: every common token's logit falls, max_{l∈CT} Δz < 0."""
    common = obs.token_kind == KIND_COMMON
    claim, stat = "Thm 2b: every common token's logit falls (Δz < 0)", "max over common tokens of Δz"
    dz = dz_at(obs, SIGN_STEP)
    if not common.any():
        return _na(claim, stat, "< 0", "this run has no common token", "thm2b")
    if dz is None:
        return _top_k_share(obs, "share_common_down", claim, 1.0, "thm2b")
    v = vd.judge(ITEM, claim, stat, vd.max_common_dz(dz, common), "<", 0.0, f"Δz over steps 0–{_sign_step(obs)}")
    return v.named("thm2b", "Thm 2b · common tokens suppressed")


def thm2a_distinct_rise(obs: Observed) -> Verdict:
    """Theorem 2(a), finite-T form (science §6.1): Δz > 0 for every distinct token above its class's
    median P(l|n) (the lowest-P ones may end near 0 under sampling noise)."""
    distinct = obs.token_kind == KIND_DISTINCT
    claim, stat = "Thm 2a: distinct tokens' logits rise", "min Δz over distinct tokens above the median P"
    dz = dz_at(obs, SIGN_STEP)
    if dz is None:
        return _top_k_share(obs, "share_distinct_up", claim, 0.5, "thm2a")
    value = vd.min_distinct_dz_above_median(dz, obs.P, distinct)
    if not math.isfinite(value):
        return _na(claim, stat, "> 0", "no distinct token lies above its class median P(l|n)", "thm2a")
    v = vd.judge(ITEM, claim, stat, value, ">", 0.0, f"Δz over steps 0–{_sign_step(obs)}")
    return v.named("thm2a", "Thm 2a · distinct tokens growing")


def thm3_ordered(obs: Observed) -> Verdict:
    """Theorem 3 frequency bias (science §6.2): min over classes of Spearman ρ(Δz_{ψ(n),l}, P(l|n))
    over the distinct tokens l of n, at the last stored step, > 0.9."""
    claim = "Thm 3: distinct tokens grow in the order of P(l|n)"
    stat = "min over n of Spearman ρ(Δz, P) on distinct tokens"
    dz = dz_at(obs, int(obs.steps[-1])) if len(obs.steps) else None
    if dz is None:
        return _na(claim, stat, f"> {MIN_RHO:g}", "needs the per-token history of at least one step", "thm3")
    distinct = obs.token_kind == KIND_DISTINCT
    rhos = [_spearman(dz[n][distinct[n]], obs.P[n][distinct[n]]) for n in range(len(obs.P))]
    rhos = [r for r in rhos if math.isfinite(r)]
    if not rhos:
        why = "no class has ≥ 3 distinct tokens with different P(l|n): there is no order to follow"
        return _na(claim, stat, f"> {MIN_RHO:g}", why, "thm3")
    v = vd.judge(ITEM, claim, stat, min(rhos), ">", MIN_RHO, "ρ per class: " + ", ".join(f"{r:.2f}" for r in rhos))
    return v.named("thm3", "Thm 3 · growth ordered by P(l|n)")


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(spearmanr(x, y).statistic)


def snap_step(steps: np.ndarray, values: np.ndarray, fraction: float = SNAP_FRACTION) -> int | None:
    """The measured snap: the first stored step t ≥ 1 from which every doubling [t', 2t'] (t' ≥ t,
    2t' ≤ the last step) changes ``values`` by less than ``fraction`` of its total change
    |v(end) − v(0)|; None when no such step exists.  Values between stored steps are linear in
    ln(1 + step).  Pure O(ln t) growth over d doublings moves 1/d of the total per doubling, so a
    run of fewer than 1/fraction doublings is never called snapped while it is still scanning."""
    st, v = np.asarray(steps, dtype=np.float64), np.asarray(values, dtype=np.float64)
    total = abs(v[-1] - v[0])
    grid = st[(st >= 1) & (2 * st <= st[-1])]
    if total == 0 or grid.size == 0:
        return None
    x = np.log1p(st)
    per_doubling = np.abs(np.interp(np.log1p(2 * grid), x, v) - np.interp(np.log1p(grid), x, v))
    ok = per_doubling < fraction * total
    if not ok[-1]:
        return None
    first_bad = np.flatnonzero(~ok)
    start = first_bad[-1] + 1 if first_bad.size else 0
    return int(grid[start])


def thm4_snap(obs: Observed) -> Verdict:
    """Theorem 4, measured: the attention freezes (snaps).  The statistic is the step of the snap
    measured on entropy_distinct (:func:`snap_step`); it passes when a snap was measured, i.e. it
    lies in the first half of the run."""
    claim = "Thm 4: the attention snaps (entropy frozen after a step)"
    stat = f"first step after which each doubling of t moves H by < {SNAP_FRACTION:.0%} of its change"
    threshold = "≤ last step / 2"
    if len(obs.steps) < 3 or obs.steps[-1] < 4:
        return _na(claim, stat, threshold, "needs at least 4 steps", "thm4")
    change = abs(float(obs.entropy[-1] - obs.entropy[0]))
    if not math.isfinite(change) or change < MIN_ENTROPY_CHANGE:
        why = f"the entropy moved by {change:.2g} nats only (< {MIN_ENTROPY_CHANGE:g}): no snap to measure on it"
        return _na(claim, stat, threshold, why, "thm4")
    snapped = snap_step(obs.steps, obs.entropy)
    end = int(obs.steps[-1])
    value = math.inf if snapped is None else float(snapped)
    detail = f"H {obs.entropy[0]:.3f} → {obs.entropy[-1]:.3f} nats over {end} steps" + (
        "" if snapped is not None else "; still changing by ≥ 5 % per doubling"
    )
    v = vd.judge(ITEM, claim, stat, value, "<=", end / 2, detail)
    return v.named("thm4", "Thm 4 · snap detected")


def run_claims(obs: Observed, item: str = ITEM) -> list[Verdict]:
    """The four claims the Lab shows for one replica of a run, in badge order (``item``: where they
    are judged, e.g. a reproduce item's name)."""
    found = [thm2b_common_fall(obs), thm2a_distinct_rise(obs), thm3_ordered(obs), thm4_snap(obs)]
    return [replace(v, item=item) for v in found]


def _na(claim: str, stat: str, threshold: str, reason: str, id: str) -> Verdict:
    labels = {
        "thm2b": "Thm 2b · common tokens suppressed",
        "thm2a": "Thm 2a · distinct tokens growing",
        "thm3": "Thm 3 · growth ordered by P(l|n)",
        "thm4": "Thm 4 · snap detected",
    }
    return vd.not_applicable(ITEM, claim, stat, threshold, reason).named(id, labels[id])


def _top_k_share(obs: Observed, name: str, claim: str, bound: float, id: str) -> Verdict:
    """Runs that keep only the top-k tokens per class: the stored share of tokens whose logit moved
    the right way (all common tokens down; at least half the distinct tokens up)."""
    value = obs.shares.get(name, math.nan)
    stat = f"{name} at the last step"
    if not math.isfinite(value):
        return _na(claim, stat, f">= {bound:g}", "needs at least one step", id)
    return vd.judge(ITEM, claim, stat, value, ">=", bound).named(id, _na(claim, stat, "", "", id).label)
