"""Does a theorem apply to a run, and where did the run itself snap?  (numpy only)

:func:`applicability` checks the conditions of Theorems 2, 3 and 4 (science §4) on a run's facts;
:func:`sign_agreement` compares a finite-T run with its T = ∞ twin; :func:`measured_snap_step`
finds the step after which a series (−Δz_common, entropy) has stopped changing on a log-t axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import Problem


class Condition(NamedTuple):
    """One condition of a theorem's statement, checked on a run: ``detail`` states it with its symbols
    and numbers (a tooltip, a report), ``plain`` says in one sentence of words what the theorem assumes
    and what this run does (a student's screen)."""

    name: str
    holds: bool
    detail: str
    plain: str = ""


@dataclass(frozen=True)
class RunFacts:
    """What the theorems' conditions depend on.

    T: None for T = ∞.  n_common: tokens in the support of ≥ 2 classes.  spectral_radius_E0:
    max |λ| of E(0) = F(0)^T F(0) − I (Assumption 2).  decoder: "lemma3" (yz-meanfield with the
    Lemma-3 decoder) or "plain".  lr_pairs: every (η_Y, η_Z) of the run.  common_symmetric: one
    query and class-independent P(c|n) on every common token (Corollary 2's setting)."""

    T: int | None
    K: int
    n_queries: int
    n_common: int
    spectral_radius_E0: float
    lr_pairs: tuple[tuple[float, float], ...]
    decoder: str
    method: str
    momentum: float
    weight_decay: float
    zero_init: bool
    common_symmetric: bool


def spectral_radius_E0(P: ArrayLike, psi: ArrayLike, z0: ArrayLike) -> float:
    """max |λ(E(0))|, E(0) = F(0)^T F(0) − I with f_n = c̃_n/‖c̃_n‖, c̃_n = P(·|n)e^{z_ψ(n)(0)}.

    With every f_n·f_n' = ρ the eigenvalues are (K−1)ρ and −ρ, so Assumption 2 (< 1/K) reads
    ρ(0) < 1/(K(K−1)); for K = 2, ρ(0) < ½."""
    P, z0 = np.asarray(P, dtype=np.float64), np.asarray(z0, dtype=np.float64)
    rows = z0[np.asarray(psi, dtype=np.int64)]
    ct = P * np.exp(rows - rows.max(axis=1, keepdims=True))
    f = ct / np.linalg.norm(ct, axis=1, keepdims=True)
    E = f @ f.T - np.eye(len(P))
    return float(np.max(np.abs(np.linalg.eigvalsh(E))))


def common_symmetric(P: ArrayLike, psi: ArrayLike, common_mask: ArrayLike) -> bool:
    """Corollary 2's setting: one query and P(c|n) the same for every class on each common token."""
    P = np.asarray(P, dtype=np.float64)
    common = np.broadcast_to(np.asarray(common_mask, dtype=bool), P.shape).any(0)
    one_query = len(np.unique(np.asarray(psi))) == 1
    return bool(one_query and np.allclose(P[:, common], P[:1, common], rtol=1e-9, atol=0))


def run_facts(cfg: RunConfig, problem: Problem, z0: ArrayLike) -> RunFacts:
    """The facts of a run from its config, its problem and z(0) of the query rows (Q×M_ctx)."""
    m, o = cfg.model, cfg.optim
    return RunFacts(
        T=None if cfg.data.infinite_T else int(cfg.data.T),
        K=problem.K,
        n_queries=problem.Q,
        n_common=int(problem.common_mask.any(0).sum()),
        spectral_radius_E0=spectral_radius_E0(problem.P, problem.psi, z0),
        lr_pairs=tuple((float(y), float(z)) for y, z in cfg.lr_pairs),
        decoder="lemma3" if m.kind == "yz-meanfield" and m.meanfield_decoder == "lemma3" else "plain",
        method=o.method,
        momentum=float(o.momentum),
        weight_decay=float(o.weight_decay),
        zero_init=m.init == "zero",
        common_symmetric=common_symmetric(problem.P, problem.psi, problem.common_mask),
    )


def _cond_T(f: RunFacts) -> Condition:
    ok = f.T is None
    detail = "T = ∞ (Assumption 1b)" if ok else f"T = {f.T}: finite contexts (Assumption 1b)"
    said = "infinitely long sequences" if ok else f"infinitely long sequences; this run uses {f.T} tokens"
    return Condition("T = ∞", ok, detail, f"the theorem assumes {said}")


def _cond_assumption2(f: RunFacts) -> Condition:
    ok = f.spectral_radius_E0 < 1 / f.K
    rel = "<" if ok else "≥"
    said = "barely overlap" if ok else f"overlap by {f.spectral_radius_E0:.2g}, more than the {1 / f.K:.2g} it allows"
    return Condition(
        "Assumption 2",
        ok,
        f"max |λ(E(0))| = {f.spectral_radius_E0:.3g} {rel} 1/K = {1 / f.K:.3g} (E = F^T F − I)",
        f"the theorem assumes the classes' attention patterns barely overlap at the start; here they {said}"
        if not ok
        else "the classes' attention patterns barely overlap at the start, as the theorem assumes",
    )


def _cond_rates(f: RunFacts) -> Condition:
    bad = [(y, z) for y, z in f.lr_pairs if y < z]
    if not bad:
        return Condition(
            "η_Y ≥ η_Z",
            True,
            "η_Y ≥ η_Z for every pair (Assumption 1c)",
            "the decoder learns at least as fast as the attention, as the theorem assumes",
        )
    return Condition(
        "η_Y ≥ η_Z",
        False,
        f"η_Y = {bad[0][0]:g} < η_Z = {bad[0][1]:g} (Assumption 1c: η_Y ≫ η_Z)",
        "the theorem assumes the decoder learns faster than the attention; here the attention's rate "
        f"({bad[0][1]:g}) is larger than the decoder's ({bad[0][0]:g})",
    )


def _cond_decoder(f: RunFacts) -> Condition:
    ok = f.decoder == "lemma3"
    why = "decoder kept in span(F) (Lemma 3)" if ok else "plain decoder: Y is not kept in span(F) (Lemma 3, Eqn. 10)"
    said = "decoder kept in the span of the attention patterns (Lemma 3)"
    plain = f"the theorem's {said}" if ok else f"the theorem assumes a {said}; this run trains a plain decoder"
    return Condition("Lemma-3 decoder", ok, why, plain)


def _cond_sgd(f: RunFacts) -> Condition:
    if f.method == "sgd" and f.momentum == 0 and f.weight_decay == 0:
        return Condition("plain SGD", True, "plain gradient steps (gradient flow)", "plain gradient steps, as assumed")
    what = "Adam" if f.method == "adam" else f"SGD with momentum {f.momentum:g}"
    wd = f", weight decay {f.weight_decay:g}" if f.weight_decay else ""
    return Condition(
        "plain SGD",
        False,
        f"{what}{wd}: the theorems are stated for gradient flow",
        f"the theorem assumes plain gradient steps; this run uses {what}{wd}",
    )


def _cond_common(f: RunFacts, corollary2: bool) -> Condition:
    ok = f.n_common == 1 or (corollary2 and f.n_common > 1 and f.common_symmetric)
    if f.n_common == 1:
        detail = "one common token"
    elif ok:
        detail = f"{f.n_common} common tokens in Corollary 2's symmetric one-query setting"
    else:
        detail = f"{f.n_common} common tokens (the statement needs one" + (
            ", or Corollary 2's symmetric one-query case)" if corollary2 else ")"
        )
    plain = (
        "one token shared by the classes, as assumed"
        if ok
        else (f"the theorem assumes a single token shared by the classes; this run has {f.n_common}")
    )
    return Condition("one common token", ok, detail, plain)


def _cond_query(f: RunFacts) -> Condition:
    ok = f.n_queries == 1
    detail = "one query shared by all classes" if ok else f"{f.n_queries} queries (Thm. 4 has one query for all n)"
    plain = (
        "one query for every class, as assumed"
        if ok
        else (f"the theorem assumes every class shares one query token; this run has {f.n_queries}")
    )
    return Condition("one query", ok, detail, plain)


def _cond_init(f: RunFacts) -> Condition:
    why = "random init: Y(0) ≠ 0 (Thm. 1's ξ_n > 0, on which Thms. 2–4 rest)"
    plain = (
        "the decoder starts at zero, as assumed"
        if f.zero_init
        else ("the theorem assumes the weights start at zero; this run starts them at random")
    )
    return Condition("Y(0) = 0", f.zero_init, "zero init" if f.zero_init else why, plain)


def applicability(f: RunFacts) -> dict[str, list[Condition]]:
    """The conditions of Theorems 2, 3, 4 checked on a run: {"theorem2": [...], ...}.

    Every one needs T = ∞, Assumption 2, η_Y ≥ η_Z, Lemma 3, plain SGD and Y(0) = 0: the signs of
    Thm. 2 (fates) and the growth order of Thm. 3 come from Thm. 1's ξ_n > 0, which starts the
    decoder at 0 (with a random Y(0), ξ_n can start negative and the distinct logits fall).  Thm. 2
    also needs one common token (or Corollary 2); Thm. 4 one common token and one query.  A theorem
    applies when every condition holds."""
    base = [_cond_T(f), _cond_assumption2(f), _cond_rates(f), _cond_decoder(f), _cond_sgd(f), _cond_init(f)]
    return {
        "theorem2": [*base, _cond_common(f, corollary2=True)],
        "theorem3": list(base),
        "theorem4": [*base, _cond_common(f, corollary2=False), _cond_query(f)],
    }


def sign_agreement(
    dz_finite: ArrayLike, dz_infinite: ArrayLike, distinct_mask: ArrayLike, common_mask: ArrayLike
) -> Condition:
    """Whether a finite-T run moves the distinct and the common logits in the same direction as
    its T = ∞ twin.  dz_*: (K, M_ctx) Δz of each class's query row, z_{ψ(n)}(t) − z_{ψ(n)}(0), at
    the same step; compares the sign of the mean Δz over each kind of token (a mean within
    1e-9 of the larger of the two means' sizes counts as no direction)."""
    a, b = np.asarray(dz_finite, dtype=np.float64), np.asarray(dz_infinite, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 2:
        raise ValueError(f"dz_finite and dz_infinite must be (K, M_ctx) arrays of one shape, got {a.shape}, {b.shape}")
    flips = []
    for kind, mask in (("distinct", distinct_mask), ("common", common_mask)):
        m = np.broadcast_to(np.asarray(mask, dtype=bool), a.shape)
        if not m.any():
            continue
        fa, fb = float(a[m].mean()), float(b[m].mean())
        tol = 1e-9 * max(abs(fa), abs(fb))
        sa, sb = np.sign(fa) * (abs(fa) > tol), np.sign(fb) * (abs(fb) > tol)
        if sa * sb < 0:
            flips.append(f"{kind} logits move {fa:+.3g} at finite T but {fb:+.3g} at T = ∞")
    if flips:
        return Condition(
            "finite T agrees with T = ∞",
            False,
            "; ".join(flips) + " (mean Δz)",
            "with finite sequences this run's logits move the other way than the theory's infinitely long ones",
        )
    return Condition(
        "finite T agrees with T = ∞",
        True,
        "distinct and common logits move as in the T = ∞ twin",
        "its logits move as with infinitely long sequences",
    )


SNAP_FRACTION = 0.10  # of the series' total change, per doubling of t
PEAK_FRACTION = 0.5  # of its fastest doubling
WINDOW = 0.5  # doublings: the averaging window and the differencing span
GRID_PER_DOUBLING = 32
NOISE_SNR = 5.0


def per_doubling_change(steps: ArrayLike, series: ArrayLike) -> tuple[NDArray, NDArray]:
    """(t, d): the series' change per doubling of t, d = [ȳ(t·2^{w/2}) − ȳ(t·2^{−w/2})]/w (w = ½),
    signed along the total change, where ȳ averages the series over w doublings centred at t
    (linear interpolation in log t, so a ln t curve keeps its exact slope: d = ln 2 per doubling).
    Defined for t from t_first·2^w to t_last·2^{−w}."""
    t, y = _clean(steps, series)
    grid = np.arange(np.log2(t[0]), np.log2(t[-1]) + 1e-12, 1.0 / GRID_PER_DOUBLING)
    n = round(WINDOW * GRID_PER_DOUBLING)
    smooth = np.convolve(np.interp(grid, np.log2(t), y), np.ones(n + 1) / (n + 1), mode="valid")
    d = (smooth[n:] - smooth[:-n]) / WINDOW
    sign = np.sign(y[-1] - y[0]) or 1.0
    return 2.0 ** grid[n : n + len(d)], sign * d


def _clean(steps: ArrayLike, series: ArrayLike) -> tuple[NDArray, NDArray]:
    t, y = np.asarray(steps, dtype=np.float64), np.asarray(series, dtype=np.float64)
    if t.shape != y.shape or t.ndim != 1:
        raise ValueError(f"steps and series must be 1-D of one length, got {t.shape} and {y.shape}")
    keep = (t >= 1) & np.isfinite(y)
    t, y = t[keep], y[keep]
    if len(t) and np.any(np.diff(t) <= 0):
        raise ValueError("steps must be strictly increasing")
    return t, y


def noise_level(series: ArrayLike) -> float:
    """Robust noise σ of a sampled series: 1.4826·median|Δ²y|/√6 (Δ² removes a smooth trend)."""
    y = np.asarray(series, dtype=np.float64)
    if len(y) < 3:
        return 0.0
    return float(1.4826 * np.median(np.abs(np.diff(y, 2))) / np.sqrt(6.0))


def _change_noise(t: NDArray, centres: NDArray, sigma: float) -> NDArray:
    """σ of d at each centre for sample noise σ: √(1/n₋ + 1/n₊)·σ/w, n± = samples in each half-window."""
    lo = np.searchsorted(t, centres * 2.0**-WINDOW) - np.searchsorted(t, centres)
    hi = np.searchsorted(t, centres * 2.0**WINDOW) - np.searchsorted(t, centres)
    return sigma * np.sqrt(1.0 / np.maximum(-lo, 1) + 1.0 / np.maximum(hi, 1)) / WINDOW


def measured_snap_step(
    steps: ArrayLike,
    series: ArrayLike,
    fraction: float = SNAP_FRACTION,
    peak_fraction: float = PEAK_FRACTION,
    min_change: float = 0.0,
) -> int | None:
    """The first stored step from which on, per doubling of t, the series changes by less than
    ``fraction`` (10 %) of its total change and by less than ``peak_fraction`` (½) of its fastest
    doubling (:func:`per_doubling_change`, to the end of the run).

    Why: a ln t curve (scanning) changes by the same amount every doubling, so the ½-of-peak test
    never flags it, whatever the run's length (10 % of the total alone would flag a ln t run longer
    than 10 doublings); after Thm. 4's t_0 the change per doubling falls like 1/ln(Mη_Y t/K)
    (ln ln t), and a frozen series (momentum's hard snap) drops to 0: both pass both tests where
    the viewer sees the bend on a log-t axis.  10 % keeps a slow but still sizeable rise (a tenth
    of everything, each doubling) from counting as snapped.  Noise: the series is averaged over half
    a doubling before differencing, and a doubling counts as slow only if it is slow by 2 noise σ
    (so noise delays the mark or removes it, never invents one).  None when the run spans < 3
    doublings, the series moved by ≤ min_change or by less than 5 noise σ, or it is still fast at
    the last analysed step (t_last/√2)."""
    for name, v in (("fraction", fraction), ("peak_fraction", peak_fraction)):
        if not 0 < v < 1:
            raise ValueError(f"{name} must be in (0, 1), got {v!r}")
    t, y = _clean(steps, series)
    if len(t) < 4 or t[-1] < 8 * t[0]:
        return None
    sigma = noise_level(y)
    total = abs(float(y[-1] - y[0]))
    if total <= max(min_change, NOISE_SNR * sigma):
        return None
    centres, d = per_doubling_change(t, y)
    noise = 2.0 * _change_noise(t, centres, sigma)
    level = min(fraction * total, peak_fraction * float(np.max(d - noise)))
    fast = np.flatnonzero(d + noise >= level)
    if len(fast) and fast[-1] == len(d) - 1:
        return None
    start = centres[fast[-1] + 1] if len(fast) else centres[0]
    return int(t[np.searchsorted(t, start * (1 - 1e-12))])


STABLE_TOL = 0.10  # a snap is stable once the run's first half measures it within this (relative)


def snap_is_stable(steps: ArrayLike, series: ArrayLike, snap: int, tol: float = STABLE_TOL) -> bool:
    """Whether a snap measured at step ``snap`` (:func:`measured_snap_step` on the whole run) has stopped
    moving: the run's first half (its stored steps ≤ t_last/2) measures one within ``tol`` of it.  Until
    then it is provisional: a slow ln ln t bend moves the measured step as the run goes on (theorem4's moved
    from 422 to 207 between steps 647 and 4,737, and held from there to 40,000)."""
    t, y = _clean(steps, series)
    if not len(t):
        return False
    half = t <= t[-1] / 2
    earlier = measured_snap_step(t[half], y[half]) if half.sum() >= 4 else None
    return earlier is not None and abs(earlier - snap) <= tol * snap
