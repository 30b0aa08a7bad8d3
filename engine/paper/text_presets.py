"""Named real-text presets: ``assets/presets/text/<name>.json`` = {title, order, description, config}
with a :class:`~engine.core.text.config.TextRunConfig` (a folder of its own, so the synthetic
preset loader in ``engine.paper.presets`` never sees them)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.core.config import ConfigError
from engine.core.text.config import TextRunConfig

TEXT_PRESET_DIR = Path(__file__).resolve().parents[2] / "assets" / "presets" / "text"


@dataclass(frozen=True)
class TextPreset:
    name: str
    title: str
    description: str
    config: TextRunConfig
    order: int = 100


def _read(path: Path) -> TextPreset:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        cfg = TextRunConfig.from_dict(raw["config"])
        order = raw.get("order", 100)
        if not isinstance(order, int) or isinstance(order, bool):
            raise ValueError(f"order must be an integer, got {order!r}")
    except (ConfigError, KeyError, TypeError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise ConfigError(f"text preset {path.name} is invalid: {e}") from None
    return TextPreset(path.stem, raw.get("title", path.stem), raw.get("description", ""), cfg, order)


@lru_cache(maxsize=1)
def load_text_presets(directory: str = str(TEXT_PRESET_DIR)) -> dict[str, TextPreset]:
    """All text presets, sorted by ``order`` then name; a malformed file raises ConfigError naming it."""
    presets = [_read(p) for p in sorted(Path(directory).glob("*.json"))]
    return {p.name: p for p in sorted(presets, key=lambda p: (p.order, p.name))}


def get_text_preset(name: str) -> TextPreset:
    presets = load_text_presets()
    if name not in presets:
        raise ConfigError(f"unknown text preset {name!r}; available: {', '.join(presets)}")
    return presets[name]
