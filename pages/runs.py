"""Runs: browse, reopen, rename, delete and export stored runs."""

import json

import pandas as pd
import streamlit as st

from ui.report import html_report, zipped_export
from ui.widgets import manager, store

st.title("Runs")
runs = store().list_runs()
if not runs:
    st.info("No stored runs yet: start one in the Lab.")
    st.stop()
table = pd.DataFrame([{"id": r["id"], "name": r["name"], "status": r["status"], "step": r["last_step"],
                       "replicas": len(json.loads(r["config_json"])["replicas"]["seeds"])
                       * len(json.loads(r["config_json"])["replicas"].get("lr_pairs") or [0]),
                       "created": pd.to_datetime(r["created"], unit="s").strftime("%Y-%m-%d %H:%M:%S"),
                       "device": r["device"]} for r in runs])
st.dataframe(table, hide_index=True, key="runs.table")
by_id = {r["id"]: r for r in runs}


def _label(i: str) -> str:
    r = by_id[i]
    return f"{r['name']} · {i} · {r['status']} · step {r['last_step']}"


rid = st.selectbox("run", list(by_id), key="runs.pick", format_func=_label)
run = by_id[rid]
is_sweep = bool(json.loads(run["config_json"])["replicas"].get("lr_pairs"))


def rename() -> None:
    store().rename(rid, st.session_state["runs.newname"])


def delete() -> None:
    if manager().is_live(rid):
        manager().stop(rid)
    store().delete(rid)


c = st.columns(4)
if c[0].button("Open in the Lab", key="runs.open", type="primary"):
    st.switch_page("pages/lab.py", query_params={"run": rid})
if is_sweep and c[1].button("Open in Sweep", key="runs.sweep"):
    st.switch_page("pages/sweep.py", query_params={"run": rid})
with st.expander("Rename or delete"):
    st.text_input("new name", value=run["name"], key="runs.newname")
    st.button("Rename", key="runs.rename", on_click=rename)
    sure = st.checkbox("yes, delete this run and all its data", key="runs.sure")
    st.button("Delete", key="runs.delete", disabled=not sure, on_click=delete)

st.subheader("Export")
d = st.columns(4)
d[0].download_button("Parquet (zip)", data=lambda: zipped_export(store(), rid, "parquet"),
                     file_name=f"scansnap-{rid}-parquet.zip", mime="application/zip", on_click="ignore",
                     key="runs.parquet")
d[1].download_button("CSV (zip)", data=lambda: zipped_export(store(), rid, "csv"),
                     file_name=f"scansnap-{rid}-csv.zip", mime="application/zip", on_click="ignore", key="runs.csv")
d[2].download_button("config JSON", data=lambda: json.dumps(json.loads(run["config_json"]), indent=2),
                     file_name=f"scansnap-{rid}-config.json", mime="application/json", on_click="ignore",
                     key="runs.json")
d[3].download_button("HTML report", data=lambda: html_report(store(), rid), file_name=f"scansnap-{rid}-report.html",
                     mime="text/html", on_click="ignore", key="runs.html")
st.caption("The HTML report embeds plotly.js and opens offline; chart PNGs come from each chart's camera button.")
