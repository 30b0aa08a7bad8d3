"""The synthetic kind's reproduce items (Figs. 4, 5, 6, 9, Theorems 2–4, JoMA's simulation), in report
order, and what quick mode changes of them (no torch here: the web process sizes their progress bars)."""

from __future__ import annotations

from scansnap.kinds.synthetic.paper.items import configs as c
from scansnap.paper.items.catalog import ItemSpec, by_name
from scansnap.paper.presets import preset_config


def _theorems_work(quick: bool) -> int:
    n = sum(
        cfg.optim.steps for cfg in (preset_config("syn-small"), c.theorems_applies_config(), c.theorems_mf_config())
    )
    return n if quick else n + c.LONG_STEPS * len(c.LONG_LAYOUTS)


ITEMS = by_name(
    ItemSpec(
        "fig4",
        "Fig. 4: Syn-Small, SGD — c_n heat maps (η_Y = η_Z = 1 vs η_Y = 10, η_Z = 1)",
        lambda quick: c.fig4_config().optim.steps,
        f"{__name__}.fig4",
    ),
    ItemSpec(
        "fig5",
        "Fig. 5: Syn-Small, Adam — c_n for η ∈ {0.1, 0.5, 1}",
        lambda quick: c.fig5_config().optim.steps,
        f"{__name__}.fig5",
    ),
    ItemSpec(
        "fig6",
        "Fig. 6: Syn-Medium — average distinct-token entropy vs η_Y/η_Z",
        lambda quick: sum(c.fig6_config(q, quick).optim.steps for q in c.FIG6_NUM_LAST),
        f"{__name__}.fig6",
    ),
    ItemSpec("fig9", "Fig. 9: Theorem 4's B_n(t) with η_Z swept at fixed ν", lambda quick: 0, f"{__name__}.fig9"),
    ItemSpec(
        "theorems",
        "Theorems 2–4 on fresh runs (signs, relative gain, bracket, ln t → ln ln t, the snap)",
        _theorems_work,
        f"{__name__}.theorems",
    ),
    ItemSpec(
        "joma",
        "JoMA: attention entropy drops then bounces back (nonlinear) vs only drops (linear)",
        lambda quick: 0,
        f"{__name__}.joma",
    ),
)
QUICK_DIFFERENCES = (
    "fig6: seeds 1–3 instead of 1–10; a pattern reversal counts only beyond 2·SE of the difference",
    "theorems: the two 10⁴-step sampled runs of §6.9 (the snap) are skipped",
)
