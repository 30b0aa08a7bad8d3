"""The next step's mini-batches drawn in a background thread while this step trains (issue 16).

The samplers are numpy; the step is torch, which releases the GIL inside its kernels, so drawing step t+1's
batches during step t takes the sampler off the critical path.  The draws happen in the same order as without
prefetching, so every stream is unchanged.  A checkpoint must record the samplers' state *before* the draw
that is in flight: :meth:`Prefetcher.states` gives it, and :meth:`Prefetcher.discard` drops the draw (after a
restore, or when the samplers are replaced).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

State = list[list[dict[str, Any]]]


def sampler_states(samplers: Sequence[Any]) -> State | None:
    """[[classes stream state, counts stream state], …] of ContextSamplers; None for other samplers."""
    try:
        return [[sm.rng_classes.bit_generator.state, sm.rng.bit_generator.state] for sm in samplers]
    except AttributeError:
        return None


class Prefetcher:
    """``take(samplers)`` returns ``draw(samplers)``, computed ahead in a thread when possible."""

    def __init__(self, draw: Callable[[Sequence[Any]], Any]):
        self.draw = draw
        self.pool: ThreadPoolExecutor | None = None
        self.future: Future | None = None
        self.samplers: list[Any] = []
        self.before: State | None = None

    def take(self, samplers: Sequence[Any]) -> Any:
        """This step's batches; then starts drawing the next step's (ContextSamplers only)."""
        if self.future is not None and list(samplers) == self.samplers:
            out = self.future.result()
        else:
            self.discard()
            out = self.draw(samplers)
        self.future = None
        self.before = sampler_states(samplers)
        if self.before is not None:
            self.pool = self.pool or ThreadPoolExecutor(max_workers=1, thread_name_prefix="prefetch")
            self.samplers = list(samplers)
            self.future = self.pool.submit(self.draw, self.samplers)
        return out

    def states(self, samplers: Sequence[Any]) -> State | None:
        """The samplers' states as if nothing had been drawn ahead."""
        if self.future is None:
            return sampler_states(samplers)
        self.future.exception()  # wait for the draw in flight; its error (if any) is not ours
        return self.before

    def discard(self) -> None:
        """Forget the draw in flight, rewinding the samplers to their state before it."""
        if self.future is None:
            return
        self.future.exception()
        for sm, (rc, rx) in zip(self.samplers, self.before or [], strict=False):
            sm.rng_classes.bit_generator.state = rc
            sm.rng.bit_generator.state = rx
        self.future = None
