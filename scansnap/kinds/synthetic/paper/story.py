"""The story of a run as it happens, decided from what was measured (science §6, §4.1): which phase
the attention is in now and the step each phase began, in one short sentence for the Lab's caption.

Phases, in the order the paper tells them:
  1. *suppressing*: every common token's logit has fallen, max_{l∈CT} Δz < 0 (Thm 2b);
  2. *winning*: the distinct tokens above their class median P(l|n) have risen (Thm 2a) and, where
     P(l|n) differs, in its order: Spearman ρ(Δz, P) > 0.9 in every class (Thm 3);
  3. *snapped*: the measured snap of −Δz_common (or of the entropy) has happened: from that step on
     each doubling of t moves it by < 10 % of its total change (Thm 4, measured).
The statistics are those of :mod:`scansnap.kinds.synthetic.paper.claims`, evaluated at up to :data:`PROBES` stored steps
(log-spaced), so a tick costs the same however long the run.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from scansnap.kinds.synthetic.paper.claims import MIN_RHO, Observed, measured_snap, snap_is_settled, spearman
from scansnap.kinds.synthetic.science.data import KIND_COMMON, KIND_DISTINCT
from scansnap.paper import verdicts as vd

PROBES = 40  # stored steps at which the phase tests are evaluated
PHASES = ("starting", "suppressing", "winning", "snapped")
# how a run ended that the phases do not tell: it diverged; it fit at once and nothing moved (saturated); its
# logits never moved; it finished while still scanning
ENDINGS = ("diverged", "saturated", "still", "scanning")
MOVED = 1e-9  # below this largest |Δz| (nats) the attention has not moved
SATURATED_LOSS = 1e-3  # a loss this low after one step: the decoder fit at once


@dataclass(frozen=True)
class Story:
    """``phase`` (one of :data:`PHASES`), the last stored ``step``, ``began``: phase → the first probed
    step where it held, and ``failed``: Theorem 4's failed conditions on this run, each a sentence of words."""

    phase: str
    step: int
    began: dict[str, int] = field(default_factory=dict)
    failed: tuple[str, ...] = ()
    provisional: bool = False  # the snap's step may still move (the run's first half placed it elsewhere)
    ending: str | None = None  # a run that went wrong or stopped short: one of :data:`ENDINGS`
    loss: float = math.nan  # the loss at the first step after 0 (what "the decoder fit at once" says)

    @property
    def sentence(self) -> str:
        """One short sentence: the phase now, with the step it began; or how the run ended, and what to
        change."""
        b = self.began
        if self.ending == "diverged":
            return (
                f"Diverged at step {self.step}: the numbers overflowed. Lower the learning rates "
                "η_Y (the decoder's) and η_Z (the attention's), try ÷10."
            )
        if self.ending == "saturated":
            return (
                f"Nothing moved: the decoder fit the data at once (loss {self.loss:.2g} after one step), so the "
                "attention got no gradient. Lower the decoder's learning rate η_Y, try ÷100."
            )
        if self.ending == "still":
            return (
                f"Nothing has moved by step {self.step}: the attention's logits are where they started. "
                "Raise the learning rates, or give the run more steps."
            )
        if self.ending == "scanning":
            return (
                f"Still scanning at the last step ({self.step}): the attention had not frozen yet. "
                "Give the run more steps (try ×10)."
            )
        if self.phase == "snapped" and self.provisional:
            return (
                f"Snapping: the attention is freezing (from about step {b['snapped']} so far; "
                "the step may still move as the run goes on)."
            )
        if self.phase == "snapped":
            return f"Snapped at step {b['snapped']}: the attention pattern has frozen."
        if self.phase == "winning":
            return f"Scanning: distinct tokens win attention, the most frequent first (since step {b['winning']})."
        if self.phase == "suppressing":
            return f"Scanning: the common tokens are losing attention (since step {b['suppressing']})."
        return "Starting: the decoder learns first; the attention has not moved yet."

    @property
    def earlier(self) -> str:
        """The phases already passed, with their steps (empty in the first one)."""
        past = {"suppressing": "common tokens losing attention", "winning": "distinct tokens winning it in order"}
        done = [f"{past[p]} from step {self.began[p]}" for p in past if p in self.began and p != self.phase]
        return "; ".join(done)

    @property
    def theory_note(self) -> str:
        """Empty where Theorem 4's conditions hold; else says, in one sentence, the story is measured only
        and why (the first failed condition; the others are counted)."""
        if not self.failed:
            return ""
        more = len(self.failed) - 1
        rest = f" (and {more} more condition{'s' if more > 1 else ''})" if more > 0 else ""
        return f"Measured, not predicted: {self.failed[0]}{rest}."


def probe_indices(count: int, probes: int = PROBES) -> np.ndarray:
    """Up to ``probes`` log-spaced indices into ``count`` stored steps, from 1 to the last."""
    if count < 2:
        return np.zeros(0, dtype=np.int64)
    return np.unique(np.round(np.geomspace(1, count - 1, min(probes, count - 1))).astype(np.int64))


def _suppressed(dz: np.ndarray, common: np.ndarray) -> bool:
    return bool(common.any()) and vd.max_common_dz(dz, common) < 0


def _winning(dz: np.ndarray, P: np.ndarray, distinct: np.ndarray) -> bool:
    rise = vd.min_distinct_dz_above_median(dz, P, distinct)
    if not (math.isfinite(rise) and rise > 0):
        return False
    rhos = [spearman(dz[n][distinct[n]], P[n][distinct[n]]) for n in range(len(P))]
    return all(r > MIN_RHO for r in rhos if math.isfinite(r))


def run_story(
    obs: Observed, short_failed: tuple[str, ...] = (), status: str | None = None, loss: np.ndarray | None = None
) -> Story:
    """The phase of replica ``obs`` at its last stored step and when each phase began; with the run's
    ``status`` and its ``loss`` series (one value per stored step), how it ended when the phases do not
    tell it (:data:`ENDINGS`)."""
    steps = np.asarray(obs.steps)
    last = int(steps[-1]) if len(steps) else 0
    began: dict[str, int] = {}
    if obs.z is not None:
        common, distinct = obs.token_kind == KIND_COMMON, obs.token_kind == KIND_DISTINCT
        z0 = obs.z[0][obs.rows]
        for i in probe_indices(len(steps)):
            dz = obs.z[i][obs.rows] - z0
            if "suppressing" not in began and _suppressed(dz, common):
                began["suppressing"] = int(steps[i])
            if "winning" not in began and _winning(dz, obs.P, distinct):
                began["winning"] = int(steps[i])
    snap = measured_snap(obs)
    if snap is not None:
        began["snapped"] = int(snap)
    phase = next((p for p in reversed(PHASES[1:]) if p in began), "starting")
    provisional = snap is not None and not snap_is_settled(obs, snap)
    first_loss = float(loss[1]) if loss is not None and len(loss) > 1 else math.nan
    ending = _ending(obs, phase, status, first_loss)
    return Story(phase, last, began, short_failed, provisional, ending, first_loss)


def _ending(obs: Observed, phase: str, status: str | None, first_loss: float) -> str | None:
    """How the run ended, when the phases alone do not tell it (None: they do)."""
    if status == "diverged":
        return "diverged"
    if obs.z is None or len(obs.steps) < 3:
        return None
    moved = float(np.max(np.abs(obs.z[-1][obs.rows] - obs.z[0][obs.rows])))
    if moved <= MOVED:
        return "saturated" if first_loss < SATURATED_LOSS else "still" if status in ("finished", "stopped") else None
    if status == "finished" and phase in ("suppressing", "winning"):
        return "scanning"
    return None
