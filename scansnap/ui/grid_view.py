"""The Sweep page's "Any knob" tab: a grid over any config keys × seeds (one stored run per cell, as
``python -m scansnap sweep`` trains them), the paper's open questions as one-click grids, and the grid's
final metrics side by side (:mod:`scansnap.ui.grid_form` holds its form and URL)."""

from __future__ import annotations

from typing import Any

import streamlit as st

from scansnap.paper.findings import GridAxis, grid_finding
from scansnap.paper.presets import SHELVES, Preset, load_presets
from scansnap.service.facade import TERMINAL, duration
from scansnap.ui import charts_pages, grid_form
from scansnap.ui.errors import guarded, show_callback_error
from scansnap.ui.kind_views import views
from scansnap.ui.progress import run_progress
from scansnap.ui.resources import service
from scansnap.ui.result_words import column_label, column_unit, column_what, progress_text, summary_labels
from scansnap.ui.session import actor
from scansnap.ui.settings_words import setting_label
from scansnap.ui.text import plain
from scansnap.ui.widgets import font, plot_ui

ss = st.session_state


def all_presets() -> dict[str, Preset]:
    """Every preset of every kind's shelf, by name."""
    return {name: p for kind in SHELVES for name, p in load_presets(kind).items()}


@guarded
def launch(cfgs: list[Any], names: list[str], keys: list[str]) -> None:
    grid_form.show_grid(service().submit_grid(cfgs, names, actor()), keys)


def form(presets: dict[str, Preset]) -> tuple[list[Any], list[str], list[str]] | None:
    """The form; the grid's configs, cell names and axis keys, or None (the reason shown)."""
    st.caption("The paper's open questions (its §8), as grids of real-text runs:")
    cols = st.columns(len(grid_form.OPEN_QUESTIONS))
    for col, q in zip(cols, grid_form.OPEN_QUESTIONS, strict=True):
        col.button(q.label, key=f"gr.q.{q.label}", on_click=grid_form.fill, args=(q,), help=q.why)
    c = st.columns([2, 3, 1])
    title = {k: p.title for k, p in presets.items()}
    base = c[0].selectbox("the grid's base preset", list(presets), format_func=title.__getitem__, key="gr.base")
    kind = next(k for k in SHELVES if base in load_presets(k))
    examples = ", ".join(views()[kind].knobs[:12])
    c[1].text_area(
        "axes, one per line: KEY=V1,V2,...",
        key="gr.axes",
        height=100,
        help=f"any config key of the base preset's kind; e.g. {examples}",
    )
    c[2].text_input("seeds of every cell", key="gr.seeds", help="a range or a list: 1-3, or 1,5,9")
    axes = grid_form.axis_lines(ss["gr.axes"])
    try:
        cfgs, names = service().grid_configs(presets[base].config, axes, ss["gr.seeds"])
        seconds = sum(service().expected_seconds(cfg) for cfg in cfgs)
    except Exception as e:  # ServiceError: what is wrong and what is allowed
        st.error(plain(str(e)), icon="🚫")
        return None
    keys = [a.split("=")[0].strip() for a in axes]
    slots = service().schedule().slots
    st.caption(
        f"{len(cfgs)} runs ({' × '.join(str(len(a.split('=', 1)[1].split(','))) for a in axes) or '1'} cells × "
        f"seeds {plain(ss['gr.seeds'])}), about {duration(seconds)} of training: "
        f"{duration(seconds / max(1, min(slots, len(cfgs))))} on this server's {slots} training slots."
    )
    return cfgs, names, keys


def finding(summary: Any, keys: list[str], metric: str, kind: str) -> str | None:
    """What the grid's finished runs show about ``metric`` along its axes, in one sentence (said as
    "so far" while runs still train)."""
    finished = summary[summary["status"] == "finished"]
    axes = [GridAxis(k, setting_label(k, kind)) for k in keys if k in summary.columns]
    said = grid_finding(finished, axes, metric, column_what(metric), column_unit(metric))
    if said is None or len(finished) == len(summary):
        return said
    return f"So far ({len(finished)} of {len(summary)} runs finished): {said[0].lower()}{said[1:]}"


def results(run_ids: list[str], keys: list[str]) -> None:
    """The grid's progress and time left, its final metrics per cell as a chart, one sentence on what
    they show, and a table, all in words."""
    for rid in run_ids:
        service().watch(rid)  # a run that no page shows pauses itself (SCANSNAP_IDLE_PAUSE_S)
    summary = service().grid_summary(run_ids, keys)
    if summary.empty:
        st.warning("none of this grid's runs is in the store")
        return
    infos = [info for rid in summary["run"] if (info := service().run(rid)) is not None]
    runs = [run_progress(info, service().status(info["id"])) for info in infos]
    kind = infos[0]["kind"] if infos else ""
    done = sum(r.ended for r in runs)
    st.progress(done / max(1, len(runs)), text=progress_text(runs, service().schedule().slots))
    metrics = [c for c in summary.columns if c not in {*keys, "seed", "run", "status"}]
    if metrics:
        first = views()[kind].first_metric if kind in views() else None  # a per-layer one: its first layer's
        default = next((m for m in metrics if first and m.split("@")[0] == first), metrics[0])
        metric = st.selectbox(
            "metric", metrics, index=metrics.index(default), key="gr.metric", format_func=column_label
        )
        plot_ui(charts_pages.grid_chart(summary, keys, metric, font=font(), kind=kind), "gr-chart", "grid-" + metric)
        said = finding(summary, keys, metric, kind)
        if said:
            st.markdown(
                plain(said),
                help="From the finished runs' final values, the mean over seeds per cell: "
                "a change within 5 % of the largest value (or two standard errors over seeds) counts as "
                "none.",
            )
    words = summary_labels(list(summary.columns), keys, kind)
    st.dataframe(summary, hide_index=True, column_config={c: st.column_config.Column(w) for c, w in words.items()})
    if done < len(summary):
        st.caption("The chart and the table fill in as the runs end; each run is also on the Runs page.")


def grid_section() -> None:
    presets = all_presets()
    grid_form.init_form(list(presets))
    ids, keys, warnings = grid_form.grid_from_url()
    for w in warnings:
        st.warning(plain(w))
    if ids and ids != ss.get("grid.runs"):
        ss["grid.runs"], ss["grid.keys"] = ids, keys
    made = form(presets)
    st.button(
        "▶ Run grid", type="primary", disabled=made is None, key="gr.start", on_click=launch, args=made or ([], [], [])
    )
    show_callback_error()
    run_ids = ss.get("grid.runs")
    if run_ids:
        live = any((s := service().status(r)) is not None and s.status not in TERMINAL for r in run_ids)
        st.fragment(results, run_every=1.0 if live else None)(run_ids, ss.get("grid.keys", []))
