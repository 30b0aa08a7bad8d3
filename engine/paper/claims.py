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
from dataclasses import dataclass, field, replace

import numpy as np
from scipy.stats import spearmanr

from engine.core.data import KIND_COMMON, KIND_DISTINCT
from engine.core.theory_checks import measured_snap_step
from engine.paper import verdicts as vd
from engine.paper.verdicts import Verdict

SIGN_STEP = 10  # Thm 2 is judged on Δz over the first 10 steps (science §6.1); Y(0) = 0 makes step 1's ΔZ vanish
MIN_RHO = 0.9  # Thm 3: Spearman ρ(Δz, P) over each class's distinct tokens (science §6.2)
MIN_ENTROPY_CHANGE = 1e-3  # nats: a run whose entropy moved less shows no snap to measure
ITEM = "run"


@dataclass(frozen=True)
class Observed:
    """One replica of a run: ``steps`` (S,) stored steps in time order; ``z`` (S, Q, M_ctx) the query
    rows of Z (None for runs that keep only the top-k tokens); ``entropy`` (S,) entropy_distinct and
    ``dz_common`` (S,) −Δz of the common tokens, means over classes (NaN without a common token);
    ``P`` (K, M_ctx); ``token_kind`` (K, M_ctx); ``rows`` (K,) row of z that holds ψ(n); ``shares``
    the last stored share_common_down / share_distinct_up (top-k fallback); ``failed``: theorem →
    its conditions that do not hold on this run (:mod:`engine.paper.run_theory`); ``method`` the
    optimiser."""

    steps: np.ndarray
    z: np.ndarray | None
    entropy: np.ndarray
    P: np.ndarray
    token_kind: np.ndarray
    rows: np.ndarray
    shares: dict[str, float]
    dz_common: np.ndarray | None = None
    failed: dict[str, tuple[str, ...]] = field(default_factory=dict)
    method: str = "sgd"


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
    rhos = [spearman(dz[n][distinct[n]], obs.P[n][distinct[n]]) for n in range(len(obs.P))]
    rhos = [r for r in rhos if math.isfinite(r)]
    if not rhos:
        why = "no class has ≥ 3 distinct tokens with different P(l|n): there is no order to follow"
        return _na(claim, stat, f"> {MIN_RHO:g}", why, "thm3")
    v = vd.judge(ITEM, claim, stat, min(rhos), ">", MIN_RHO, "ρ per class: " + ", ".join(f"{r:.2f}" for r in rhos))
    return v.named("thm3", "Thm 3 · growth ordered by P(l|n)")


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return math.nan
    return float(spearmanr(x, y).statistic)


def snap_series(obs: Observed) -> tuple[str, np.ndarray]:
    """The snap's lead signal (science §4.1): −Δz of the common token(s) where the run has one (the
    largest move of the snap), else the distinct-token entropy."""
    if obs.dz_common is not None and np.isfinite(obs.dz_common).all() and len(obs.dz_common) == len(obs.steps):
        return "−Δz_common", obs.dz_common
    return "H(c_n)", obs.entropy


def thm4_snap(obs: Observed) -> Verdict:
    """Theorem 4, measured: the attention snaps.  The statistic is the measured snap step of −Δz_common
    (or of the entropy): from it on, each doubling of t moves the series by < 10 % of its total change
    and < ½ of its fastest doubling (:func:`engine.core.theory_checks.measured_snap_step`); it passes
    when a snap was measured within the run.  No theory covers Adam: n/a."""
    name, series = snap_series(obs)
    claim = "Thm 4: the attention snaps (its growth freezes after a step)"
    stat, threshold = f"measured snap step of {name}", "measured within the run"
    if obs.method != "sgd":
        return _na(claim, stat, threshold, f"no theory covers {obs.method}: Theorem 4 is about gradient steps", "thm4")
    if len(obs.steps) < 4 or obs.steps[-1] < 8:
        return _na(claim, stat, threshold, "needs at least 8 steps (3 doublings of t)", "thm4")
    change = abs(float(series[-1] - series[0])) if len(series) else 0.0
    if name == "H(c_n)" and change < MIN_ENTROPY_CHANGE:
        why = f"the entropy moved by {change:.2g} nats only (< {MIN_ENTROPY_CHANGE:g}): no snap to measure on it"
        return _na(claim, stat, threshold, why, "thm4")
    snapped = measured_snap_step(obs.steps, series)
    end = int(obs.steps[-1])
    value = math.inf if snapped is None else float(snapped)
    detail = f"{name}: {series[0]:.3g} → {series[-1]:.3g} over {end} steps" + (
        "" if snapped is not None else "; still growing at the end of the run"
    )
    return vd.judge(ITEM, claim, stat, value, "<=", end, detail).named("thm4", "Thm 4 · snap detected")


def run_claims(obs: Observed, item: str = ITEM) -> list[Verdict]:
    """The four claims the Lab shows for one replica of a run, in badge order (``item``: where they
    are judged, e.g. a reproduce item's name)."""
    found = [thm2b_common_fall(obs), thm2a_distinct_rise(obs), thm3_ordered(obs), thm4_snap(obs)]
    return [replace(within(v, obs.failed.get(THEOREM[v.id], ())), item=item) for v in found]


THEOREM = {"thm2b": "theorem2", "thm2a": "theorem2", "thm3": "theorem3", "thm4": "theorem4"}


def within(v: Verdict, failed: tuple[str, ...]) -> Verdict:
    """A claim judged where its theorem's conditions do not all hold: a miss is ``n/a`` (the theorem
    does not promise it here) with the failed conditions, never a failure; a pass stays a pass, with
    the failed conditions listed (the behaviour was seen outside the theorem's setting)."""
    if not failed:
        return v
    if v.status == "fail":
        why = f"the theorem's conditions do not hold here; measured {v.statistic} = {v.value:.3g} ({v.threshold})"
        return replace(v, status="n/a", reason=why, conditions=failed)
    return replace(v, conditions=failed)


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
