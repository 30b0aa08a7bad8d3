"""Named presets: ``assets/presets/<name>.json`` = {title, order, description, speed (optional steps/s),
config}."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.core.config import ConfigError, RunConfig

PRESET_DIR = Path(__file__).resolve().parents[2] / "assets" / "presets"


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    config: RunConfig
    order: int = 100
    speed: float | None = None  # steps/s a lecture narrates at (None: as fast as it goes)


@lru_cache(maxsize=1)
def load_presets(directory: str = str(PRESET_DIR)) -> dict[str, Preset]:
    """All presets, sorted by their ``order``; a malformed file raises ConfigError naming it."""
    out = []
    for path in sorted(Path(directory).glob("*.json")):
        try:
            raw = json.loads(path.read_text())
            if not isinstance(raw, dict):
                raise TypeError("not a JSON object")
            cfg = RunConfig.from_dict(raw["config"])
            try:
                order = int(raw.get("order", 100))
            except (TypeError, ValueError):
                raise ValueError(f"order must be an integer, got {raw['order']!r}") from None
            speed = _speed(raw.get("speed"))
        except (ConfigError, KeyError, TypeError, ValueError) as e:  # JSONDecodeError is a ValueError
            raise ConfigError(f"preset {path.name} is invalid: {e}") from None
        out.append(Preset(path.stem, raw.get("title", path.stem), raw.get("description", ""), cfg, order, speed))
    return {p.name: p for p in sorted(out, key=lambda p: (p.order, p.name))}


def _speed(value: object) -> float | None:
    """A preset's narrated speed: a number of steps/s > 0, or absent."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ValueError(f"speed must be a number of steps/s > 0, got {value!r}")
    return float(value)


def get_preset(name: str) -> Preset:
    presets = load_presets()
    if name not in presets:
        raise ConfigError(f"unknown preset {name!r}; available: {', '.join(presets)}")
    return presets[name]
