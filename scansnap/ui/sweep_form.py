"""The Sweep page's form in the session: the default sweep, or a stored sweep's own settings.

``?run=<id>`` (a link, the Runs page's *Open in Sweep*) opens that sweep: its results, and in the form
the η_Z values, ratios, seeds, steps and base preset that rebuild it
(:func:`scansnap.paper.sweeps.sweep_settings`).  Session keys: the form's widgets (``sw.base``,
``sw.ez``, ``sw.ratio``, ``sw.seeds``, ``sw.steps``), ``sweep.run`` (the sweep shown), ``sweep.opened``
(the run whose settings the form was last filled with), ``sweep.own_base`` (the config of a sweep
built on none of the presets: the form offers it as its base) and ``sweep.messages``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from scansnap.core.config import ConfigError
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.ui.state import LAB
from scansnap.paper.presets import Preset
from scansnap.paper.sweeps import SweepSettings, sweep_config, sweep_settings
from scansnap.service.facade import ServiceError
from scansnap.ui.text import shown

ss = st.session_state
ETAS = (0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0)
MAX_SEEDS, MAX_STEPS = 50, 100_000  # the form's bounds
OWN_BASE = "(own)"  # the base option of a sweep whose base config is none of the presets
Messages = list[tuple[str, str]]  # (st.warning or st.info, text)


def defaults(names: list[str]) -> dict[str, Any]:
    """The default sweep: Syn-Medium's panel, 4 η_Z × 4 ratios × 3 seeds, 100 steps."""
    base = "syn-medium-1" if "syn-medium-1" in names else names[0]
    return {
        "sw.base": base,
        "sw.ez": [0.5, 1.0, 2.0, 3.0],
        "sw.ratio": [1.0, 2.0, 5.0, 10.0],
        "sw.seeds": 3,
        "sw.steps": 100,
    }


def init_form(presets: dict[str, Preset]) -> Messages:
    """Fill the form with the sweep the URL names (or, when the form was reset by leaving the page, the
    one on screen), once; whatever is still missing with the default sweep.  Returns what to say."""
    rid = st.query_params.get("run") or ss.get("sweep.run")
    messages: Messages = []
    if rid and (rid != ss.get("sweep.opened") or "sw.ez" not in ss):
        ss["sweep.opened"] = rid
        messages = open_sweep(rid, presets)
    for key, value in defaults(list(presets)).items():
        ss.setdefault(key, value)
    if ss.get("sweep.run") and st.query_params.get("run") != ss["sweep.run"]:
        st.query_params["run"] = ss["sweep.run"]  # the link reopens the sweep on screen
    return messages


def open_sweep(rid: str, presets: dict[str, Preset]) -> Messages:
    """Show stored sweep ``rid`` and put its settings in the form; a run that is no sweep is said and dropped."""
    problems: list[str] = []
    info = LAB.stored_run(rid, problems)  # a sweep is a Lab run of many (η_Y, η_Z) pairs
    cfg = RunConfig.from_json(info["config_json"]) if info is not None else None
    if cfg is None or not cfg.replicas.lr_pairs:
        one_pair = f"run {shown(rid)} is not a sweep (it trains one (η_Y, η_Z) pair): open it in the Lab"
        what = problems[0] if problems else one_pair
        ss.pop("sweep.run", None)
        if "run" in st.query_params:
            del st.query_params["run"]
        return [("warning", f"{what}. The form shows the default sweep.")]
    ss["sweep.run"] = rid
    got = sweep_settings(cfg, {name: p.config for name, p in presets.items()})
    if got is None:
        return [
            (
                "warning",
                f"The (η_Y, η_Z) pairs of run {rid} are not an η_Z × ratio grid: its results are "
                "below, but the form cannot show them.",
            )
        ]
    return fill_form(got, cfg, rid)


def fill_form(got: SweepSettings, cfg: RunConfig, rid: str) -> Messages:
    """The form's widgets set to ``got``; a note for each setting the form shows differently."""
    ss["sweep.own_base"] = None if got.base else cfg
    ss["sw.base"] = got.base or OWN_BASE
    ss["sw.ez"], ss["sw.ratio"] = got.eta_zs, got.ratios
    ss["sw.seeds"], ss["sw.steps"] = min(len(got.seeds), MAX_SEEDS), min(got.steps, MAX_STEPS)
    notes: Messages = [("info", f"The form shows the settings of sweep {rid}.")]
    if got.base is None:
        notes.append(("info", f"Sweep {rid} was not built on a preset: its own config is the form's base."))
    if got.seeds != list(range(1, len(got.seeds) + 1)):
        notes.append(("info", f"Sweep {rid} trained seeds {got.seeds[:8]}: the form trains seeds 1, 2, …"))
    if len(got.seeds) > MAX_SEEDS or got.steps > MAX_STEPS:
        notes.append(
            (
                "info",
                f"Sweep {rid} trained {len(got.seeds)} seeds × {got.steps:,} steps: the form "
                f"allows at most {MAX_SEEDS} seeds and {MAX_STEPS:,} steps.",
            )
        )
    return notes


def base_options(names: list[str]) -> list[str]:
    """The presets, and the opened sweep's own base when it is none of them."""
    return [*names, OWN_BASE] if ss.get("sweep.own_base") is not None else names


def base_config(name: str, presets: dict[str, Preset]) -> RunConfig:
    return ss["sweep.own_base"] if name == OWN_BASE else presets[name].config


def with_current(options: tuple[float, ...] | list[float], key: str) -> list[float]:
    """A multiselect's options plus the values it holds (a stored sweep may use others)."""
    return sorted({*options, *ss.get(key, [])})


def checked_config(
    base: str,
    presets: dict[str, Preset],
    eta_zs: list[float],
    ratios: list[float],
    n_seeds: int,
    steps: int,
    check: Callable[[RunConfig], object],
) -> tuple[RunConfig | None, str | None]:
    """The sweep's config (η_Z values × ratios × seeds 1..n_seeds on the base) once it passes
    ``check`` (refused before Run is pressed, with the estimate and the limit), else the reason."""
    try:
        if not eta_zs or not ratios:
            raise ConfigError("pick at least one η_Z value and one ratio")
        cfg = sweep_config(base_config(base, presets), eta_zs, ratios, list(range(1, n_seeds + 1)), steps)
        check(cfg)
    except (ConfigError, ServiceError) as e:
        return None, str(e)
    return cfg, None
