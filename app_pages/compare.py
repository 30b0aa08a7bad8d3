"""Compare: overlay stored runs' metrics; the legend says how their configs differ."""

import json

import streamlit as st

from engine.core.metrics import label, metric_names
from engine.paper.sweeps import config_diffs
from ui import charts_pages
from ui.knobs import KNOBS
from ui.page_data import compare_series
from ui.resources import service
from ui.widgets import font, plot_ui

NAMES = metric_names("synthetic")  # Compare overlays synthetic (Y, Z) runs
SYMBOLS = {k.key: k.label.split(" (")[0] for k in KNOBS}  # "η_Y (decoder)" → "η_Y"


def knob_symbol(key: str) -> str:
    """A config key as the legend shows it: its knob's label without the gloss (else the key's last part)."""
    return SYMBOLS.get(key, key.split(".")[-1])


st.title("Compare runs")
runs = [r for r in service().runs() if (r["last_step"] or 0) > 0 and r.get("kind", "synthetic") == "synthetic"]
if not runs:
    st.info("No stored runs with data yet: start one in the Lab.")
    st.stop()
by_id = {r["id"]: r for r in runs}
qp = st.query_params
wanted = [i for i in qp.get("runs", "").split(",") if i in by_id] or [r["id"] for r in runs[:2]]
c = st.columns([3, 1.2, 0.6])
chosen = c[0].multiselect(
    "runs",
    list(by_id),
    default=wanted,
    key="cmp.runs",
    format_func=lambda i: f"{by_id[i]['name']} · {i} · {by_id[i]['status']}",
)
metric = c[1].selectbox(
    "metric",
    NAMES,
    index=NAMES.index(qp.get("metric", "entropy_distinct")) if qp.get("metric") in NAMES else 0,
    key="cmp.metric",
    format_func=label,
)
logx = c[2].checkbox("log x", value=True, key="cmp.logx")
st.query_params.from_dict(
    {**{k: v for k, v in qp.to_dict().items() if k in ("lecture",)}, "runs": ",".join(chosen), "metric": metric}
)


if chosen:
    diffs = config_diffs([json.loads(by_id[i]["config_json"]) for i in chosen], name=knob_symbol)
    lines = [
        (f"{by_id[i]['name']} · {d}", *compare_series(i, metric, by_id[i]["last_step"] or 0))
        for i, d in zip(chosen, diffs, strict=True)
    ]
    plot_ui(charts_pages.overlay(lines, metric, logx, font()), "cmp-chart", f"compare-{metric}-{'-'.join(chosen)}")
    st.caption(
        "Lines are the class mean of each run, averaged over its replicas. Legends list the config keys "
        "whose values differ among the chosen runs. Losses are drawn on a log axis (they fall towards 0)."
    )
