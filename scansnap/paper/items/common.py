"""What every kind's reproduce items share: training a fresh trainer to its scheduled snapshots with
progress, and how an item maps over its independent parts."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol, TypeVar

from scansnap.paper.items.result import Progress

CorpusLoader = Callable[[Any], Any]  # a kind's data config → its encoded corpus (the service reads it)
ItemMap = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]  # ``map``, or a cluster's task map
S = TypeVar("S")  # a kind's snapshot
S_co = TypeVar("S_co", covariant=True)
PROGRESS_EVERY_S = 0.25  # with a progress callback, it is told about this often (a step allowing)


class Stepping(Protocol[S_co]):
    """What both kinds' trainers have: a snapshot schedule, a step count, ``advance(n)`` and ``snapshot()``."""

    schedule: Any
    step_count: int

    def advance(self, n: int) -> None: ...

    def snapshot(self) -> S_co: ...


def collect(trainer: Stepping[S], progress: Progress | None = None) -> list[S]:
    """Every scheduled snapshot of a fresh ``trainer`` (``trainer.run()``'s).  With ``progress``, it is told the
    steps taken in chunks sized from the last chunk's time to take about :data:`PROGRESS_EVERY_S`, not only at
    the snapshots: a stop raised by ``progress`` ends a reproduction within a chunk, where Fig. 6's panels
    snapshot only at their first and last step."""
    snaps: list[S] = []
    chunk = 1
    for target in trainer.schedule:
        while (left := int(target) - trainer.step_count) > 0:
            n = left if progress is None else min(chunk, left)
            t0 = time.perf_counter()
            trainer.advance(n)
            if progress is not None:
                dt = time.perf_counter() - t0
                progress(n)
                chunk = max(1, min(10_000, int(n * PROGRESS_EVERY_S / dt))) if dt > 0 else 2 * n
        snaps.append(trainer.snapshot())
    return snaps
