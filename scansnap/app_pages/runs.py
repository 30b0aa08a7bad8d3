"""Runs: browse, reopen, export, and (owner or operator) rename, delete, stop or resume stored runs.

Anyone may open and export a run; only the browser that started it, or the operator
(``SCANSNAP_OPERATOR_KEY``), may manage it (:mod:`scansnap.service.access`).  What the buttons do, and why
the picker is set from the session: :mod:`scansnap.ui.runs_manage`."""

import json

import pandas as pd
import streamlit as st

from scansnap.ui import session
from scansnap.ui.errors import show_callback_error
from scansnap.ui.kind_views import view_of
from scansnap.ui.resources import service
from scansnap.ui.run_list import table_row
from scansnap.ui.runs_manage import controls_ui, find_ui, manage_ui, notice_ui, operator_ui, pick_ui, stop_watch_ui
from scansnap.ui.schedule_view import schedule_ui

with st.sidebar:
    operator_ui()
st.title("Runs")
me = session.owner()
runs, total, where = find_ui(me)
if not runs:
    show_callback_error()
    notice_ui()  # (after the last run was deleted)
    st.info("No stored runs yet: start one in the Lab." if not where else f"No run {where}.")
    st.stop()


def _created(r: dict) -> str:
    return pd.to_datetime(r["created"], unit="s").strftime("%Y-%m-%d %H:%M:%S")


table = pd.DataFrame([table_row(r, me, view_of(r).models(r), _created(r)) for r in runs])
st.dataframe(
    table,
    hide_index=True,
    key="runs.table",
    column_config={"step": st.column_config.TextColumn("step", alignment="right")},
)
schedule_ui({r["id"]: r["name"] for r in runs})

show_callback_error()  # what the last button did, or why not: over the picker and the buttons, where one looks
notice_ui()
stop_watch_ui()
run = pick_ui(runs)
rid = run["id"]
allowed = session.may_manage(run)
view = view_of(run)
controls_ui(run, view, allowed)
manage_ui(run, allowed)

st.subheader("Export")
d = st.columns(4)
refusals = []
for col, fmt, label in ((d[0], "parquet", "Parquet"), (d[1], "csv", "CSV")):
    plan = service().export_plan(rid, fmt)  # from the store's counts: no array is read
    refusals += [plan.refused] if plan.refused else []
    col.download_button(
        f"{label} (zip), ≤ {plan.size}",
        data=(lambda f=fmt: service().export_zip(rid, f)) if not plan.refused else b"",
        disabled=bool(plan.refused),
        help=plan.refused or f"the run's tables, verdicts and config in one zip: {plan.size} at most",
        file_name=f"scansnap-{rid}-{fmt}.zip",
        mime="application/zip",
        on_click="ignore",
        key=f"runs.{fmt}",
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
    disabled=view.report is None,
    help=None if view.report else f"{view.label} runs have no HTML report: this run exports its tables (zips)",
    data=lambda: view.report(service().stored, rid) if view.report else "",
    file_name=f"scansnap-{rid}-report.html",
    mime="text/html",
    on_click="ignore",
    key="runs.html",
)
st.caption(view.export_note)
for refused in dict.fromkeys(refusals):
    st.warning(refused)
