"""The Lab's state in the URL: its :class:`~scansnap.ui.url_state.UrlState` ``LAB`` for a
:class:`~scansnap.kinds.synthetic.science.config.RunConfig` (the knobs are in :mod:`scansnap.ui.knobs`), the view of
the live area,
speed and ratio lock.

Session keys: ``lab.preset``, ``lab.cfg``, ``lab.run``, ``lab.rev``, ``lab.sig`` (:mod:`scansnap.ui.url_state`),
``lab.speed``, ``lab.lock``, ``lab.view`` (what the live area shows: n, q, replica, the scrubbed
step ``at``, the ``charts`` shown; :func:`view_from_params`), ``lab.origin`` (the run whose own
config is on screen, when one was opened by link).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.ui.chart_list import CHART_KEYS
from scansnap.paper.presets import load_presets
from scansnap.ui.knobs import DEFAULT_PRESET, LECTURE_PRESET, RATIOS, SPEEDS, STORY, UI_PARAMS, choice
from scansnap.ui.text import shown
from scansnap.ui.url_state import UrlState

ss = st.session_state
PAGE_ONLY = ("lecture", "show", "follow")  # left in the URL as they are
SCHEMA = RunConfig  # the config class of a synthetic run: the widgets' bounds
LAB = UrlState("lab", "w", "synthetic", RunConfig, load_presets, UI_PARAMS, PAGE_ONLY, DEFAULT_PRESET)
bump, wkey, stale, validate = LAB.bump, LAB.wkey, LAB.stale, LAB.validate


def init_state() -> list[str]:
    """Apply the URL when it is new to this session (a link, a reload, another page's button);
    otherwise keep the session's state.  Then write the canonical URL.  Returns problems."""
    lab = {k: v for k, v in st.query_params.to_dict().items() if k not in PAGE_ONLY}
    problems = LAB.init_state(lab, apply_params)
    write_url()
    return problems


def apply_params(params: dict[str, str]) -> list[str]:
    """Apply a link: the preset (the Lecture preset for ``?lecture=1`` alone) and its settings, or a
    stored run's own config; its speed (else the preset's narrated one); the view."""
    default = LECTURE_PRESET if ss.get("lecture") and LECTURE_PRESET in load_presets() else DEFAULT_PRESET
    link = LAB.read_link(params, default)
    preset, cfg, run, problems, origin = link.preset, link.cfg, link.run, link.problems, None
    if link.info is not None:
        preset = preset_of(cfg, preset) if "preset" not in params else preset
        origin = {"id": run, "name": link.info["name"] or run}
    valid, _ = validate(cfg)
    cfg = valid.to_dict() if valid else cfg  # canonical types (10 → 10.0) when it is a valid config
    ss["lab.preset"], ss["lab.cfg"], ss["lab.run"], ss["lab.origin"] = preset, cfg, run, origin
    ss["lab.speed"] = choice(params.get("speed"), SPEEDS, "speed", preset_speed(preset), problems)
    ss["lab.lock"] = choice(params.get("lock"), RATIOS, "lock (η_Y/η_Z)", None, problems)
    view = view_from_params(params, problems)
    whose = "this run's" if run else "this setup's"
    ss["lab.view"] = view_in_range(view, valid, whose, problems) if valid else view
    for key in [k for k in ss if str(k).startswith("live.")]:  # the view's widgets start from the link
        del ss[key]
    bump()
    return problems


def preset_of(cfg: dict[str, Any], fallback: str) -> str:
    """The preset a stored config came from (runs are named after their preset), else ``fallback``."""
    name = cfg.get("name")
    return name if isinstance(name, str) and name in load_presets() else fallback


def preset_speed(preset: str) -> Any:
    """The speed a preset is narrated at, as a speed option (``"max"`` when it has none)."""
    speed = load_presets()[preset].speed
    if speed is None or speed == STORY:
        return "max" if speed is None else STORY
    return min((s for s in SPEEDS if not isinstance(s, str)), key=lambda s: abs(float(s) - speed))


VIEW_MAX = 10**9  # an index or step in a link beyond this is refused unread


INDICATIVE = "indicative"  # ``theory=indicative``: Theorem 4's curve drawn where the theorem does not apply


def view_from_params(params: dict[str, str], problems: list[str]) -> dict[str, Any]:
    """The live area's view from a link: ``n``, ``q``, ``replica``, ``at`` (whole numbers ≥ 0; the
    live area checks them against the run), ``charts`` (chart keys) and ``theory`` (``indicative``).  A bad
    value is reported and left out (the default view is shown)."""
    view: dict[str, Any] = {}
    for key in ("n", "q", "replica", "at"):
        raw = params.get(key)
        if raw is None:
            continue
        if raw.isascii() and raw.isdigit() and len(raw) <= len(str(VIEW_MAX)) and int(raw) <= VIEW_MAX:
            view[key] = int(raw)
        else:
            problems.append(f"{key} = {shown(raw)} is not a whole number from 0 to {VIEW_MAX:,}: not applied")
    if "theory" in params:
        if params["theory"] == INDICATIVE:
            view["theory"] = INDICATIVE
        else:
            problems.append(
                f"theory = {shown(params['theory'])}: allowed is {INDICATIVE} (Theorem 4's curve drawn "
                "as an indication where the theorem does not apply): not applied"
            )
    if "charts" in params:
        keys = [k for k in params["charts"].split(",") if k]
        bad = [k for k in keys if k not in CHART_KEYS]
        if bad or not keys:
            problems.append(f"charts = {shown(params['charts'])}: allowed are {', '.join(CHART_KEYS)} (comma list)")
        else:
            view["charts"] = tuple(keys)
    return view


VIEW_RANGES = (  # view key, what it counts (one, many), how many the config has, what is shown instead
    ("n", ("next token", "next tokens"), lambda c: c.data.num_classes, "0"),
    ("q", ("query", "queries"), lambda c: c.data.num_queries, "the next token's own query"),
    ("replica", ("replica", "replicas"), lambda c: c.n_replicas, "0"),
    ("at", ("step", "steps"), lambda c: c.optim.steps, "the last stored step"),
)


def view_in_range(view: dict[str, Any], cfg: RunConfig, whose: str, problems: list[str]) -> dict[str, Any]:
    """``view`` without the indices beyond ``cfg`` (the run's config, or the setup's when no run is
    shown), each reported with what is allowed: the default view is shown in their place.  ``n``, ``q``
    and ``replica`` index from 0 (below the count); the step ``at`` runs from 0 to the last step."""
    out = dict(view)
    for key, (one, many), count, instead in VIEW_RANGES:
        value, total = out.get(key), count(cfg)
        top = total if key == "at" else total - 1
        if value is not None and value > top:
            allowed = "0" if top == 0 else f"0 to {top}"
            what = f"{total} {one if total == 1 else many}"
            problems.append(f"{key} = {value} is beyond {whose} {what} (allowed: {allowed}): showing {instead}")
            del out[key]
    return out


def canonical_params() -> dict[str, str]:
    p = LAB.own_params()
    if ss.get("lab.speed", "max") != preset_speed(ss["lab.preset"]):
        p["speed"] = str(ss["lab.speed"]) if isinstance(ss.get("lab.speed"), str) else f"{ss['lab.speed']:g}"
    if ss.get("lab.lock"):
        p["lock"] = f"{ss['lab.lock']:g}"
    for key, value in ss.get("lab.view", {}).items():
        p[key] = ",".join(value) if key == "charts" else str(value)
    return p


def write_url() -> None:
    """Write the canonical URL (never called from a run_every tick)."""
    LAB.write_url(canonical_params())


def set_view(key: str, value: Any) -> None:
    """Change one item of the view (n, q, replica, at, charts) and write it into the URL."""
    view = ss.setdefault("lab.view", {})
    if value is None:
        view.pop(key, None)
    else:
        view[key] = value
    if "lab.preset" in ss:  # on the Lab (the pickers also work alone, in tests)
        write_url()
