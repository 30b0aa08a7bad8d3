"""A run's settings in words, for legends, tables and axis titles: each config key's label (its knob's,
without the gloss: ``"η_Y (decoder)"`` → ``"η_Y"``), its value as a person writes it (``0.5``, ``∞``,
``off``, never ``None``), and a name for each of several runs from the settings that differ among them
(the Compare page's legend).  No Streamlit calls, no tensors."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scansnap.core.config import flatten_dotted
from scansnap.ui.kind_views import views

NONE_WORDS = {  # what an unset (None) value means, by key
    "optim.clip_norm": "off",
    "data.max_train_tokens": "whole corpus",
    "optim.epoch_steps": "one pass over the corpus",
    "snapshots.linear_every": "none",
    "replicas.lr_pairs": "one pair",
    "data.table": "generated",
    "data.psi": "generated",
}
GROUP_FROM = 10_000  # integers from here on are grouped by thousands (a thin space: no comma in a list)
THIN = "\u2009"


def knob_labels(knobs: Sequence[Any]) -> dict[str, str]:
    """Each knob's config key → its label without the gloss (``"η_Y (decoder)"`` → ``"η_Y"``), in order;
    the run's name left out."""
    return {k.key: k.label.split(" (")[0] for k in knobs if k.key != "name"}


def flat_settings(config: dict[str, Any]) -> dict[str, Any]:
    """A config as dotted keys → value, the run's name left out."""
    return {k: v for k, v in flatten_dotted(config).items() if k != "name"}


def kind_words(kind: str) -> str:
    """A kind of run in a label: its view's words (``"real text"``), else its name."""
    view = views().get(kind)
    return view.label if view else kind


def labels(kind: str) -> dict[str, str]:
    """The words for a kind's config keys, the knobs' order first (its view's ``setting_labels``)."""
    view = views().get(kind)
    return dict(view.setting_labels) if view else {}


def setting_label(key: str, kind: str) -> str:
    """The words for config ``key`` of a run of ``kind``: its knob's label without the gloss, else a
    label of its own, else its last part in words (``probe.eval_batch`` → ``"eval batch"``)."""
    return labels(kind).get(key) or key.split(".")[-1].replace("_", " ")


def phrase(key: str, value: Any, kind: str) -> str:
    """One setting in words, ``"layers = 2"`` (``"seeds = 1–3"`` for several seeds)."""
    name = setting_label(key, kind)
    if key == "replicas.seeds" and isinstance(value, list | tuple) and len(value) > 1:
        name = "seeds"
    return f"{name} = {value_words(key, value)}"


def number(v: float) -> str:
    """A number as a person writes it: ``0.5``, ``2``, ``1e-8``, ``30 000`` (a thin space, no comma)."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        n = int(v)
        return f"{n:,}".replace(",", THIN) if abs(n) >= GROUP_FROM else str(n)
    text = f"{v:.4g}"
    if "e" in text:
        mant, exp = text.split("e")
        return f"{mant}e{int(exp)}"
    return text


def seeds_words(seeds: Sequence[int]) -> str:
    """``[1]`` → ``"1"``, ``[1, 2, 3]`` → ``"1–3"``, ``[1, 5, 9]`` → ``"1/5/9"``, many → ``"12 seeds"``."""
    s = list(seeds)
    if len(s) > 1 and s == list(range(s[0], s[0] + len(s))):
        return f"{s[0]}–{s[-1]}"
    return "/".join(map(str, s)) if len(s) <= 4 else f"{len(s)} seeds"


def _values_words(values: Sequence[Any]) -> str:
    nums = sorted({float(v) for v in values})
    if len(nums) == 1:
        return number(nums[0])
    return f"{number(nums[0])} to {number(nums[-1])} ({len(nums)} values)"


def value_words(key: str, value: Any) -> str:
    """A setting's value in words: numbers compact, yes/no, ∞, what an unset value means (never "None"),
    a list by its length (seeds as a range)."""
    if value is None:
        return NONE_WORDS.get(key, "not set")
    if key == "replicas.seeds" and isinstance(value, list | tuple):
        return seeds_words(value)
    if key in ("optim.eta_y", "optim.eta_z") and isinstance(value, list | tuple):
        return _values_words(value)
    if key == "data.table" and isinstance(value, list | tuple):
        return f"{len(value)} × {len(value[0]) if value else 0} table"
    if isinstance(value, bool | int | float):
        return number(value)
    if isinstance(value, list | tuple):
        if key == "replicas.lr_pairs" and len(value) == 1:
            return "(" + ", ".join(number(v) for v in value[0]) + ")"
        return f"{len(value)} values"
    if key == "data.T" and value == "inf":
        return "∞"
    return str(value)


def shown_settings(config: dict[str, Any], kind: str) -> dict[str, Any]:
    """A config as the settings a person tells apart (dotted keys → value), the run's name left out, as
    its kind's view tells them (a real-text run's corpus as one setting; a sweep's η_Y and η_Z values)."""
    view = views().get(kind)
    return view.settings(config) if view and view.settings else flat_settings(config)


def differing(settings: Sequence[dict[str, Any]], kind: str) -> list[str]:
    """The keys whose value differs among ``settings``, the knobs' order first (what a person sets
    first: the data, the model, the optimiser), then the others by key."""
    keys = {k for s in settings for k in s}
    differ = {k for k in keys if len({json.dumps(s.get(k), sort_keys=True, default=str) for s in settings}) > 1}
    order = list(labels(kind))
    return [k for k in order if k in differ] + sorted(differ - set(order))


@dataclass(frozen=True)
class LegendRun:
    """What names a run in a legend: its id, name, kind and config (a dict, as stored)."""

    id: str
    name: str
    kind: str
    config: dict[str, Any]


def legend_names(runs: Sequence[LegendRun]) -> list[str]:
    """For each run, the settings that differ among the chosen runs of its kind, in words
    (``"corpus = notes.txt, layers = 2"``); its name when none differ; prefixed by its kind when
    runs of several kinds are chosen; the run's id added to names that would still be the same."""
    kinds = list(dict.fromkeys(r.kind for r in runs))
    out = [""] * len(runs)
    for kind in kinds:
        idx = [i for i, r in enumerate(runs) if r.kind == kind]
        settings = [shown_settings(runs[i].config, kind) for i in idx]
        keys = differing(settings, kind)
        for i, s in zip(idx, settings, strict=True):
            words = ", ".join(phrase(k, s.get(k), kind) for k in keys)
            words = words or runs[i].name or f"run {runs[i].id}"
            out[i] = f"{kind_words(kind)}: {words}" if len(kinds) > 1 else words
    seen = [out.count(name) for name in out]
    return [f"{name} (run {r.id})" if n > 1 else name for name, n, r in zip(out, seen, runs, strict=True)]
