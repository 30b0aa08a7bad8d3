"""A synthetic run's settings in words (the Compare page's legends, tables, axis titles): each config key's
label, and a sweep's (η_Y, η_Z) pairs told apart as its η_Y and its η_Z values."""

from __future__ import annotations

from typing import Any

from scansnap.ui.knobs import KNOBS
from scansnap.ui.settings_words import flat_settings, knob_labels

SETTING_LABELS = knob_labels(KNOBS) | {  # the knobs' order first, then the settings no knob shows
    "data.table": "P(l|n) table",
    "data.psi": "query of each next token ψ",
    "replicas.lr_pairs": "(η_Y, η_Z) pairs",
}


def shown_settings(config: dict[str, Any]) -> dict[str, Any]:
    """The settings a person tells apart: a sweep's (η_Y, η_Z) pairs as its η_Y values and its η_Z values."""
    flat = flat_settings(config)
    pairs = flat.get("replicas.lr_pairs")
    if isinstance(pairs, list | tuple) and pairs:
        flat["optim.eta_y"] = sorted({float(p[0]) for p in pairs})
        flat["optim.eta_z"] = sorted({float(p[1]) for p in pairs})
        flat.pop("replicas.lr_pairs")
    return flat
