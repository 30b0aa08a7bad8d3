"""Reproduce the paper's figures and theorems fresh, with verdicts (issue 4).

``ITEMS`` lists the items in report order; :func:`run_items` runs a selection and returns one
:class:`ItemResult` each (tidy frames, plotly figures, verdicts, exact configs).
``quick=True`` is the CI / 30-second mode: Fig. 6 with 3 seeds (noise allowance 2·SE) and the
theorems item without the two 10⁴-step snap runs; every other item is identical.

Items run with ONE intra-op torch thread by default (``threads=1``): these tensors are small
(≤ 160 × 128 × 210 per step), and on a 2-core machine shared with any other busy process,
torch's 2-thread pool spin-waits so badly that a Fig. 6 panel ran 10–40× slower than with 1
thread (measured here under load).  ``torch.set_num_threads`` is process-wide; it is restored
after each item.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType

import torch

from engine.paper.items import fig4, fig5, fig6, fig9, joma, theorems
from engine.paper.items.common import ItemResult, Progress

ITEMS: dict[str, ModuleType] = {m.NAME: m for m in (fig4, fig5, fig6, fig9, theorems, joma)}
QUICK_DIFFERENCES = (
    "fig6: seeds 1–3 instead of 1–10; a pattern reversal counts only beyond 2·SE of the difference",
    "theorems: the two 10⁴-step sampled runs of §6.9 (the snap) are skipped",
)

__all__ = [
    "ITEMS",
    "QUICK_DIFFERENCES",
    "ItemResult",
    "check_items",
    "run_item",
    "run_items",
    "torch_threads",
    "total_work",
]


def check_items(names: Sequence[str] | None) -> list[str]:
    """The selected item names in report order; unknown names raise ValueError listing the allowed."""
    if not names:
        return list(ITEMS)
    unknown = [n for n in names if n not in ITEMS]
    if unknown:
        raise ValueError(f"unknown item(s) {', '.join(map(repr, unknown))}; allowed: {', '.join(ITEMS)}")
    return [n for n in ITEMS if n in names]


def total_work(names: Sequence[str], quick: bool) -> int:
    """Total optimiser steps the selection will take (for a progress bar)."""
    return sum(ITEMS[n].work(quick) for n in names)


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """Run the block with ``n`` intra-op torch threads (None: leave as is), then restore."""
    old = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def run_item(name: str, quick: bool = False, progress: Progress | None = None, threads: int | None = 1) -> ItemResult:
    t = time.perf_counter()
    with torch_threads(threads):
        result: ItemResult = ITEMS[name].run(quick=quick, progress=progress)
    if threads is not None:
        result.notes.append(f"Ran with {threads} intra-op torch thread(s).")
    result.wall_s = time.perf_counter() - t
    return result


def run_items(
    names: Sequence[str] | None = None, quick: bool = False, progress: Progress | None = None, threads: int | None = 1
) -> list[ItemResult]:
    return [run_item(n, quick, progress, threads) for n in check_items(names)]
