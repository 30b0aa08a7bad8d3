"""The reproduce items: names, titles and the optimiser steps each takes (no torch here).

``ITEMS`` lists the items in report order.  ``quick=True`` is the CI mode: Fig. 6 with 3 seeds
(noise allowance 2·SE), the theorems item without the two 10⁴-step snap runs, and the real-text
items (``fig7``, ``joma-real``) at CPU smoke size (:mod:`scansnap.paper.items.configs`); every
other item is identical.  :mod:`scansnap.paper.items.runner` runs them; an item with ``corpus=True``
trains on real text and is given a corpus loader by the service layer (the paper layer reads no
files).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scansnap.paper.items import configs as c


@dataclass(frozen=True)
class ItemSpec:
    name: str
    title: str
    work: Callable[[bool], int]  # optimiser steps of the item (quick mode or not), for progress bars
    corpus: bool = False  # trains on real text: run(..., corpus_loader=...) needs a loader


def _theorems_work(quick: bool) -> int:
    n = sum(
        cfg.optim.steps for cfg in (c.preset_config("syn-small"), c.theorems_applies_config(), c.theorems_mf_config())
    )
    return n if quick else n + c.LONG_STEPS * len(c.LONG_LAYOUTS)


ITEMS: dict[str, ItemSpec] = {
    s.name: s
    for s in (
        ItemSpec(
            "fig4",
            "Fig. 4: Syn-Small, SGD — c_n heat maps (η_Y = η_Z = 1 vs η_Y = 10, η_Z = 1)",
            lambda quick: c.fig4_config().optim.steps,
        ),
        ItemSpec(
            "fig5", "Fig. 5: Syn-Small, Adam — c_n for η ∈ {0.1, 0.5, 1}", lambda quick: c.fig5_config().optim.steps
        ),
        ItemSpec(
            "fig6",
            "Fig. 6: Syn-Medium — average distinct-token entropy vs η_Y/η_Z",
            lambda quick: sum(c.fig6_config(q, quick).optim.steps for q in c.FIG6_NUM_LAST),
        ),
        ItemSpec("fig9", "Fig. 9: Theorem 4's B_n(t) with η_Z swept at fixed ν", lambda quick: 0),
        ItemSpec(
            "theorems",
            "Theorems 2–4 on fresh runs (signs, relative gain, bracket, ln t → ln ln t, the snap)",
            _theorems_work,
        ),
        ItemSpec(
            "joma", "JoMA: attention entropy drops then bounces back (nonlinear) vs only drops (linear)", lambda q: 0
        ),
        ItemSpec(
            "fig7",
            "Fig. 7: real text — the lowest layer's attention becomes sparse (1 and 3 layers)",
            c.fig7_work,
            corpus=True,
        ),
        ItemSpec(
            "joma-real",
            "JoMA real data: attention entropy per layer — sparser, then denser?",
            c.joma_work,
            corpus=True,
        ),
    )
}
QUICK_DIFFERENCES = (
    "fig6: seeds 1–3 instead of 1–10; a pattern reversal counts only beyond 2·SE of the difference",
    "theorems: the two 10⁴-step sampled runs of §6.9 (the snap) are skipped",
    "fig7: vocabulary capped at 2,000 words, batch 10, 100 steps (1 layer) and 200 steps (3 layers) instead of "
    "1,500; validation loss on 4 windows instead of 20",
    "fig7, joma-real: seed 1 instead of seeds 1–3",
    "joma-real: vocabulary 2,000, batch 10, 200 steps instead of 58,580 (20 epochs of WikiText-2), validation loss "
    "on 4 windows; layer 0's drop is judged, layer 1's drop and both rebounds (within hundredths of a nat of the "
    "threshold at this size) are n/a with their measured values",
)


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
