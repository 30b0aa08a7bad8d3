"""What each reproduce item trains: its configs, derived from the presets (no torch here, so the
web process can show an item's work without loading the engine's trainer)."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import get_preset


def preset_config(preset: str, overrides: dict[str, Any] | None = None, kind: str = "synthetic") -> Any:
    """A preset's config (from ``kind``'s shelf) with dotted overrides (values as JSON text or Python values)."""
    cfg = get_preset(preset, kind).config
    return cfg.with_overrides(overrides) if overrides else cfg


# ----------------------------------------------------------------- Fig. 4 and Fig. 5 (Syn-Small)
FIG4_PAIRS = ((1.0, 1.0), (10.0, 1.0))  # (η_Y, η_Z): the paper's left and right panels
FIG5_ETAS = (0.1, 0.5, 1.0)


def fig4_config() -> RunConfig:
    """syn-small with the two panels' (η_Y, η_Z) as replicas (the right panel is syn-small-fast-decoder)."""
    fast = preset_config("syn-small-fast-decoder").optim
    assert (fast.eta_y, fast.eta_z) == FIG4_PAIRS[1]  # the right panel is exactly that preset
    return preset_config("syn-small", {"replicas.lr_pairs": [list(p) for p in FIG4_PAIRS]})


def fig5_config() -> RunConfig:
    """syn-small-adam-{0.1,0.5,1} as three replicas of one run."""
    for eta in FIG5_ETAS:  # the replicas are exactly these presets
        o = preset_config(f"syn-small-adam-{eta:g}").optim
        assert (o.method, o.eta_y, o.eta_z) == ("adam", eta, eta)
    return preset_config("syn-small-adam-1", {"replicas.lr_pairs": [[e, e] for e in FIG5_ETAS]})


# ----------------------------------------------------------------- Fig. 6 (Syn-Medium)
FIG6_NUM_LAST = (1, 3, 5, 10)
FIG6_QUICK_SEEDS = (1, 2, 3)


def fig6_config(num_last: int, quick: bool) -> RunConfig:
    """One Fig. 6 panel (preset syn-medium-<num_last>), final snapshot only; 3 seeds in quick mode."""
    over: dict = {"snapshots.linear_every": None, "snapshots.log_count": 0, "snapshots.max_count": 2}
    if quick:
        over["replicas.seeds"] = list(FIG6_QUICK_SEEDS)
    return preset_config(f"syn-medium-{num_last}", over)


# ----------------------------------------------------------------- Theorems 2–4
THEOREMS_MF_OVERRIDES = {
    "data.num_distinct_per_next": 10,
    "data.num_common": 10,
    "optim.eta_y": 0.01,
    "optim.eta_z": 0.01,
    "optim.steps": 3000,
}
LONG_STEPS = 10_000
LONG_PAIRS = [[2.0, 1.0], [5.0, 1.0], [10.0, 1.0]]
LONG_LAYOUTS = {
    "shared query (Thm 4 setting)": {"data.num_last": 1, "data.num_next_per_last": 2},
    "Syn-Small (own query per class)": {},
}


def theorems_applies_config() -> RunConfig:
    """The ``theorem4`` preset shortened to 2000 steps: Theorems 2–4 apply, the four run claims are judged."""
    return preset_config("theorem4", {"optim.steps": 2000})


def theorems_mf_config() -> RunConfig:
    """The T→∞ Lemma-3 mean field of §6.3/§6.4 (preset theorem4, 10 common + 10 distinct tokens)."""
    return preset_config("theorem4", THEOREMS_MF_OVERRIDES)


def theorems_long_config(layout: str) -> RunConfig:
    """A 10⁴-step sampled run of §6.9 in one of :data:`LONG_LAYOUTS`."""
    over = {
        **LONG_LAYOUTS[layout],
        "optim.steps": LONG_STEPS,
        "replicas.lr_pairs": LONG_PAIRS,
        "snapshots.linear_every": None,
        "snapshots.log_count": 81,
        "snapshots.max_count": 100,
        "name": f"snap-{layout}",
    }
    return preset_config("syn-small", over)


# ----------------------------------------------------------------- the real-text items (fig7, joma-real)
# The configs of the real-text reproduce items (no torch: the catalog sizes their progress bars).
#
# ``fig7``: presets ``text-fig7-1layer`` and ``text-fig7-3layer``; ``joma-real``: ``text-joma-real``.
# Quick mode (CPU smoke size) caps the vocabulary at 2,000 words and uses batch 10: ``fig7`` trains
# 100 steps (1 layer) and 200 steps (3 layers: its lowest layer starts to move only after ~100
# steps), ``joma-real`` 200 steps with a snapshot every 10; both measure the validation loss on 4
# windows instead of 20 (it is reported, not judged; the attention statistics use the same probe).
# Full mode trains every model at the authors' seeds 1–3 (JoMA plots their mean), quick mode seed 1.


FIG7_RUNS = (("1 layer", "text-fig7-1layer", 100), ("3 layers", "text-fig7-3layer", 200))  # label, preset, quick steps
FIG7_QUICK: dict[str, Any] = {
    "data.vocab_size": 2000,
    "optim.batch": 10,
    "snapshots.log_count": 0,
    "snapshots.max_count": 12,
    "probe.val_windows": 4,
}
JOMA_PRESET = "text-joma-real"
JOMA_QUICK: dict[str, Any] = {
    "data.vocab_size": 2000,
    "optim.batch": 10,
    "optim.steps": 200,
    "snapshots.linear_every": 10,
    "snapshots.log_count": 0,
    "probe.val_windows": 4,
}


TEXT_SEEDS = (1, 2, 3)  # the authors' seeds (JoMA's figure: the mean over seeds 1–3)


def text_seeds(quick: bool, count: int | None = None) -> tuple[int, ...]:
    """The seeds a real-text item trains: the authors' (seed 1 in quick mode), or seeds 1..``count``."""
    if count is not None:
        return tuple(range(1, count + 1))
    return TEXT_SEEDS[:1] if quick else TEXT_SEEDS


def fig7_config(preset: str, quick: bool, quick_steps: int, seed: int = 1) -> TextRunConfig:
    over = {"optim.seed": seed}
    if quick:
        over |= FIG7_QUICK | {"optim.steps": quick_steps, "snapshots.linear_every": max(1, quick_steps // 8)}
    return preset_config(preset, over, "text")


def fig7_work(quick: bool) -> int:
    return len(text_seeds(quick)) * sum(fig7_config(p, quick, q).optim.steps for _, p, q in FIG7_RUNS)


def joma_config(quick: bool, seed: int = 1) -> TextRunConfig:
    return preset_config(JOMA_PRESET, (JOMA_QUICK if quick else {}) | {"optim.seed": seed}, "text")


def joma_work(quick: bool) -> int:
    return len(text_seeds(quick)) * joma_config(quick).optim.steps
