"""JoMA's "sparser, then denser" read off a measured entropy curve (no torch, no I/O): the drop to
the minimum and the rebound after it, the same numbers for the joma-real item, the Real text
page's markers and its caption.

For a layer's attention entropy H(t) at the stored steps t₀ = 0 < t₁ < … < t_end:
drop = H(0) − min_t H(t), rebound = H(t_end) − min_t H(t); a drop (rebound) is *measured* when
it is at least :data:`MIN_DROP` (:data:`MIN_REBOUND`) nats, the thresholds of the JoMA items.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

MIN_DROP = MIN_REBOUND = 0.1  # nats, as the JoMA simulation item (engine.paper.items.joma)


@dataclass(frozen=True)
class DropRebound:
    """The minimum of one entropy curve and what came before and after it."""

    start: float
    min_value: float
    min_step: int
    end: float
    end_step: int

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
        """The curve fell to its minimum before the end (a minimum at the last step is a fall, not a turn)."""
        return self.dropped and self.min_step < self.end_step

    @property
    def rebounded(self) -> bool:
        return self.dropped and self.rebound >= MIN_REBOUND

    def sentence(self, layer: int) -> str:
        """What was measured, plainly, with the numbers."""
        seen = "a drop-then-rebound WAS" if self.rebounded else "NO drop-then-rebound was"
        if self.min_step == self.end_step:  # lowest at the end: it fell (or stayed), it did not turn
            return (
                f"layer {layer}: {seen} measured (H {self.start:.3f} at step 0 → {self.end:.3f} at step "
                f"{self.end_step}, its lowest value, at the end)"
            )
        return (
            f"layer {layer}: {seen} measured (H {self.start:.3f} at step 0 → {self.min_value:.3f} at step "
            f"{self.min_step} → {self.end:.3f} at step {self.end_step})"
        )


def drop_rebound(steps: ArrayLike, H: ArrayLike) -> DropRebound:
    """The drop and rebound of one curve H over ``steps`` (the first minimum if it repeats)."""
    s, h = np.asarray(steps), np.asarray(H, dtype=np.float64)
    i = int(np.nanargmin(h))
    return DropRebound(float(h[0]), float(h[i]), int(s[i]), float(h[-1]), int(s[-1]))


def summary(steps: ArrayLike, H: ArrayLike) -> str:
    """One sentence per layer (columns of H: (steps, layers)) saying whether a drop-then-rebound was
    measured at this budget, with the numbers."""
    h = np.asarray(H)
    parts = [drop_rebound(steps, h[:, layer]).sentence(layer) for layer in range(h.shape[1])]
    return f"At this budget ({int(np.asarray(steps)[-1]):,} steps): " + "; ".join(parts) + "."
