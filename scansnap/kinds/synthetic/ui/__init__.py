"""The Lab: the synthetic kind's page body (URL state, actions, live area, charts, the view of one run)."""

from __future__ import annotations

from typing import Any

from scansnap.kinds.synthetic.ui.words import SETTING_LABELS, shown_settings
from scansnap.ui.kind_views import KindView
from scansnap.ui.knobs import KNOBS


def _replicas(config: dict[str, Any]) -> int:
    rep = config["replicas"]
    return len(rep["seeds"]) * len(rep.get("lr_pairs") or [0])


def _warm() -> None:
    """The Lab's live area's modules, and the P(l|n) previews of its default and lecture presets."""
    from scansnap.kinds.synthetic.ui import (
        actions,  # noqa: F401  (the imports are the point)
        live,  # noqa: F401
    )
    from scansnap.paper.presets import load_presets
    from scansnap.ui.chart_style import FONT, LECTURE_FONT
    from scansnap.ui.knobs import DEFAULT_PRESET, LECTURE_PRESET
    from scansnap.ui.page_data import p_preview

    presets = load_presets()
    for name, font in ((DEFAULT_PRESET, FONT), (LECTURE_PRESET, LECTURE_FONT), (LECTURE_PRESET, FONT)):
        if name in presets:
            p_preview(presets[name].config.data.model_dump_json(), font)


def _report(stored: Any, run_id: str) -> str:
    """The run's HTML report (its charts, verdicts and config; imported on first use)."""
    from scansnap.kinds.synthetic.ui.exports import html_report

    return html_report(stored, run_id)


def _sweep(config: dict[str, Any]) -> bool:
    return bool(config["replicas"].get("lr_pairs"))


VIEW = KindView(
    "synthetic",
    "kinds/synthetic/ui/page.py",
    "the Lab",
    "synthetic",
    "open it in the Lab",
    _replicas,
    report=_report,
    sweep=_sweep,
    export_note="The HTML report embeds plotly.js and opens offline; chart PNGs come from each chart's camera button.",
    figure="scansnap.kinds.synthetic.ui.notebook:lab_figure",
    figure_names=("c_n", "snap", "entropy", "c_n_heatmap", "z", "bracket", "loss"),
    tab="Lab",
    icon="🧪",
    url="lab",
    first_metric="entropy_distinct",
    knobs=tuple(k.key for k in KNOBS),
    setting_labels=SETTING_LABELS,
    settings=shown_settings,
    compare_note="Synthetic runs: the class mean of each run, averaged over its replicas.",
    warm=_warm,
)
