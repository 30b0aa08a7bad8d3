"""JoMA's "sparser, then denser" read off measured entropy curves (no torch, no I/O): the drop to
the minimum and the rebound after it, the same numbers for the joma-real item, the Real text
page's markers, its caption and its live verdict.

A layer's attention entropy H(t) is stored at the steps t₀ = 0 < t₁ < … < t_end; one snapshot jitters
(one probe batch, dropout-free but mid-training: measured ±0.05 nats, and a loss spike can pull a
single snapshot down by a nat).  So the curve is first **smoothed**: Ĥ(tₖ) = the median of H over the
snapshots k − 2 … k + 2 (:data:`SMOOTH` = 5), which ignores any one or two snapshots far off (the
window narrower near the ends, the start kept, the end the median of the last three); the **snapshot
noise** σ = 1.4826 · median_k |H(tₖ) − Ĥ(tₖ)| is the robust SD of a snapshot about Ĥ.  Then, on Ĥ:

    drop = Ĥ(0) − min_t Ĥ(t),   rebound = Ĥ(t_end) − min_t Ĥ(t);

a drop (rebound) is *measured* when it is at least :data:`MIN_DROP` (:data:`MIN_REBOUND`) nats, the
thresholds of the JoMA items, and the caption states it in units of σ (its confidence).  Across seeds
(reproduce: the authors' seeds 1–3) the curves are averaged first, as JoMA plots the mean over seeds,
and each seed's own drop and rebound give the ± SD.

Live, a verdict reads ``too early`` while the run trains and has not shown it yet, and a change of
what it reads is shown only once it holds on :data:`HOLD` consecutive snapshots, so one snapshot never
flips it (:func:`live_readings`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view
from numpy.typing import ArrayLike

MIN_DROP = MIN_REBOUND = 0.1  # nats, as the JoMA simulation item (scansnap.kinds.synthetic.paper.items.joma)
SMOOTH = 5  # snapshots in the running median
HOLD = 2  # consecutive snapshots a live verdict's new reading must hold before it is shown
MAD_TO_SD = 1.4826  # σ = 1.4826 · MAD for normally distributed jitter
Reading = Literal["too early", "measured", "not measured"]


def smoothed(H: ArrayLike, width: int = SMOOTH) -> np.ndarray:
    """Ĥ(tₖ) = median of H(t_{k−r}) … H(t_{k+r}), r = min(width // 2, k, n − 1 − k): a centred window,
    narrower near the ends so that it never leans on one side; the start stays H(0) (the model as
    initialised: no training noise yet) and the end is the median of the last three snapshots (a
    spike on the newest one does not move it)."""
    h = np.asarray(H, dtype=np.float64)
    n, half = len(h), width // 2
    out = h.copy()
    if n > 2 * half:
        out[half : n - half] = np.median(sliding_window_view(h, 2 * half + 1), axis=1)
    for k in (k for k in range(n) if min(k, n - 1 - k) < half):
        r = min(half, k, n - 1 - k)
        out[k] = np.median(h[k - r : k + r + 1])
    if n >= 3:
        out[-1] = np.median(h[-3:])
    return out


def snapshot_noise(H: ArrayLike) -> float:
    """σ = 1.4826 · median |H − Ĥ|: the robust SD of one snapshot about the smoothed curve (0 for < 3)."""
    h = np.asarray(H, dtype=np.float64)
    if len(h) < 3:
        return 0.0
    return float(MAD_TO_SD * np.median(np.abs(h - smoothed(h))))


@dataclass(frozen=True)
class DropRebound:
    """The minimum of one smoothed entropy curve and what came before and after it; ``noise``: σ."""

    start: float
    min_value: float
    min_step: int
    end: float
    end_step: int
    noise: float = 0.0

    @property
    def drop(self) -> float:
        return self.start - self.min_value

    @property
    def rebound(self) -> float:
        return self.end - self.min_value

    @property
    def dropped(self) -> bool:
        return self.drop >= MIN_DROP

    @property
    def turned(self) -> bool:
        """The curve fell to its minimum and rose after it (lowest at the end is a fall, not a turn)."""
        return self.dropped and self.rebound > 0

    @property
    def rebounded(self) -> bool:
        return self.dropped and self.rebound >= MIN_REBOUND

    def confidence(self, value: float) -> str:
        """``value`` in units of the snapshot noise σ (how far above the jitter it stands)."""
        if self.noise <= 0:
            return "snapshot noise not measured"
        return f"{value / self.noise:.1f} σ, snapshot noise σ = {self.noise:.3f}"

    def sentence(self, layer: int) -> str:
        """What was measured on the smoothed curve, plainly, with the numbers and their confidence."""
        seen = "a drop-then-rebound WAS" if self.rebounded else "NO drop-then-rebound was"
        if self.rebound <= 0:  # lowest at the end: it fell (or stayed), it did not turn
            return (
                f"layer {layer}: {seen} measured (smoothed H {self.start:.3f} at step 0 → {self.end:.3f} at step "
                f"{self.end_step}, its lowest value, at the end)"
            )
        return (
            f"layer {layer}: {seen} measured (smoothed H {self.start:.3f} at step 0 → {self.min_value:.3f} at step "
            f"{self.min_step} → {self.end:.3f} at step {self.end_step}; rebound {self.rebound:+.3f} nats = "
            f"{self.confidence(self.rebound)})"
        )


def drop_rebound(steps: ArrayLike, H: ArrayLike) -> DropRebound:
    """The drop and rebound of one curve H over ``steps``, read on its smoothed curve Ĥ (the first
    minimum if it repeats)."""
    s, h = np.asarray(steps), smoothed(H)
    i = int(np.nanargmin(h))
    return DropRebound(float(h[0]), float(h[i]), int(s[i]), float(h[-1]), int(s[-1]), snapshot_noise(H))


def summary(steps: ArrayLike, H: ArrayLike) -> str:
    """One sentence per layer (columns of H: (steps, layers)) saying whether a drop-then-rebound was
    measured at this budget, with the numbers."""
    h = np.asarray(H)
    parts = [drop_rebound(steps, h[:, layer]).sentence(layer) for layer in range(h.shape[1])]
    return (
        f"At this budget ({int(np.asarray(steps)[-1]):,} steps), on the curves smoothed over {SMOOTH} snapshots: "
        + "; ".join(parts)
        + "."
    )


# ---------------------------------------------------------------------------------------- across seeds
@dataclass(frozen=True)
class SeedSpread:
    """One layer over several seeds: the mean curve's reading, and each seed's own."""

    mean: DropRebound
    seeds: tuple[DropRebound, ...]

    @staticmethod
    def _mean_sd(values: list[float]) -> str:
        v = np.asarray(values)
        sd = float(v.std(ddof=1)) if len(v) > 1 else 0.0
        return f"{v.mean():.3f} ± {sd:.3f}"

    def minimum(self) -> str:
        """mean ± SD over the seeds of each seed's smoothed minimum."""
        return self._mean_sd([d.min_value for d in self.seeds])

    def rebound(self) -> str:
        return self._mean_sd([d.rebound for d in self.seeds])

    def drop(self) -> str:
        return self._mean_sd([d.drop for d in self.seeds])

    def agreeing(self, what: Literal["dropped", "rebounded"]) -> int:
        """How many seeds show it on their own curve."""
        return sum(bool(getattr(d, what)) for d in self.seeds)

    def sentence(self, layer: int) -> str:
        n, m = len(self.seeds), self.mean
        return (
            f"layer {layer}, mean of {n} seeds: smoothed H {m.start:.3f} → min {m.min_value:.3f} at step "
            f"{m.min_step} → {m.end:.3f} at step {m.end_step}; per seed (mean ± SD): minimum {self.minimum()}, "
            f"drop {self.drop()}, rebound {self.rebound()} nats; a drop on {self.agreeing('dropped')} of {n} "
            f"seeds, a rebound ≥ {MIN_REBOUND:g} on {self.agreeing('rebounded')} of {n}"
        )


def across_seeds(steps: ArrayLike, curves: ArrayLike) -> SeedSpread:
    """``curves``: (seeds, steps) of one layer on the same schedule."""
    c = np.asarray(curves, dtype=np.float64)
    return SeedSpread(drop_rebound(steps, c.mean(axis=0)), tuple(drop_rebound(steps, row) for row in c))


# ---------------------------------------------------------------------------------------- live
@dataclass(frozen=True)
class LiveVerdict:
    """What the page says of one layer while (or after) it trains."""

    drop: Reading
    rebound: Reading
    reading: DropRebound

    def sentence(self, layer: int) -> str:
        d = self.reading
        drop = {
            "measured": f"dropped {d.drop:.2f} nats (to {d.min_value:.2f} at step {d.min_step:,})",
            "too early": "no drop yet (too early to say)",
            "not measured": f"no drop of {MIN_DROP:g} nats at this budget",
        }[self.drop]
        rebound = {
            "measured": f"rebounded {d.rebound:+.2f} nats since ({d.confidence(d.rebound)})",
            "too early": "a rebound: too early to say",
            "not measured": f"no rebound of {MIN_REBOUND:g} nats at this budget",
        }[self.rebound]
        return f"layer {layer}: {drop}; {rebound}"


def _raw(d: DropRebound, finished: bool) -> tuple[Reading, Reading]:
    undecided: Reading = "not measured" if finished else "too early"
    drop: Reading = "measured" if d.dropped else undecided
    rebound: Reading = "measured" if d.rebounded else undecided
    return drop, rebound


def live_readings(steps: ArrayLike, H: ArrayLike, finished: bool) -> list[LiveVerdict]:
    """The live verdict after each stored snapshot of one layer (the last is the one to show): a
    reading changes only when the new one held on the last :data:`HOLD` snapshots (at the run's end,
    the final reading counts at once: nothing more will come)."""
    s, h = np.asarray(steps), np.asarray(H, dtype=np.float64)
    shown: list[LiveVerdict] = []
    raws: list[tuple[Reading, Reading]] = []
    for p in range(1, len(h) + 1):
        d = drop_rebound(s[:p], h[:p])
        raws.append(_raw(d, finished and p == len(h)))
        last = finished and p == len(h)
        prev = (shown[-1].drop, shown[-1].rebound) if shown else raws[0]
        now = tuple(
            raws[-1][i] if last or (len(raws) >= HOLD and all(r[i] == raws[-1][i] for r in raws[-HOLD:])) else prev[i]
            for i in range(2)
        )
        shown.append(LiveVerdict(now[0], now[1], d))
    return shown


def live_verdict(steps: ArrayLike, H: ArrayLike, finished: bool) -> LiveVerdict:
    """The live verdict to show now (:func:`live_readings`' last)."""
    return live_readings(steps, H, finished)[-1]


# ---------------------------------------------------------------------------------------- the story
TREND_NATS = 0.05  # a change of Ĥ over the last TREND_SNAPSHOTS below this is "steady" (about the jitter)
TREND_SNAPSHOTS = 3


def effective_words(h: float) -> float:
    """e^H: attention of entropy H spread evenly over this many words (uniform over i words: H = ln i)."""
    return float(np.exp(h))


def trend(H: ArrayLike) -> Literal["sparser", "denser", "steady"]:
    """Which way the smoothed curve moved over its last :data:`TREND_SNAPSHOTS` snapshots."""
    h = smoothed(H)
    if len(h) < 2:
        return "steady"
    change = h[-1] - h[max(0, len(h) - 1 - TREND_SNAPSHOTS)]
    return "sparser" if change < -TREND_NATS else "denser" if change > TREND_NATS else "steady"


def story(steps: ArrayLike, H: ArrayLike, uniform: float) -> str:
    """One sentence, from the measurements, on what the attention is doing now: each layer's
    effective number of attended words e^Ĥ and the way it moves (H: (snapshots, layers))."""
    h = np.asarray(H, dtype=np.float64)
    if h.ndim != 2 or len(h) == 0:
        return ""
    words = {"sparser": "getting sparser", "denser": "spreading out again", "steady": "holding steady"}
    parts = []
    for layer in range(h.shape[1]):
        now = effective_words(smoothed(h[:, layer])[-1])
        how = words[trend(h[:, layer])] if len(h) > 1 else "as initialised"
        if layer == 0:
            parts.append(
                f"layer 0's attention is {how}: each word now attends to about {now:.1f} earlier words "
                f"(about {effective_words(h[0, 0]):.1f} at the start; {effective_words(uniform):.1f} if uniform)"
            )
        else:
            parts.append(f"layer {layer}: about {now:.1f} words, {how}")
    at = int(np.asarray(steps)[-1])
    return f"Step {at:,}: " + "; ".join(parts) + "."


# ---------------------------------------------------------------------------------------- the groups
GROUP_CHANGE = 0.02  # a change of the smoothed share below this is "about the same"


def _moved(share: ArrayLike) -> tuple[float, float, str]:
    s = smoothed(share)
    change = s[-1] - s[0]
    word = "up" if change > GROUP_CHANGE else "down" if change < -GROUP_CHANGE else "about the same"
    return float(s[0]), float(s[-1]), word


def groups_sentence(common: ArrayLike, distinct: ArrayLike, uniform_common: float, uniform_distinct: float) -> str:
    """What Scan & Snap predicts for the lowest layer's attention on common and distinct words, and
    what was measured (start → now, smoothed), whichever way it went."""
    c0, c1, cw = _moved(common)
    d0, d1, dw = _moved(distinct)
    holds = {("down", "up"): "as the theory predicts", ("about the same", "up"): "distinct words as predicted"}
    verdict = holds.get((cw, dw), "not what the theory predicts here")
    return (
        "Scan & Snap predicts that attention leaves common words (those followed by many different next words) "
        "for distinct ones (those that name the next word). Measured on layer 0: distinct words "
        f"{d0:.2f} → {d1:.2f} of the attention ({dw}; {uniform_distinct:.2f} if uniform), common words "
        f"{c0:.2f} → {c1:.2f} ({cw}; {uniform_common:.2f} if uniform): {verdict}."
    )
