"""How the pages show a run of each kind: the ``ui.VIEW`` of each kind's package (:mod:`scansnap.registry`;
its service side: :mod:`scansnap.service.run_kinds`): the page that opens it, how many models it trains side by side,
whether it has an HTML report, what its export holds, and its figures outside the dashboard (``figure``:
``"module:function"`` taking the facade's stored runs, the run id, a name of ``figure_names`` and the view's
options, returning the page's Plotly figure).  A kind with no view registered is listed
and exported, with nothing to open it in."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
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
    report: bool = False  # an HTML report of its charts
    sweep: Callable[[dict[str, Any]], bool] = no_sweep  # a sweep the Sweep page opens, from the config
    export_note: str = "The zips hold the run's config and tables (docs/explore.md: export schema)."
    figure: str | None = None
    figure_names: tuple[str, ...] = ()

    def models(self, info: dict[str, Any]) -> int:
        return self.replicas(json.loads(info["config_json"]))

    def is_sweep(self, info: dict[str, Any]) -> bool:
        return self.sweep(json.loads(info["config_json"]))


_VIEWS: dict[str, KindView] = {}
_READ: set[str] = set()  # the kinds' packages whose ``ui.VIEW`` is in _VIEWS


def views() -> dict[str, KindView]:
    """Each kind's view by its store name (each kind's ``ui.VIEW``, read once per package on first use: a
    kind's page parts import this module)."""
    for package in kind_packages():
        if package not in _READ:
            view = kind_part(package, "ui", "VIEW")
            if isinstance(view, KindView):  # a kind without one is asked again (cheap: its modules are loaded)
                _VIEWS.setdefault(view.name, view)
                _READ.add(package)
    return _VIEWS


def view_of(info: dict[str, Any]) -> KindView:
    """The view of a stored run's kind (a bare one for a kind with none registered)."""
    return views().get(info.get("kind", ""), KindView(info.get("kind", ""), noun=info.get("kind", "")))
