"""Named presets, one shelf per kind of run: ``scansnap/assets/presets/<name>.json`` for the synthetic kind,
``scansnap/assets/presets/text/<name>.json`` for real text; each file is {title, order, description, speed
(optional steps/s), config}, its config read with the kind's config class, or a variant of another
preset: {title, order, description, variant_of, overrides}.  A kind has a shelf where its science's
``PRESET_SHELF`` names one (:mod:`scansnap.registry`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from scansnap.core.config import ConfigError
from scansnap.registry import kind_packages, kind_part

PRESET_DIR = Path(__file__).resolve().parents[1] / "assets" / "presets"
STORY_SPEED = "story"  # a preset played in story time (the service's STORY: scansnap/service/pacing.py)


@dataclass(frozen=True)
class Shelf:
    """A kind's presets: the folder they are read from, its config class, and what one is called."""

    folder: Path
    config: Any  # a config class with ``from_dict``
    what: str


def _shelves() -> dict[str, Shelf]:
    """Each kind's shelf, by the kind's name (the last part of its package's name)."""
    shelves = {}
    for package in kind_packages():
        spec = kind_part(package, "science", "PRESET_SHELF")
        if spec is not None:
            folder, config, what = spec
            shelves[package.rsplit(".", 1)[-1]] = Shelf(PRESET_DIR / folder, config, what)
    return shelves


SHELVES: dict[str, Shelf] = _shelves()


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    config: Any  # the kind's config (a RunConfig on the synthetic shelf)
    order: int = 100
    speed: float | str | None = None  # steps/s a lecture narrates at, "story" (story time), None (as fast as it goes)


def read_preset(path: Path, shelf: Shelf, bases: dict[str, Preset] | None = None) -> Preset:
    """One preset file; a malformed one raises ConfigError naming it.  A variant (``variant_of``: the
    name of a preset on the same shelf, with dotted ``overrides``) is its base's config with those
    overrides and its own name, so the two never drift apart."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict):
            raise TypeError("not a JSON object")
        if "variant_of" in raw:
            cfg = _variant_config(path.stem, raw, bases or {})
        else:
            cfg = shelf.config.from_dict(raw["config"])
        try:
            order = int(raw.get("order", 100))
        except (TypeError, ValueError):
            raise ValueError(f"order must be an integer, got {raw['order']!r}") from None
        speed = _speed(raw.get("speed"))
    except (ConfigError, KeyError, TypeError, ValueError) as e:  # JSONDecodeError is a ValueError
        raise ConfigError(f"{shelf.what} {path.name} is invalid: {e}") from None
    return Preset(path.stem, raw.get("title", path.stem), raw.get("description", ""), cfg, order, speed)


def _variant_config(name: str, raw: dict[str, Any], bases: dict[str, Preset]) -> Any:
    base, overrides = raw["variant_of"], raw.get("overrides", {})
    if base not in bases:
        raise ValueError(f"variant_of {base!r} is not a preset of this shelf (a variant's base is no variant)")
    if not isinstance(overrides, dict):
        raise TypeError("overrides must be an object of dotted keys")
    return bases[base].config.with_overrides({**overrides, "name": name})


def is_variant(path: Path) -> bool:
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False  # read_preset says what is wrong with it
    return isinstance(raw, dict) and "variant_of" in raw


@lru_cache(maxsize=4)
def load_presets(kind: str = "synthetic", directory: str | None = None) -> dict[str, Preset]:
    """A kind's presets (from ``directory`` instead of its folder when given), sorted by ``order``
    then name; a malformed file raises ConfigError naming it."""
    shelf = SHELVES[kind]
    paths = sorted(Path(directory or shelf.folder).glob("*.json"))
    bases = {p.stem: read_preset(p, shelf) for p in paths if not is_variant(p)}
    variants = [read_preset(p, shelf, bases) for p in paths if is_variant(p)]
    return {p.name: p for p in sorted([*bases.values(), *variants], key=lambda p: (p.order, p.name))}


def _speed(value: object) -> float | str | None:
    """A preset's narrated speed: a number of steps/s > 0, "story" (story time: scansnap/service/pacing.py),
    or absent."""
    if value is None or value == STORY_SPEED:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value < float("inf"):
        raise ValueError(f"speed must be a number of steps/s > 0 or {STORY_SPEED!r}, got {value!r}")
    return float(value)


def get_preset(name: str, kind: str = "synthetic") -> Preset:
    presets = load_presets(kind)
    if name not in presets:
        raise ConfigError(f"unknown {SHELVES[kind].what} {name!r}; available: {', '.join(presets)}")
    return presets[name]


def any_preset(name: str) -> Preset:
    """The preset ``name`` from whichever kind's shelf holds it (the shelves in the registry's order)."""
    for kind in SHELVES:
        if name in load_presets(kind):
            return load_presets(kind)[name]
    every = [n for kind in SHELVES for n in load_presets(kind)]
    raise ConfigError(f"unknown preset {name!r}; available: {', '.join(every)}")


def preset_config(preset: str, overrides: dict[str, Any] | None = None, kind: str = "synthetic") -> Any:
    """A preset's config (from ``kind``'s shelf) with dotted overrides (values as JSON text or Python values)."""
    cfg = get_preset(preset, kind).config
    return cfg.with_overrides(overrides) if overrides else cfg
