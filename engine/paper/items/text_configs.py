"""The configs of the real-text reproduce items (no torch: the catalog sizes their progress bars).

``fig7``: presets ``text-fig7-1layer`` and ``text-fig7-3layer``; ``joma-real``: ``text-joma-real``.
Quick mode (CPU smoke size) caps the vocabulary at 2,000 words and uses batch 10: ``fig7`` trains
100 steps (1 layer) and 200 steps (3 layers: its lowest layer starts to move only after ~100
steps), ``joma-real`` 200 steps with a snapshot every 10; both measure the validation loss on 4
windows instead of 20 (it is reported, not judged; the attention statistics use the same probe).
"""

from __future__ import annotations

from typing import Any

from engine.core.text.config import TextRunConfig
from engine.paper.text_presets import get_text_preset

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


def preset_text_config(preset: str, overrides: dict[str, Any] | None = None) -> TextRunConfig:
    cfg = get_text_preset(preset).config
    return cfg.with_overrides(overrides) if overrides else cfg


def fig7_config(preset: str, quick: bool, quick_steps: int) -> TextRunConfig:
    if not quick:
        return preset_text_config(preset)
    over = FIG7_QUICK | {"optim.steps": quick_steps, "snapshots.linear_every": max(1, quick_steps // 8)}
    return preset_text_config(preset, over)


def fig7_work(quick: bool) -> int:
    return sum(fig7_config(p, quick, q).optim.steps for _, p, q in FIG7_RUNS)


def joma_config(quick: bool) -> TextRunConfig:
    return preset_text_config(JOMA_PRESET, JOMA_QUICK if quick else None)


def joma_work(quick: bool) -> int:
    return joma_config(quick).optim.steps
