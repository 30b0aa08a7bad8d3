"""What each real-text reproduce item trains: its configs, derived from the presets (no torch here: the
catalog sizes their progress bars from them)."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import preset_config

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
