"""How the pages show a run of each kind: the ``ui.VIEW`` of each kind's package (:mod:`scansnap.registry`;
its service side: :mod:`scansnap.service.run_kinds`): the page that opens it, how many models it trains side by side,
whether it has an HTML report, what its export holds, how the Compare page names its runs and their
settings (:mod:`scansnap.ui.settings_words`), and its figures outside the dashboard (``figure``:
``"module:function"`` taking the facade's stored runs, the run id, a name of ``figure_names`` and the view's
options, returning the page's Plotly figure).  A kind with no view registered is listed
and exported, with nothing to open it in."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from scansnap.registry import kind_packages, kind_part


def one_model(_config: dict[str, Any]) -> int:
    return 1


def no_sweep(_config: dict[str, Any]) -> bool:
    return False


@dataclass(frozen=True)
class KindView:
    name: str
    page: str | None = None  # the page that opens a stored run of the kind (``?run=<id>``)
    page_title: str = ""  # its name on the "Open in …" button
    noun: str = ""  # what a run of the kind is called in a sentence ("a real-text run")
    where: str = "no page opens it"  # where to open one, as said to someone on another page
    replicas: Callable[[dict[str, Any]], int] = one_model  # models trained side by side, from the config
    report: Callable[[Any, str], str] | None = None  # its HTML report (the stored runs, a run id → HTML)
    sweep: Callable[[dict[str, Any]], bool] = no_sweep  # a sweep the Sweep page opens, from the config
    export_note: str = "The zips hold the run's config and tables (docs/explore.md: export schema)."
    figure: str | None = None
    figure_names: tuple[str, ...] = ()
    tab: str = ""  # its page's title in the navigation
    icon: str = ""  # its page's icon in the navigation
    url: str = ""  # its page's URL path
    words: str = ""  # the kind in a label ("real text"; its name when empty)
    knobs: tuple[str, ...] = ()  # the config keys its page's knobs set, in their order
    first_metric: str | None = None  # the metric the Compare page shows first
    setting_labels: Mapping[str, str] = field(default_factory=dict)  # config keys in words, the knobs' order
    settings: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # a config as the settings told apart
    compare_note: str = ""  # how the Compare page draws a run of the kind, in a sentence
    warm: Callable[[], None] | None = None  # what its page's first visitor would wait for, done at start-up

    @property
    def label(self) -> str:
        return self.words or self.name

    def models(self, info: dict[str, Any]) -> int:
        return self.replicas(json.loads(info["config_json"]))

    def is_sweep(self, info: dict[str, Any]) -> bool:
        return self.sweep(json.loads(info["config_json"]))


_VIEWS: dict[str, KindView] = {}  # each listed kind's package → its ``ui.VIEW``, once read


def views() -> dict[str, KindView]:
    """Each listed kind's view by its store name (each kind's ``ui.VIEW``, read once per package on first
    use: a kind's page parts import this module)."""
    for package in kind_packages():
        if package not in _VIEWS:
            view = kind_part(package, "ui", "VIEW")
            if isinstance(view, KindView):  # a kind without one is asked again (cheap: its modules are loaded)
                _VIEWS[package] = view
    return {v.name: v for p in kind_packages() if (v := _VIEWS.get(p)) is not None}


def view_of(info: dict[str, Any]) -> KindView:
    """The view of a stored run's kind (a bare one for a kind with none registered)."""
    return views().get(info.get("kind", ""), KindView(info.get("kind", ""), noun=info.get("kind", "")))
