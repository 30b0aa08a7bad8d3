"""The real-text kind's reproduce items (Fig. 7, JoMA on real data), in report order, and what quick mode
changes of them: CPU smoke size (no torch here: the web process sizes their progress bars)."""

from __future__ import annotations

from scansnap.kinds.text.paper.items import configs as c
from scansnap.paper.items.catalog import ItemSpec, by_name

ITEMS = by_name(
    ItemSpec(
        "fig7",
        "Fig. 7: real text — the lowest layer's attention becomes sparse (1 and 3 layers)",
        c.fig7_work,
        f"{__name__}.fig7",
        corpus=True,
    ),
    ItemSpec(
        "joma-real",
        "JoMA real data: attention entropy per layer — sparser, then denser?",
        c.joma_work,
        f"{__name__}.joma_real",
        corpus=True,
    ),
)
QUICK_DIFFERENCES = (
    "fig7: vocabulary capped at 2,000 words, batch 10, 100 steps (1 layer) and 200 steps (3 layers) instead of "
    "1,500; validation loss on 4 windows instead of 20",
    "fig7, joma-real: seed 1 instead of seeds 1–3",
    "joma-real: vocabulary 2,000, batch 10, 200 steps instead of 58,580 (20 epochs of WikiText-2), validation loss "
    "on 4 windows; layer 0's drop is judged, layer 1's drop and both rebounds (within hundredths of a nat of the "
    "threshold at this size) are n/a with their measured values",
)
