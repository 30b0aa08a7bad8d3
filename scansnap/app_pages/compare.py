"""Compare: overlay stored runs' metrics, of every kind with a view (:mod:`scansnap.ui.kind_views`); the
legend names each run by the settings that differ, in words.  ``?runs=<id>,<id>&metric=<name>``: an id that
is no stored run with data and a metric the chosen runs do not record are said, naming what is allowed."""

import json

import streamlit as st

from scansnap.ui import charts_pages
from scansnap.ui.kind_views import views
from scansnap.ui.page_data import compare_series, metric_label, metric_words, overlaid_metrics
from scansnap.ui.resources import service
from scansnap.ui.settings_words import LegendRun, kind_words, legend_names
from scansnap.ui.text import plain, shown
from scansnap.ui.widgets import font, plot_ui

ss = st.session_state


def kind_of(run: dict) -> str:
    return run["kind"]


def linked_runs(by_id: dict[str, dict], problems: list[str]) -> list[str]:
    """The link's ``runs`` that are stored runs with data (each other id said), else the newest two of
    the newest run's kind."""
    asked = [i for i in st.query_params.get("runs", "").split(",") if i]
    bad = [i for i in asked if i not in by_id]
    if bad:
        some = ", ".join(list(by_id)[:6]) + (", …" if len(by_id) > 6 else "")
        what = "is not a stored run" if len(bad) == 1 else "are not stored runs"
        problems.append(
            f"runs: {', '.join(shown(i) for i in bad[:5])} {what} with data (allowed: the ids in the runs box: {some})"
        )
    wanted = [i for i in asked if i in by_id]
    kind = kind_of(next(iter(by_id.values())))
    return wanted or [i for i, r in by_id.items() if kind_of(r) == kind][:2]


def metric_ui(kinds: set[str], fresh: bool, problems: list[str], column) -> str | None:
    """The metric picker: the metrics every chosen kind records; the link's one if it is among them (None
    when the kinds share none)."""
    names = overlaid_metrics(kinds)
    key = "cmp.metric." + "+".join(sorted(kinds))  # another choice of kinds: another list, another widget
    asked = st.query_params.get("metric")
    if fresh and asked is not None and asked not in names:
        which = " and ".join(kind_words(k) for k in sorted(kinds))
        allowed = ", ".join(names) or "none"
        problems.append(f"metric = {shown(asked)} is not recorded by the chosen {which} runs (allowed: {allowed})")
    if names and ((fresh and asked in names) or ss.get(key) not in names):
        first = [m for k in sorted(kinds) if (m := views()[k].first_metric) in names]
        ss[key] = asked if asked in names else (first or names)[0]
    return column.selectbox("metric", names, key=key, format_func=metric_label)


def legend(chosen: list[str], by_id: dict[str, dict]) -> dict[str, str]:
    """Each run's legend: the settings that differ among the chosen runs of its kind, in words (its name
    when none do; its kind too, when both kinds are chosen): :func:`scansnap.ui.settings_words.legend_names`."""
    runs = [LegendRun(i, by_id[i]["name"], kind_of(by_id[i]), json.loads(by_id[i]["config_json"])) for i in chosen]
    return dict(zip(chosen, legend_names(runs), strict=True))


def with_data(runs: list[dict | None]) -> list[dict]:
    """The runs a chart can show (stored, a step trained, a kind with a view), each once, in order."""
    seen: dict[str, dict] = {}
    for r in runs:
        if r is not None and (r["last_step"] or 0) > 0 and kind_of(r) in views():
            seen.setdefault(r["id"], r)
    return list(seen.values())


def reachable_runs() -> list[dict]:
    """The newest runs, and any older one the link or this session names or the search finds: no run is
    out of reach for being old (the store holds more than one list shows)."""
    asked = [i for i in st.query_params.get("runs", "").split(",") if i][:MAX_LINKED]
    named = list(dict.fromkeys(asked + list(ss.get("cmp.runs", []))))
    search = ss.get("cmp.search", "").strip()
    found = service().find_runs(search, limit=SEARCH_LIMIT) if search else []
    newest = service().runs()
    known = {r["id"] for r in newest}
    return with_data(found + newest + [service().run(i) for i in named if i not in known])


MAX_LINKED = 20  # ids of a link that are looked up one by one
SEARCH_LIMIT = 50  # runs a search adds to the runs box

st.title("Compare runs")
st.text_input("find older runs by name or id", key="cmp.search", max_chars=200, placeholder="a name or an id")
runs = reachable_runs()
if not runs:
    st.info("No stored runs with data yet: start one in the Lab or on the Real text page.")
    st.stop()
by_id = {r["id"]: r for r in runs}
fresh = st.query_params.to_dict() != ss.get("cmp.sig")  # a link, not the URL this page wrote last
problems: list[str] = []
if fresh or "cmp.runs" not in ss:
    ss["cmp.runs"] = linked_runs(by_id, problems)
ss["cmp.runs"] = [i for i in ss.get("cmp.runs", []) if i in by_id]  # a run deleted meanwhile
c = st.columns([3, 1.2, 0.6])
chosen = c[0].multiselect(
    "runs",
    list(by_id),
    key="cmp.runs",
    format_func=lambda i: f"{by_id[i]['name']} · {kind_words(kind_of(by_id[i]))} · {i} · {by_id[i]['status']}",
)
kinds = {kind_of(by_id[i]) for i in chosen} or {kind_of(runs[0])}
metric = metric_ui(kinds, fresh, problems, c[1])
logx = c[2].checkbox("log x", value=True, key="cmp.logx")
for problem in problems:
    st.warning(plain(problem))  # URL text: shown as typed
lecture = {k: v for k, v in st.query_params.to_dict().items() if k == "lecture"}
ss["cmp.sig"] = {**lecture, "runs": ",".join(chosen)} | ({"metric": metric} if metric else {})
st.query_params.from_dict(ss["cmp.sig"])

if len(kinds) > 1:
    which = " and ".join(f"{kind_words(k)} runs" for k in sorted(kinds))
    shared = ", ".join(metric_words(m) for m in overlaid_metrics(kinds))
    st.info(
        f"{which[0].upper() + which[1:]} record different metrics: together they share "
        + (f"only the {shared}" if shared else "none")
        + ". Pick runs of one kind to overlay any of its metrics."
    )
if chosen and metric is not None:
    names = legend(chosen, by_id)
    lines = [
        (f"{names[i]} · {what}" if what else names[i], x, y)
        for i in chosen
        for what, x, y in compare_series(i, metric, by_id[i]["last_step"] or 0)
    ]
    plot_ui(charts_pages.overlay(lines, metric, logx, font()), "cmp-chart", f"compare-{metric}-{'-'.join(chosen)}")
    notes = [views()[k].compare_note for k in sorted(kinds) if views()[k].compare_note]
    st.caption(
        " ".join(notes) + " Each legend names a run by the settings that differ among the chosen runs of its kind "
        "(by its name when none do). Losses are drawn on a log axis (they fall towards 0)."
    )
