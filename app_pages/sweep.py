"""Sweep: η_Z values × η_Y/η_Z ratios × seeds trained as ONE batched replica job (paper Fig. 6 layout)."""

import json

import streamlit as st

from engine.core.config import ConfigError, RunConfig
from engine.paper.presets import load_presets
from engine.paper.views import final_values, sweep_config, sweep_summary
from engine.service.jobs import TERMINAL
from ui import charts_pages
from ui.labstate import owner
from ui.widgets import RATIOS, font, manager, plain, plot_ui, store

ss = st.session_state
ETAS = [0.1, 0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 10.0]
st.title("Sweep")
if "run" in st.query_params:
    ss["sweep.run"] = st.query_params["run"]
presets = load_presets()
names = list(presets)
c = st.columns([2, 2, 2, 1, 1])
base = c[0].selectbox(
    "base preset",
    names,
    index=names.index("syn-medium-1") if "syn-medium-1" in names else 0,
    format_func=lambda k: presets[k].title,
    key="sw.base",
)
eta_zs = c[1].multiselect("η_Z values", ETAS, default=[0.5, 1.0, 2.0, 3.0], key="sw.ez")
ratios = c[2].multiselect("η_Y/η_Z ratios", list(RATIOS), default=[1.0, 2.0, 5.0, 10.0], key="sw.ratio")
n_seeds = c[3].number_input("seeds", min_value=1, max_value=50, value=3, key="sw.seeds")
steps = c[4].number_input("steps", min_value=1, max_value=100000, value=100, key="sw.steps")
cfg, error = None, None
try:
    if not eta_zs or not ratios:
        raise ConfigError("pick at least one η_Z value and one ratio")
    cfg = sweep_config(presets[base].config, eta_zs, ratios, list(range(1, n_seeds + 1)), steps)
except ConfigError as e:
    error = str(e)
if error:
    st.error(error)
else:
    st.caption(
        f"{len(eta_zs) * len(ratios)} (η_Y, η_Z) pairs × {n_seeds} seeds = {cfg.n_replicas} replicas, "
        "trained together on the replica axis of one job."
    )


def launch(cfg: RunConfig) -> None:
    try:
        ss["sweep.run"] = manager().submit(cfg, name=cfg.name, owner=owner())
        st.query_params["run"] = ss["sweep.run"]
    except RuntimeError as e:
        ss["sweep.error"] = str(e)


st.button("▶ Run sweep", type="primary", disabled=cfg is None, key="sw.start", on_click=launch, args=(cfg,))
if ss.get("sweep.error"):
    st.error(ss.pop("sweep.error"))


def results(rid: str) -> None:
    df = store().scalars(rid, metrics=["entropy_distinct"])
    final = final_values(df, "entropy_distinct")
    if final.empty:
        return
    summary = sweep_summary(final, store().statics(rid))
    cols = st.columns(2)
    with cols[0]:
        plot_ui(charts_pages.sweep_lines(summary, font=font()), "sw-lines", f"sweep-{rid}-entropy-vs-ratio")
    with cols[1]:
        plot_ui(charts_pages.sweep_heatmap(summary, font=font()), "sw-heat", f"sweep-{rid}-heatmap")
    with st.expander("table"):
        st.dataframe(summary, hide_index=True)


def progress(rid: str) -> None:
    info, s = store().get_run(rid), manager().status(rid)
    if info is None:
        st.warning(f"run {plain(rid)} is not in the store")
        return
    status, step = (s.status, s.step) if s else (info["status"], info["last_step"] or 0)
    total = json.loads(info["config_json"])["optim"]["steps"]
    st.progress(min(1.0, step / max(total, 1)), text=f"{status} · step {step} / {total} · run {rid}")
    live = s is not None and s.status not in TERMINAL
    if ss.get("sweep.live") and not live:
        ss["sweep.live"] = False
        st.rerun()
    results(rid)


rid = ss.get("sweep.run")
if rid:
    s = manager().status(rid)
    ss["sweep.live"] = s is not None and s.status not in TERMINAL
    st.fragment(progress, run_every=0.5 if ss["sweep.live"] else None)(rid)
