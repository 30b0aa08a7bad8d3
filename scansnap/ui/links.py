"""A link's config settings applied together (no Streamlit here; shared by the Lab and the Real text page).

Every ``<dotted.key>=<value>`` of a link is applied to the preset's config at once, then the whole
config is validated: settings that only make sense together (``model.n_heads=16&model.d_model=208``)
are both kept, whatever their order in the URL.  Only when the combination is invalid are settings
dropped, for each problem the ones behind it (those whose preset value alone fixes it; when several do,
all of them), and each problem is reported naming the settings involved; the preset's values are kept
for the dropped ones, so a link can never hand a page a config it cannot draw.
"""

from __future__ import annotations

import copy
from typing import Any

from scansnap.core.config import ConfigError, set_dotted

MAX_PARAM_CHARS = 20_000  # a URL value longer than this is refused unread (a P(l|n) table fits)
Problems = list[tuple[str, str]]  # (dotted place, line), as ConfigError.places


def link_settings(
    cfg: dict[str, Any], params: dict[str, str], config_type: type[Any], skip: tuple[str, ...]
) -> tuple[dict[str, Any], list[str]]:
    """A copy of ``cfg`` with the link's settings (``params`` but the ``skip`` keys) that ``config_type``
    validates together, and a message per problem of the ones left out."""
    kept, problems = readable(params, skip)
    for _ in range(len(kept) + 1):  # every round drops at least one setting
        _, errors = trial(cfg, kept, config_type)
        if not errors:
            break
        dropped: set[str] = set()
        for place, line in errors:
            named, drop = culprits(cfg, kept, config_type, place)
            problems.append(said(line, named, drop))
            dropped |= drop
        kept = {k: v for k, v in kept.items() if k not in dropped} if dropped else {}
    return trial(cfg, kept, config_type)[0] if kept else copy.deepcopy(cfg), problems


def readable(params: dict[str, str], skip: tuple[str, ...]) -> tuple[dict[str, str], list[str]]:
    """The settings to try (not the ``skip`` keys), and a problem for each value too long to read."""
    kept, problems = {}, []
    for key, value in params.items():
        if key in skip:
            continue
        if len(value) > MAX_PARAM_CHARS:
            problems.append(
                f"{key[:80]}: a value of {len(value):,} characters is too long (at most {MAX_PARAM_CHARS:,})"
            )
        else:
            kept[key] = value
    return kept, problems


def trial(cfg: dict[str, Any], settings: dict[str, str], config_type: type[Any]) -> tuple[dict[str, Any], Problems]:
    """``cfg`` with ``settings`` applied, and its problems (empty when ``config_type`` validates it)."""
    out = copy.deepcopy(cfg)
    for key, value in settings.items():
        try:
            set_dotted(out, key, value)
        except ConfigError as e:  # an unknown key: its own problem
            return out, [(key, str(e))]
    try:
        config_type.from_dict(out)
    except ConfigError as e:
        return out, list(e.places)
    return out, []


def related(key: str, place: str) -> bool:
    """Whether setting ``key`` lies at or under ``place``, or ``place`` under it (``""``: everything)."""
    k, p = key.split("."), place.split(".") if place else []
    return k[: len(p)] == p or p[: len(k)] == k


def culprits(
    cfg: dict[str, Any], settings: dict[str, str], config_type: type[Any], place: str
) -> tuple[list[str], set[str]]:
    """(the settings involved in the problem at ``place``, the ones to drop): of the settings at that
    place, those whose preset value alone changes the problem are involved; those whose preset value
    alone fixes it are dropped (all of them when several do: which to keep would be a guess), else every
    involved one (else every candidate)."""
    candidates = [k for k in settings if related(k, place)] or list(settings)
    before = _lines_at(trial(cfg, settings, config_type)[1], place)
    involved, fixers = [], set()
    for key in candidates:
        after = _lines_at(trial(cfg, {k: v for k, v in settings.items() if k != key}, config_type)[1], place)
        if after != before:
            involved.append(key)
        if not after:
            fixers.add(key)
    return involved or candidates, fixers or set(involved or candidates)


def _lines_at(errors: Problems, place: str) -> set[str]:
    return {line for p, line in errors if p == place}


def said(line: str, named: list[str], drop: set[str]) -> str:
    """One problem of a link: what is wrong, the settings involved, the ones ignored."""
    gone = [k[:80] for k in named if k in drop] + sorted(k[:80] for k in drop - set(named))
    if len(named) < 2:
        return f"{line} — the link's {_join(gone)} {'is' if len(gone) == 1 else 'are'} ignored"
    one = len(gone) == 1
    which = ("both" if len(gone) == 2 else "all") if set(named) == drop else _join(gone)
    kept = "value is" if one else "values are"
    ignored = f"{which} {'is' if one else 'are'} ignored (the preset's {kept} kept)"
    return f"{line} — the link's {_join([k[:80] for k in named])} do not fit together: {ignored}"


def _join(keys: list[str]) -> str:
    return keys[0] if len(keys) == 1 else f"{', '.join(keys[:-1])} and {keys[-1]}"
