"""The work units of the fused step (issue 16), without torch: the budget sizes the step's workspace
from them in the web process."""

from __future__ import annotations

import math

CHUNK_REPLICAS = 32  # replicas per chunk: see bench/step_speed.py (16–64 measured)


def padded_slots(batch: int, K: int) -> int:
    """Slots per class for a batch of B uniform classes: ⌈B/K + 2σ⌉ with σ = √(B/K·(1 − 1/K)) (the class
    counts' binomial spread), at most B.  Fixed by (B, K) alone, so most seeds' batches have the same shape and
    their replicas share chunks; a batch whose largest class count exceeds it uses its own count (for B = 128:
    one seed-step in five at K = 20, one in fifty at K = 2)."""
    mean = batch / K
    return min(batch, math.ceil(mean + 2 * math.sqrt(mean * (1 - 1 / K))))
