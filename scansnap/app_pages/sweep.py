"""Sweep: η_Z values × η_Y/η_Z ratios × seeds trained as ONE batched replica job (paper Fig. 6 layout);
and a grid of runs over any knob (scansnap/ui/grid_view.py)."""

import json
from typing import TYPE_CHECKING

import streamlit as st

from scansnap.paper.findings import sweep_finding
from scansnap.paper.items.costs import about
from scansnap.paper.presets import load_presets
from scansnap.paper.sweeps import final_values, per_replica, sweep_summary
from scansnap.service.facade import TERMINAL
from scansnap.ui import charts_pages, sweep_form
from scansnap.ui.errors import guarded, show_callback_error
from scansnap.ui.grid_view import grid_section
from scansnap.ui.knobs import RATIOS
from scansnap.ui.progress import run_progress
from scansnap.ui.resources import service
from scansnap.ui.result_words import column_label, column_unit, column_what, run_left_s
from scansnap.ui.session import actor, owns
from scansnap.ui.text import plain
from scansnap.ui.widgets import font, plot_ui

if TYPE_CHECKING:
    from scansnap.kinds.synthetic.science.config import RunConfig

ss = st.session_state
# what a sweep's results can show: the class means its replicas record (the first: the paper's Fig. 6)
SWEEP_METRICS = ["entropy_distinct", "entropy_all", "common_mass", "loss", "accuracy", "train_loss"]
st.title("Sweep")
rates, grid = st.tabs(["Learning rates (Fig. 6)", "Any knob (a grid of runs)"])
with rates:
    presets = load_presets()
    names = list(presets)
    for kind, message in sweep_form.init_form(presets):
        getattr(st, kind)(plain(message))  # a run id from the URL: shown as typed
    c = st.columns([2, 2, 2, 1, 1])
    base = c[0].selectbox(
        "base preset",
        sweep_form.base_options(names),
        format_func=lambda k: presets[k].title if k in presets else "this sweep's own base config",
        key="sw.base",
    )
    eta_zs = c[1].multiselect("η_Z values", sweep_form.with_current(sweep_form.ETAS, "sw.ez"), key="sw.ez")
    ratios = c[2].multiselect("η_Y/η_Z ratios", sweep_form.with_current(RATIOS, "sw.ratio"), key="sw.ratio")
    n_seeds = c[3].number_input("seeds", min_value=1, max_value=sweep_form.MAX_SEEDS, key="sw.seeds")
    steps = c[4].number_input("steps", min_value=1, max_value=sweep_form.MAX_STEPS, key="sw.steps")
    cfg, error = sweep_form.checked_config(base, presets, eta_zs, ratios, n_seeds, steps, service().check)
    if error:
        st.error(plain(error), icon="🚫")
    else:
        st.caption(
            f"{len(eta_zs) * len(ratios)} (η_Y, η_Z) pairs × {n_seeds} seeds = {cfg.n_replicas} replicas, "
            "trained together on the replica axis of one job."
        )

    @guarded
    def launch(cfg: "RunConfig") -> None:
        ss["sweep.run"] = ss["sweep.opened"] = service().submit(cfg, actor(), name=cfg.name)
        st.query_params["run"] = ss["sweep.run"]

    st.button("▶ Run sweep", type="primary", disabled=cfg is None, key="sw.start", on_click=launch, args=(cfg,))
    show_callback_error()

    def results(rid: str, finished: bool, step: int) -> None:
        metric = st.selectbox("metric", SWEEP_METRICS, key="sw.metric", format_func=column_label)
        df = service().stored.scalars(rid, metrics=[metric])
        final = final_values(df, metric)
        if final.empty:
            return
        statics = service().stored.statics(rid)
        summary = sweep_summary(final, statics)
        cols = st.columns(2)
        with cols[0]:
            plot_ui(charts_pages.sweep_lines(summary, metric, font()), "sw-lines", f"sweep-{rid}-{metric}-vs-ratio")
        with cols[1]:
            plot_ui(charts_pages.sweep_heatmap(summary, metric, font()), "sw-heat", f"sweep-{rid}-{metric}-heatmap")
        said = sweep_finding(per_replica(final, statics), column_what(metric), column_unit(metric))
        if said:
            so_far = "" if finished else f"So far (step {step}, not finished): "
            st.markdown(
                plain(so_far + (said if finished else said[0].lower() + said[1:])),
                help="From the final values, the mean over seeds per (η_Z, η_Y/η_Z): a change within 5 % of "
                "the largest value (or two standard errors over seeds) counts as none.",
            )
        with st.expander("table"):
            words = {
                "eta_z": "η_Z",
                "ratio": "η_Y/η_Z",
                "mean": f"final {column_label(metric)}, mean over seeds",
                "count": "seeds",
                "sem": "standard error over seeds",
                "eta_y": "η_Y",
            }
            st.dataframe(
                summary, hide_index=True, column_config={c: st.column_config.Column(w) for c, w in words.items()}
            )

    @guarded
    def resume(rid: str) -> None:
        service().resume(rid, actor())

    def progress(rid: str) -> None:
        service().watch(rid)  # a run that no page shows pauses itself after SCANSNAP_IDLE_PAUSE_S
        info, s = service().run(rid), service().status(rid)
        if info is None:
            st.warning(f"run {plain(rid)} is not in the store")
            return
        status, step = (s.status, s.step) if s else (info["status"], info["last_step"] or 0)
        total = json.loads(info["config_json"])["optim"]["steps"]
        left = run_left_s(run_progress(info, s)) if status not in TERMINAL else None
        when = f" · {about(left)} left" if left is not None else ""
        st.progress(min(1.0, step / max(total, 1)), text=f"{status} · step {step} / {total}{when} · run {rid}")
        if s is not None and s.message:
            st.caption(plain(s.message))  # what a queued sweep waits for, why a paused one paused
        if s is not None and s.status == "paused":
            st.button("▶ Resume", key="sweep.resume", on_click=resume, args=(rid,), disabled=not owns(rid))
        live = s is not None and s.status not in TERMINAL
        if ss.get("sweep.live") and not live:
            ss["sweep.live"] = False
            st.rerun()
        results(rid, status == "finished", step)

    rid = ss.get("sweep.run")
    if rid:
        s = service().status(rid)
        ss["sweep.live"] = s is not None and s.status not in TERMINAL
        st.fragment(progress, run_every=0.5 if ss["sweep.live"] else None)(rid)

with grid:  # after the rates: a damaged store stops the page there, with one message
    grid_section()
