"""The reproduce items: names, titles and the optimiser steps each takes (no torch here).

Each kind lists its items in its claims layer (``<kind>.paper.items``: ``ITEMS``, a dict of
:class:`ItemSpec`, and ``QUICK_DIFFERENCES``); :data:`ITEMS` is every kind's, in the registry's order of
the kinds, then each kind's own order (the report's).  ``quick=True`` is the CI mode: each kind's
``QUICK_DIFFERENCES`` says what it changes (e.g. fewer seeds, real text at CPU smoke size).
:mod:`scansnap.paper.items.runner` runs them; an item with ``corpus=True`` trains on real text and is
given a corpus loader by the service layer (the claims layer reads no files).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache

from scansnap.registry import kind_packages, kind_part


@dataclass(frozen=True)
class ItemSpec:
    name: str
    title: str
    work: Callable[[bool], int]  # optimiser steps of the item (quick mode or not), for progress bars
    module: str  # the module whose ``run(quick, progress, ...)`` runs it (imported only then)
    corpus: bool = False  # trains on real text: run(..., corpus_loader=...) needs a loader


def by_name(*specs: ItemSpec) -> dict[str, ItemSpec]:
    """A kind's items by name, in the order given (the report's)."""
    return {s.name: s for s in specs}


@cache
def _kinds_items() -> tuple[dict[str, ItemSpec], tuple[str, ...]]:
    """Every kind's items and quick-mode differences, read once (each kind's ``paper.items``)."""
    items: dict[str, ItemSpec] = {}
    quick: list[str] = []
    for package in kind_packages():
        items |= kind_part(package, "paper.items", "ITEMS") or {}
        quick += kind_part(package, "paper.items", "QUICK_DIFFERENCES") or ()
    return items, tuple(quick)


class _Items(Mapping[str, ItemSpec]):
    """:data:`ITEMS`: read from the kinds on first use (a kind's item list imports this module)."""

    def __getitem__(self, name: str) -> ItemSpec:
        return _kinds_items()[0][name]

    def __iter__(self) -> Iterator[str]:
        return iter(_kinds_items()[0])

    def __len__(self) -> int:
        return len(_kinds_items()[0])


ITEMS: Mapping[str, ItemSpec] = _Items()


def quick_differences() -> tuple[str, ...]:
    """What quick mode changes, item by item, every kind's lines in the order of :data:`ITEMS`."""
    return _kinds_items()[1]


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
