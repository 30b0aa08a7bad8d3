"""How the pages show a run of each kind, registered once per kind (the service side of a kind is
:mod:`scansnap.service.run_kinds`): the page that opens it, how many models it trains side by side,
whether it has an HTML report, what its export holds, and its figures outside the dashboard (``figure``:
``"module:function"`` taking the facade's stored runs, the run id, a name of ``figure_names`` and the view's
options, returning the page's Plotly figure).  A kind with no view registered is listed
and exported, with nothing to open it in."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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


VIEWS: dict[str, KindView] = {}


def register_view(view: KindView) -> KindView:
    if view.name in VIEWS:
        raise ValueError(f"run kind {view.name!r} has a view already")
    VIEWS[view.name] = view
    return view


def view_of(info: dict[str, Any]) -> KindView:
    """The view of a stored run's kind (a bare one for a kind with none registered)."""
    return VIEWS.get(info.get("kind", ""), KindView(info.get("kind", ""), noun=info.get("kind", "")))


def _replicas(config: dict[str, Any]) -> int:
    rep = config["replicas"]
    return len(rep["seeds"]) * len(rep.get("lr_pairs") or [0])


def _sweep(config: dict[str, Any]) -> bool:
    return bool(config["replicas"].get("lr_pairs"))


register_view(
    KindView(
        "synthetic",
        "app_pages/lab.py",
        "the Lab",
        "synthetic",
        "open it in the Lab",
        _replicas,
        report=True,
        sweep=_sweep,
        export_note="The HTML report embeds plotly.js and opens offline; chart PNGs come from each chart's camera "
        "button.",
        figure="scansnap.kinds.synthetic.ui.notebook:lab_figure",
        figure_names=("c_n", "snap", "entropy", "c_n_heatmap", "z", "bracket", "loss"),
    )
)
register_view(
    KindView(
        "text",
        "app_pages/text.py",
        "Real text",
        "real-text",
        "open it on the Real text page",
        export_note="A real-text run's zip holds config.json, scalars (step, layer, head, metric, value) and "
        "attn_maps.npz (docs/explore.md: export schema).",
        figure="scansnap.kinds.text.ui.notebook:text_figure",
        figure_names=("attn_entropy", "groups", "loss", "attn_map"),
    )
)
