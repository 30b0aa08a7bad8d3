"""Reproduce: re-run the paper's figures and theorems fresh, see a verdict per claim, download the report.

The engine's ReproduceManager runs one reproduction at a time for the whole server and stores
each finished one under ``<data_dir>/reproductions/<id>``; this page starts, watches and shows
them.  Session keys: ``rp.watch`` (the running reproduction this session waits for),
``rp.pick`` (the shown stored reproduction, also ``?report=<id>``), ``rp.url`` (the last
``report`` value read from or written to the URL), ``rp.msg`` (the last run's outcome, if not a report).
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from scansnap.paper.items.catalog import ITEMS, total_work
from scansnap.paper.items.costs import about, estimated_seconds, item_seconds
from scansnap.paper.report import WORDS, fmt_value
from scansnap.service.facade import (
    FULL_REPRODUCTION_IS_THE_OPERATORS,
    JobStatus,
    ServiceError,
    StoredReproduction,
    StoredSummary,
    check_id,
    doc_tally,
)
from scansnap.ui.chart_style import plot_config, report_layout
from scansnap.ui.errors import guarded, show_callback_error
from scansnap.ui.page_data import reproduction
from scansnap.ui.resources import service
from scansnap.ui.session import actor
from scansnap.ui.text import plain
from scansnap.ui.widgets import font

ss = st.session_state
QUICK_HELP = (
    "Quick: Fig. 6 with 3 seeds instead of 10 (a pattern reversal counts only beyond 2·SE of the "
    "difference), the theorems item without the two 10⁴-step sampled snap runs, and the real-text items at "
    f"CPU smoke size (100–200 steps, vocabulary 2,000; joma-real's rebounds n/a): all eight items "
    f"{about(estimated_seconds(list(ITEMS), True))}. Full: the six synthetic items "
    f"{about(estimated_seconds([n for n, i in ITEMS.items() if not i.corpus], False))}, the real-text items "
    f"{about(sum(item_seconds(n, False) for n, i in ITEMS.items() if i.corpus))} more (a GPU run). "
    "Measured on 2 CPU cores (BENCHMARKS.md, Reproduce); a busy server takes longer."
)
LABELS = {
    "fig4": "Fig. 4",
    "fig5": "Fig. 5",
    "fig6": "Fig. 6",
    "fig9": "Fig. 9",
    "theorems": "Theorems 2–4",
    "joma": "JoMA",
    "fig7": "Fig. 7 (real text)",
    "joma-real": "JoMA (real text)",
}
INTRO = """Re-runs the paper's figures and theorems **from scratch on this server** and judges every claim with a
number: each verdict names the statistic, its value and the threshold it must meet.

- **Fig. 4 / 5** (Syn-Small, SGD / Adam): common tokens lose attention, the most likely distinct token wins,
  the chosen subset depends on the learning rate.
- **Fig. 6** (Syn-Medium): the three patterns of the distinct-token entropy vs η_Y/η_Z.
- **Fig. 9**: Theorem 4's B_n(t₀) is the same for every η_Z and matches the paper's dots.
- **Theorems 2–4**: logit signs, relative gain, bracket, scan → snap on fresh runs.
- **JoMA**: the attention entropy bounces back with a nonlinear MLP, not with a linear one.
- **Fig. 7** (real text, the built-in corpus): the lowest layer's attention entropy falls (1 and 3 layers).
- **JoMA, real text**: each layer's entropy over training; whether a drop-then-rebound was measured, with numbers.

One reproduction runs at a time on this server: while one runs, everyone sees its progress."""


# ----------------------------------------------------------------- starting and watching
@guarded
def start(names: list[str], quick: bool) -> None:
    """Button callback: start (or join) the server's reproduction."""
    before = service().running_reproduction()
    ss.pop("rp.msg", None)
    ss["rp.watch"] = service().start_reproduction(names, quick, actor())
    if before is not None and before.run_id == ss["rp.watch"]:
        ss["rp.msg"] = (
            "info",
            "Another reproduction was already running on this server: its progress is shown "
            "above; start yours when it has ended.",
        )


