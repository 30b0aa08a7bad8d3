"""Runs: browse, reopen, export, and (owner or operator) rename, delete, stop or resume stored runs.

Anyone may open and export a run; only the browser that started it, or the operator
(``SCANSNAP_OPERATOR_KEY``), may manage it (:mod:`engine.service.access`)."""

import json

import pandas as pd
import streamlit as st

from engine.service.facade import OPERATOR_ENV, RECOVERABLE, operator_configured
from ui import session
from ui.errors import guarded, show_callback_error
from ui.exports import html_report
from ui.kind_views import view_of
from ui.resources import service
from ui.schedule_view import schedule_ui
from ui.text import plain
from ui.widgets import recovery_ui

ss = st.session_state


def operator_ui() -> None:
    """Operator mode for this session: a password field, or a way out once in."""
    if session.is_operator():
        st.success("Operator mode: you may manage every run.")
        if st.button("Leave operator mode", key="runs.opleave"):
            ss["operator"] = ss["operator_tried"] = False
            st.rerun()
        return
    configured = operator_configured()
    help_ = (
        f"The key set in {OPERATOR_ENV} on the server: manage (rename, delete, stop, resume) every run "
        "for the rest of this browser session."
        if configured
        else f"Operator mode does not exist on this server: {OPERATOR_ENV} is not set."
    )
    st.text_input(
        "operator key",
        type="password",
        key="runs.opkey",
        disabled=not configured,
        help=help_,
        on_change=session.on_operator_key,
        args=("runs.opkey",),
    )
    if ss.get("operator_wait"):
        st.error(f"Too many wrong keys: try again in {ss['operator_wait']:.0f} s.")
    elif configured and ss.get("operator_tried"):
        st.error("That is not the operator key.")


with st.sidebar:
    operator_ui()
st.title("Runs")
show_callback_error()
me = session.owner()
runs = service().runs()
if not runs:
    st.info("No stored runs yet: start one in the Lab.")
    st.stop()


table = pd.DataFrame(
    [
        {
            "id": r["id"],
            "name": r["name"],
            "status": r["status"],
            "step": r["last_step"],
            "kind": r["kind"],
            "replicas": view_of(r).models(r),
            "yours": r["owner"] == me,
            "created": pd.to_datetime(r["created"], unit="s").strftime("%Y-%m-%d %H:%M:%S"),
            "device": r["device"],
            "trained on": r["node"] or "this server",
        }
        for r in runs
    ]
)
st.dataframe(table, hide_index=True, key="runs.table")
by_id = {r["id"]: r for r in runs}
schedule_ui({i: r["name"] for i, r in by_id.items()})


def _label(i: str) -> str:
    r = by_id[i]
    return f"{r['name']} · {i} · {r['status']} · step {r['last_step']}"


rid = st.selectbox("run", list(by_id), key="runs.pick", format_func=_label)
run = by_id[rid]
allowed = session.may_manage(run)
view = view_of(run)


@guarded
def rename() -> None:
    service().rename(rid, st.session_state["runs.newname"], session.actor())


@guarded
def delete() -> None:
    service().delete(rid, session.actor())


@guarded
def stop() -> None:
    service().stop(rid, session.actor())


@guarded
def resume() -> None:
    service().resume(rid, session.actor())


c = st.columns(4)
if view.page and c[0].button(f"Open in {view.page_title}", key="runs.open", type="primary"):
    st.switch_page(view.page, query_params={"run": rid})
if view.is_sweep(run) and c[1].button("Open in Sweep", key="runs.sweep"):
    st.switch_page("app_pages/sweep.py", query_params={"run": rid})
if service().is_live(rid):
    c[2].button("⏹ Stop", key="runs.stop", disabled=not allowed, on_click=stop)
    live = service().status(rid)
    if live is not None and live.status == "paused":
        c[3].button("▶ Resume", key="runs.resume", disabled=not allowed, on_click=resume)
if run["status"] in RECOVERABLE and not service().is_live(rid):
    st.warning(f"This run is **{run['status']}** at step {run['last_step'] or 0}. {plain(run['message'] or '')}")
    recovery_ui(run, "runs", allowed)
with st.expander("Rename or delete"):
    if not allowed:
        who = "it was created from the command line" if run["owner"] is None else "another browser started it"
        st.caption(
            f"Read-only: {who}, so only its owner or the operator may rename, delete, stop or resume it. "
            "You may open, compare, export and re-run it."
        )
    st.text_input("new name", value=run["name"], key="runs.newname", disabled=not allowed)
    st.button("Rename", key="runs.rename", on_click=rename, disabled=not allowed)
    sure = st.checkbox("yes, delete this run and all its data", key="runs.sure", disabled=not allowed)
    st.button("Delete", key="runs.delete", disabled=not (sure and allowed), on_click=delete)

st.subheader("Export")
d = st.columns(4)
d[0].download_button(
    "Parquet (zip)",
    data=lambda: service().export_zip(rid, "parquet"),
    file_name=f"scansnap-{rid}-parquet.zip",
    mime="application/zip",
    on_click="ignore",
    key="runs.parquet",
)
d[1].download_button(
    "CSV (zip)",
    data=lambda: service().export_zip(rid, "csv"),
    file_name=f"scansnap-{rid}-csv.zip",
    mime="application/zip",
    on_click="ignore",
    key="runs.csv",
)
d[2].download_button(
    "config JSON",
    data=lambda: json.dumps(json.loads(run["config_json"]), indent=2),
    file_name=f"scansnap-{rid}-config.json",
    mime="application/json",
    on_click="ignore",
    key="runs.json",
)
d[3].download_button(
    "HTML report",
    disabled=not view.report,
    help=None if view.report else "the charts of a synthetic run; this run exports its tables (zips)",
    data=lambda: html_report(service().stored, rid),
    file_name=f"scansnap-{rid}-report.html",
    mime="text/html",
    on_click="ignore",
    key="runs.html",
)
st.caption(view.export_note)
