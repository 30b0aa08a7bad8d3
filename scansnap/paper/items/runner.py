"""Run reproduce items (torch: imported by the worker process and the command line only).

Items run with ONE intra-op torch thread by default (``threads=1``): these tensors are small
(≤ 160 × 128 × 210 per step), and on a 2-core machine shared with any other busy process,
torch's 2-thread pool spin-waits so badly that a Fig. 6 panel ran 10–40× slower than with 1
thread (measured here under load).  ``torch.set_num_threads`` is process-wide; it is restored
after each item.

Real-text items (``ITEMS[name].corpus``) are given ``corpus_loader``: the service passes
the text kind's corpus reader (the paper layer reads no files).
"""

from __future__ import annotations

import importlib
import inspect
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from scansnap.core.device import torch_threads
from scansnap.paper.items.catalog import ITEMS
from scansnap.paper.items.common import CorpusLoader
from scansnap.paper.items.result import ItemResult, Progress


def module_of(name: str) -> ModuleType:
    """The module that runs item ``name`` (its kind's, imported now)."""
    return importlib.import_module(ITEMS[name].module)


def run_item(
    name: str,
    quick: bool = False,
    progress: Progress | None = None,
    threads: int | None = 1,
    corpus_loader: CorpusLoader | None = None,
    seeds: int | None = None,
    pmap: Callable[..., Any] | None = None,
) -> ItemResult:
    """Item ``name``'s result.  ``seeds``: a real-text item trains seeds 1..seeds (default: its own);
    ``pmap``: how an item of several independent parts (Fig. 6's panels, a text item's seeds) maps over them (default:
    one after the other here; :mod:`scansnap.service.cluster` passes one that runs them as tasks)."""
    t = time.perf_counter()
    extra: dict[str, Any] = {"corpus_loader": corpus_loader, "seeds": seeds} if ITEMS[name].corpus else {}
    module = module_of(name)
    if pmap is not None and "pmap" in inspect.signature(module.run).parameters:
        extra["pmap"] = pmap
    with torch_threads(threads):
        result: ItemResult = module.run(quick=quick, progress=progress, **extra)
    if threads is not None:
        result.notes.append(f"Ran with {threads} intra-op torch thread(s).")
    result.wall_s = time.perf_counter() - t
    return result