def settle(running: JobStatus | None) -> None:
    """Watch a running reproduction; when the watched one has ended, show it (or say why not)."""
    if running is not None:
        ss["rp.watch"] = running.run_id
        return
    rid = ss.pop("rp.watch", None)
    s = service().status(rid) if rid else None
    if s is None:
        return
    ss.pop("rp.msg", None)
    if s.status == "finished":
        ss["rp.pick"] = rid
    elif s.status == "failed":
        ss["rp.msg"] = ("error", f"Reproduction {rid} failed: {s.message}")
    else:
        ss["rp.msg"] = ("info", f"Reproduction {rid} was stopped; nothing was stored.")


def progress_text(s: JobStatus) -> str:
    """Mode, the item running, steps, seconds so far and the estimate of what is left."""
    item = s.current or ("writing the report" if s.items_done == len(s.items) else "starting")
    steps = f" · step {s.step:,} / {s.total_steps:,}" if s.total_steps else ""
    mode = "quick" if s.quick else "full"
    left = estimated_seconds(s.items, s.quick) * (1 - s.fraction)
    return (
        f"{mode} · item {min(s.items_done + 1, len(s.items))} / {len(s.items)}: {item}{steps} · "
        f"{s.elapsed_s:.0f} s · {about(left)} left"
    )


def progress_ui(rid: str) -> None:
    """The live area (a fragment ticking every 0.5 s): one full rerun when the run has ended."""
    s = service().status(rid)
    if s is None or s.status != "running":
        st.rerun()
        return
    st.progress(s.fraction, text=progress_text(s))
    allowed = service().may_manage({"owner": s.owner}, actor())
    st.button(
        "Stop",
        key="rp.stop",
        on_click=stop,
        args=(rid,),
        disabled=not allowed,
        help="Stops at the next progress report (or between items); nothing of this reproduction is stored."
        if allowed
        else "Only the browser that started this reproduction (or the operator) may stop it.",
    )


@guarded
def stop(rid: str) -> None:
    service().stop_reproduction(rid, actor())


def controls_ui(running: JobStatus | None) -> None:
    c = st.columns([4, 1.3, 1.2], vertical_alignment="bottom")
    names = c[0].multiselect(
        "Items",
        list(ITEMS),
        default=list(ITEMS),
        key="rp.items",
        format_func=lambda n: LABELS.get(n, n),
        help="\n\n".join(m.title for m in ITEMS.values()),
    )
    operator = actor().operator  # a visitor's reproduction is the quick one (the full one takes hours)
    only_quick = FULL_REPRODUCTION_IS_THE_OPERATORS[0].upper() + FULL_REPRODUCTION_IS_THE_OPERATORS[1:] + "."
    help_text = QUICK_HELP if operator else f"{QUICK_HELP}\n\n{only_quick}"
    quick = c[1].toggle("Quick mode", value=True, key="rp.quick", disabled=not operator, help=help_text)
    quick = quick or not operator
    c[2].button(
        "Run reproduction",
        type="primary",
        key="rp.run",
        disabled=running is not None or not names,
        on_click=start,
        args=(names, quick),
        width="stretch",
    )
    if not names:
        st.caption("Pick at least one item.")
    elif running is None:
        st.caption(estimate_text(names, quick))


def estimate_text(names: list[str], quick: bool) -> str:
    """What the selection will run and, from the items' measured seconds, how long it will take."""
    steps = total_work(names, quick)
    work = f"{steps:,} optimiser steps" if steps else "no training (closed-form curves and numpy only)"
    count = f"{len(names)} item{'s' if len(names) != 1 else ''}"
    text = f"{'Quick' if quick else 'Full'} mode · {count} · {work} · {about(estimated_seconds(names, quick))}"
    text += " (measured per item on 2 CPU cores: BENCHMARKS.md, Reproduce; a busy server takes longer)"
    heavy = [LABELS[n] for n in names if ITEMS[n].corpus and not quick]
    verb = "is" if len(heavy) == 1 else "are"
    return text + (f"; {' and '.join(heavy)} at full size {verb} a GPU run." if heavy else ".")


