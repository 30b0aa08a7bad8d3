"""One implementation of a page's URL ⇄ session state table, used by every kind's page (the Lab:
:mod:`scansnap.kinds.synthetic.ui.state`, Real text: :mod:`scansnap.kinds.text.ui.state`).

The URL holds ``preset=<name>`` plus one ``<dotted.key>=<value>`` for every setting that differs from
the preset, so ``preset.config.with_overrides(params)`` rebuilds the exact config; ``run`` reopens a
stored run of the page's kind; a page adds its own view parameters.  In the session, a page's state
lives under one prefix: ``<prefix>.preset``, ``<prefix>.cfg`` (a config dict, possibly invalid: the page
says why and blocks Start), ``<prefix>.run``, ``<prefix>.rev`` (bumped on every programmatic change so
that widgets are rebuilt with the new values), ``<prefix>.sig`` (the URL last written or applied).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import streamlit as st

from scansnap.core.config import ConfigError, flatten_dotted
from scansnap.ui.kind_views import view_of
from scansnap.ui.links import link_settings
from scansnap.ui.resources import service
from scansnap.ui.text import shown

ss = st.session_state


def encode(value: Any) -> str:
    """A URL value that ``scansnap.core.config.set_dotted`` reads back as ``value``: text as is (it keeps
    text for text fields), everything else as compact JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, separators=(",", ":"))


@dataclass(frozen=True)
class Link:
    """What a link opens: its preset, the config (a stored run's own when it names one), the run and
    its stored row (None when it names none, or one that cannot open here), and the problems found."""

    preset: str
    cfg: dict[str, Any]
    run: str | None
    info: dict[str, Any] | None
    problems: list[str]


@dataclass(frozen=True)
class UrlState:
    """A page's table: its session prefix, its widget-key letter, the run kind it opens, the config
    class of that kind, its presets (name → preset with a ``.config``), and the URL parameters that are
    not config keys (``ui_params``; ``page_only`` of them are left in the URL as they are), and the
    preset a URL naming none opens."""

    prefix: str
    letter: str
    kind: str
    schema: type[Any]
    presets: Callable[[], Mapping[str, Any]]
    ui_params: tuple[str, ...]
    page_only: tuple[str, ...]
    default_preset: str

    def key(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    # -------------------------------------------------------------------------- widget revisions
    def bump(self) -> None:
        ss[self.key("rev")] = ss.get(self.key("rev"), 0) + 1

    def wkey(self, name: str) -> str:
        return f"{self.letter}{ss.get(self.key('rev'), 0)}.{name}"

    def stale(self, key: str) -> bool:
        """Whether widget ``key`` belongs to an earlier rev than the one on screen.

        After a ``bump()`` the browser can still send an event from the previous rev's widget (a
        click that landed before the rerun redrew it, or its old state re-sent with a later rerun):
        such an event carries an old value; it is ignored, and the rerun redraws the widget."""
        return not key.startswith(f"{self.letter}{ss.get(self.key('rev'), 0)}.")

    # -------------------------------------------------------------------------- pure: URL ⇄ config
    def config_params(self, preset: str, cfg: dict[str, Any]) -> dict[str, str]:
        """``preset`` + the dotted keys where ``cfg`` differs from the preset (all leaves)."""
        base = flatten_dotted(self.presets()[preset].config.to_dict())
        out = {"preset": preset}
        for key, value in flatten_dotted(cfg).items():
            if key not in base or json.dumps(base[key]) != json.dumps(value):
                out[key] = encode(value)
        return out

    def parse_params(self, params: dict[str, str], default: str | None = None) -> tuple[str, dict[str, Any], list[str]]:
        """(preset, config dict, problems) from URL params (``default``: the preset when none is named,
        else the page's): the preset's config with the link's settings that validate together
        (:func:`scansnap.ui.links.link_settings`)."""
        default = default or self.default_preset
        problems = []
        presets = self.presets()
        preset = params.get("preset", default)
        if preset not in presets:
            problems.append(f"unknown preset {shown(preset)}: using {default} (allowed: {', '.join(presets)})")
            preset = default
        cfg, found = link_settings(presets[preset].config.to_dict(), params, self.schema, self.ui_params)
        return preset, cfg, problems + found

    def validate(self, cfg: dict[str, Any]) -> tuple[Any, str | None]:
        """(the validated config, None) or (None, what is wrong)."""
        try:
            return self.schema.from_dict(cfg), None
        except ConfigError as e:
            return None, str(e)

    # -------------------------------------------------------------------------- session
    def stored_run(self, run: str, problems: list[str]) -> dict[str, Any] | None:
        """Stored run ``run`` when it is of this page's kind; else None, with a problem saying where it opens."""
        info = service().run(run)
        if info is None:
            problems.append(f"run {shown(run)} is not in the run store")
            return None
        if info["kind"] != self.kind:
            view = view_of(info)
            problems.append(f"run {shown(run)} is a {view.noun} run: {view.where}")
            return None
        return info

    def read_link(self, params: dict[str, str], default: str | None = None) -> Link:
        """The preset and settings of a link, or, when it names a stored run of this kind, that run's own config."""
        preset, cfg, problems = self.parse_params(params, default)
        run, info = params.get("run"), None
        if run:
            info = self.stored_run(run, problems)
            if info is None:
                run = None
            else:
                cfg = json.loads(info["config_json"])
        return Link(preset, cfg, run, info, problems)

    def init_state(self, params: dict[str, str], apply: Callable[[dict[str, str]], list[str]]) -> list[str]:
        """Apply the URL's ``params`` when they are new to this session (a link, a reload, another page's
        button), else keep the session's state.  Returns the problems ``apply`` found."""
        if self.key("cfg") not in ss or (params and params != ss.get(self.key("sig"))):
            return apply(params)
        return []

    def own_params(self) -> dict[str, str]:
        """The config's and the run's part of the canonical URL."""
        p = self.config_params(ss[self.key("preset")], ss[self.key("cfg")])
        if ss.get(self.key("run")):
            p["run"] = ss[self.key("run")]
        return p

    def write_url(self, params: dict[str, str]) -> None:
        """Write the canonical ``params`` (the page-only ones kept as they are); never from a run_every tick."""
        full = {**params, **{k: v for k, v in st.query_params.to_dict().items() if k in self.page_only}}
        if st.query_params.to_dict() != full:
            st.query_params.from_dict(full)
        ss[self.key("sig")] = params