# ----------------------------------------------------------------- choosing a stored reproduction
def url_pick(ids: list[str]) -> None:
    """Apply ``?report=<id>`` once per new value; a bad or unknown id gives a warning."""
    want = st.query_params.get("report")
    if want is None or want == ss.get("rp.url"):
        return
    ss["rp.url"] = want
    try:
        check_id(want)
    except ValueError:
        st.warning(f"The link's report {want[:80]!r} is not a reproduction id (expected YYYYMMDD-HHMMSS-xxxxxx).")
        return
    if want in ids:
        ss["rp.pick"] = want
    elif want == ss.get("rp.watch"):
        st.info(f"Reproduction {want} is still running: its report appears here when it is done.")
    else:
        st.warning(f"There is no stored reproduction {want} on this server.")


def pick_ui() -> str | None:
    """Selectbox of stored reproductions (newest first); the pick is written into ``?report=``."""
    stored = service().stored_reproductions()
    ids = [s.id for s in stored]
    url_pick(ids)
    if not ids:
        st.info("No stored reproductions yet: pick items and press **Run reproduction**.")
        return None
    if ss.get("rp.pick") not in ids:
        ss["rp.pick"] = ids[0]
    labels = {s.id: summary_label(s) for s in stored}
    pick: str = st.selectbox("Stored reproductions (newest first)", ids, key="rp.pick", format_func=labels.get)
    if st.query_params.get("report") != pick:
        st.query_params["report"] = ss["rp.url"] = pick
    return pick


def summary_label(s: StoredSummary) -> str:
    """One stored reproduction in the picker: mode, items and verdicts (or that it is damaged)."""
    if s.problem is not None:
        return f"{s.id} · damaged: cannot be shown"
    mode = "quick" if s.quick else "full"
    return f"{s.id} · {mode} · {', '.join(s.items)} · {s.counts.sentence}"


# ----------------------------------------------------------------- showing one
def verdict_line(doc: dict[str, Any]) -> None:
    counts = doc_tally(doc)
    mode = "quick mode" if doc["quick"] else "full mode"
    tail = f" · {mode} · {doc['wall_s']:.1f} s of compute · {doc['created'].replace('T', ' ')}"
    said = f"**{counts.sentence}**{tail}"
    if counts.failed:
        st.error(said, icon="❌")
    elif counts.na:
        st.info(said + " · n/a: a claim this run cannot judge (each says why below)", icon="➖")
    else:
        st.success(said, icon="✅")
    if doc["quick"]:
        st.caption("Quick mode differs from the full reproduction: " + "; ".join(doc["quick_differences"]) + ".")


COLORS = {"PASS": ("#d8f3dc", "#17691d"), "FAIL": ("#ffd6d9", "#b00020"), "N/A": ("#eeeeee", "#444444")}
ICONS = {"PASS": "✅", "FAIL": "❌", "N/A": "➖"}


def _status(v: dict[str, Any]) -> str:
    """PASS, FAIL or N/A (reports stored before verdicts had a status say only ``passed``)."""
    return WORDS[v.get("status") or ("pass" if v["passed"] else "fail")]


def _verdict_color(word: str) -> str:
    back, ink = COLORS[word.split()[-1]]
    return f"background-color: {back}; color: {ink}; font-weight: bold"


def verdict_table(verdicts: list[dict[str, Any]]) -> None:
    """Every verdict, PASS/FAIL on a green/red background."""
    df = pd.DataFrame(
        [
            {
                "verdict": f"{ICONS[_status(v)]} {_status(v)}",
                "item": v["item"],
                "claim": v["claim"],
                "statistic": v["statistic"],
                "value": fmt_value(v["value"]) if v["value"] is not None else "NaN",
                "threshold": v["threshold"],
                "detail": v["detail"]
                if _status(v) != "N/A"
                else "; ".join([v.get("reason", ""), *v.get("conditions", [])]),
            }
            for v in verdicts
        ]
    )
    cfg = {
        "verdict": st.column_config.TextColumn(width="small", help="PASS: the statistic meets the threshold"),
        "item": st.column_config.TextColumn(width="small"),
        "claim": st.column_config.TextColumn(width="large"),
        "statistic": st.column_config.TextColumn(width="medium"),
        "value": st.column_config.TextColumn(width="small"),
        "threshold": st.column_config.TextColumn(width="small"),
        "detail": st.column_config.TextColumn(width="large"),
    }
    st.dataframe(
        df.style.map(_verdict_color, subset=["verdict"]),
        hide_index=True,
        column_config=cfg,
        height=min(38 + 35 * len(df), 900),
        key="rp.table",
    )


def downloads_ui(rid: str) -> None:
    c = st.columns(3)
    c[0].download_button(
        "⬇ report.html (self-contained)",
        data=lambda: service().reproduction_file(rid, "report.html").read_bytes(),
        file_name=f"scansnap-reproduction-{rid}.html",
        mime="text/html",
        on_click="ignore",
        key="rp.dl.html",
        width="stretch",
    )
    c[1].download_button(
        "⬇ verdicts.json",
        data=lambda: service().reproduction_file(rid, "verdicts.json").read_bytes(),
        file_name=f"scansnap-reproduction-{rid}-verdicts.json",
        mime="application/json",
        on_click="ignore",
        key="rp.dl.json",
        width="stretch",
    )
    c[2].caption(
        "The HTML report embeds plotly.js, every figure, the verdicts and the exact configs; it opens offline."
    )


def readable(spec: dict[str, Any]) -> go.Figure:
    """A stored figure with the dashboard's font sizes (lecture mode: larger) on a white background, laid
    out as every chart (:func:`scansnap.ui.chart_style.report_layout`)."""
    f = font()
    fig = go.Figure(spec)
    fig.update_layout(template="plotly_white", font_size=f, hoverlabel_font_size=f)
    fig.update_annotations(font_size=f + 1)
    fig.update_xaxes(title_font_size=f, tickfont_size=f - 1)
    fig.update_yaxes(title_font_size=f, tickfont_size=f - 1)
    return report_layout(fig, f)  # the title, the panel titles and the legend apart


def item_ui(rep: StoredReproduction, item: dict[str, Any]) -> None:
    """One item: figures, notes and the exact configs."""
    name = item["name"]
    st.subheader(item["title"])
    st.caption(f"{'PASS' if item['passed'] else 'FAIL'} · {item['wall_s']:.1f} s")
    for k, f in enumerate(x for x in rep.figures if x.item == name):
        st.markdown(f"**{f.caption}**")
        # theme=None keeps the figure's own high-contrast colours, as in the downloaded report
        st.plotly_chart(
            readable(f.figure),
            key=f"rp.fig.{rep.id}.{name}.{k}",
            width="stretch",
            theme=None,
            config=plot_config(f"scansnap-{rep.id}-{name}-{k}"),
        )
    for note in item["notes"]:
        st.caption(note)
    with st.expander("exact configs (JSON)"):
        st.json(rep.configs.get(name, {}), expanded=2)


def report_ui(rid: str) -> None:
    """The stored reproduction ``rid``; a damaged one is one message saying what is wrong with it."""
    try:
        rep = reproduction(rid)
    except ServiceError as e:
        st.error(
            plain(f"{e}. Run it again to store a complete report; the other reproductions can be picked above."),
            icon="🚫",
        )
        return
    verdict_line(rep.doc)
    downloads_ui(rid)
    verdict_table(rep.doc["verdicts"])
    items = rep.doc["items"]
    tabs = st.tabs([f"{'✅' if i['passed'] else '❌'} {i['name']}" for i in items])
    for tab, item in zip(tabs, items, strict=True):
        with tab:
            item_ui(rep, item)
    with st.expander("environment (library versions, device)"):
        st.json({"versions": rep.doc["versions"], "device": rep.doc["device"]}, expanded=1)


# ----------------------------------------------------------------- the page
st.title("Reproduce the paper")
st.markdown(INTRO)
show_callback_error()
running = service().running_reproduction()
settle(running)
controls_ui(running)
if running is not None:
    st.fragment(progress_ui, run_every=0.5)(running.run_id)
if "rp.msg" in ss:  # kept until the next start or the next end of a watched run
    kind, text = ss["rp.msg"]
    (st.error if kind == "error" else st.info)(text)
st.divider()
shown = pick_ui()
if shown is not None:
    report_ui(shown)
