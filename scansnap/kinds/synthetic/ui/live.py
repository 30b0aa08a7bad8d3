"""The Lab's live area: a fragment that re-runs every 0.5 s only while a run is active.

Each tick takes the run's history, one object for every session showing the run (``run_history``:
what the store gained since, read once for all of them), says in one sentence which phase the run is
in (:mod:`scansnap.kinds.synthetic.paper.story`), redraws the charts from decimated, rounded arrays and measures the
JSON it sends.  When the run stops being active it triggers one full rerun so the controls refresh.
In lecture mode the three charts of the story come first, sized by the browser to fill the screen
under the control bar (``scansnap/ui/live/figure.py``).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import numpy as np
import streamlit as st
from cachetools import LRUCache

from scansnap.core.schedule import topk_note
from scansnap.kinds.synthetic.paper.claims import run_claims
from scansnap.kinds.synthetic.paper.observe import observed
from scansnap.kinds.synthetic.paper.story import Story, run_story
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.ui import view
from scansnap.kinds.synthetic.ui.badges import verdicts_ui
from scansnap.kinds.synthetic.ui.chart_list import CHARTS
from scansnap.kinds.synthetic.ui.charts import View, figure
from scansnap.paper.history import RunHistory
from scansnap.paper.verdicts import Verdict
from scansnap.ui.caches import BOUNDS_MB
from scansnap.ui.live.figure import live_payload, live_plot_ui, plotly_loader_ui
from scansnap.ui.live.frame import Watched, live_frame
from scansnap.ui.live.run_data import run_history, run_statics
from scansnap.ui.text import plain
from scansnap.ui.widgets import font, lecture_on

ss = st.session_state


def live_area(title: str) -> None:
    """The live area of the run on screen; ``title``: the preset's, for the hint before any run."""
    rid = ss.get("lab.run")
    if not rid:
        if ss.get("lab.touched"):
            st.info(f"Press **▶ Start** to train “{plain(title)}”: the charts appear here and update live.")
        else:
            st.info("Pick a preset (sidebar), then press **▶ Start**: the charts appear here and update live.")
        return
    plotly_loader_ui()
    live_frame(rid, "lab", _live_area)


def _history(rid: str, stored_step: int | None) -> RunHistory:
    """The run's history, shared with every session showing it; this session's state keeps it alive."""
    hist = ss["lab.hist"] = run_history(rid, stored_step)
    return hist


def _live_area(rid: str, watched: Watched) -> None:
    now_active, s, info = watched.active, watched.status, watched.info
    hist, statics = _history(rid, info["last_step"]), run_statics(rid)
    cfg = RunConfig.from_json(info["config_json"])
    status, step = watched.state
    story_ui = st.container(key="lab-story")
    lecture = lecture_on()
    hero = st.container(key="lab-hero") if lecture else None
    with st.container(key="lab-view", horizontal=True, gap="medium", vertical_alignment="bottom"):
        r, n, q = view.selectors(cfg, statics, rid)  # one row above the charts: n, q and the scrubber
        cursor = view.scrub(hist, rid, now_active)
        indicative = view.indicative_toggle(statics, r)
    tick = _tick(hist, statics, info["config_json"], rid, View(r, n, q, cursor, font(), indicative), status)
    payload = ss["lab.payload"] = sum(nbytes for _, _, nbytes in tick.charts)
    with story_ui:
        _story_ui(tick.story, step, cfg.optim.steps, lecture, s.waiting if s else None)
    _layout_ui(tick, hero)
    with st.container():  # under the charts: what came before, the run's state, notes (no chart moves)
        if not lecture:  # a projector shows the story only
            refresh = f" · refresh {ss['lab.tick']:.1f} s" if now_active and ss.get("lab.tick") else ""
            st.caption(_story_more(tick.story, lecture))
            st.caption(  # what a developer reads (bytes a tick sends, its refresh) is in the tooltip
                f"{status} · step {step} / {cfg.optim.steps} · last snapshot {hist.last_step} · run `{rid}`",
                help=f"{payload / 1024:.0f} KB this tick{refresh}",
            )
        if s and s.message and not s.waiting:  # the story already says what a queued run waits for
            st.caption(plain(s.message))
        if hist.topk:
            K, M = statics["P"].shape
            st.info(topk_note(cfg.n_replicas, len(statics["query_tokens"]), K, M))


HERO = ("cn", "B", "H", "cnh")  # lecture mode: c_n over time, the snap, the entropy (and the heatmap)


def _story_ui(story: Story, step: int, total: int, lecture: bool, waiting: str | None) -> None:
    """The phase the run is in now, in one sentence (large in lecture mode); on a projector, whether the
    theorems apply (one condition named) under it (else under the charts: the first chart stays on the
    first screen).  A queued run says instead what it waits for."""
    if waiting:
        st.markdown(f"**Step {step} of {total}** · {waiting}.")
        return
    st.markdown(f"**Step {step} of {total}** · {story.sentence}")
    if lecture and (more := _story_more(story, lecture)):
        st.caption(more)


def _story_more(story: Story, lecture: bool) -> str:
    """What came before (not on a projector) and whether the theorems' assumptions hold."""
    earlier = "" if lecture else story.earlier.capitalize()
    return " ".join(x for x in (f"{earlier}." if earlier else "", story.theory_note) if x)


# ------------------------------------------------------------------------------ one tick, shared
@dataclass(frozen=True)
class Tick:
    """What one tick of the live area shows: charts as (key, :func:`live_payload` JSON, bytes)
    and the verdict badges.  Each chart is built once per (run, last stored step, what it shows,
    font) and shared by every session showing the same thing: 50 students watching a broadcast
    cost one build per new snapshot, not fifty."""

    charts: tuple[tuple[str, str, int], ...]
    verdicts: tuple[Verdict, ...]
    story: Story
    id: str = ""  # run and step every chart of the tick was built at: the browser draws them together
    view: str = ""  # what they show (replica, n, q, scrubbed step, font): a new view is drawn chart by chart


TICK_BYTES = BOUNDS_MB["live charts"] * 2**20  # built chart payloads kept for every session to share
VERDICTS_BYTES = 4096  # a tick's four verdicts and its story, as counted against TICK_BYTES


def _entry_bytes(value: Any) -> int:
    """A chart entry (key, JSON, bytes) counts its JSON's bytes; verdicts and story a fixed amount."""
    return value[2] if isinstance(value[0], str) else VERDICTS_BYTES


_TICKS: LRUCache[tuple, Any] = LRUCache(TICK_BYTES, getsizeof=_entry_bytes)
_TICKS_LOCK = threading.Lock()


def _cached(key: tuple) -> Any:
    with _TICKS_LOCK:
        return _TICKS.get(key)


def _keep(key: tuple, value: Any) -> Any:
    with _TICKS_LOCK:
        _TICKS[key] = value
    return value


def _tick(
    hist: RunHistory,
    statics: dict[str, np.ndarray],
    cfg_json: str,
    rid: str,
    view: tuple,
    status: str | None = None,
) -> Tick:
    """The tick for this view (replica, n, q, cursor, font size) of run ``rid`` at its last stored
    step (``status``: the run's now, for the story's ending).  Each chart is cached on what it shows, so
    picking another n rebuilds only the charts of n."""
    r, n, q, cursor, fs, indicative = View(*view)
    tokens = not hist.topk  # before the first snapshot every chart shows its frame (no jump when it comes)
    stored = ("mf_steps" in statics, "theory_step" in statics)  # the twin and the theory come after the row
    charts_ = []
    for ch in (c for c in CHARTS if tokens or not c.tokens):
        shows = {"n": n, "q": q, "": None}[ch.shows]
        key = (rid, hist.last_step, ch.key, r, shows, cursor, fs, stored, indicative and ch.key == "B")
        got = _cached(key)
        if got is None:
            data = live_payload(figure(ch.key, hist, statics, view), f"scansnap-{rid}-{ch.file}")
            got = _keep(key, (ch.key, data, len(data)))
        charts_.append(got)
    vkey = (rid, hist.last_step, "verdicts", r, status)
    if (found := _cached(vkey)) is None:
        obs = observed(hist, statics, r, RunConfig.from_json(cfg_json))
        story = run_story(obs, obs.failed_plain.get("theorem4", ()), status, hist.metric("loss", r)[1])
        found = _keep(vkey, (tuple(run_claims(obs)), story))
    return Tick(tuple(charts_), *found, id=f"{rid}@{hist.last_step}", view="/".join(map(str, view)))


def _layout_ui(tick: Tick, hero: Any) -> None:
    """The charts the view shows, with the verdict badges: in lecture mode (``hero``: its container) the
    story's charts first, filling the screen, then the badges and the rest; else all the charts, then
    the badges (the first chart is on the first screen, under the story)."""
    shown = view.shown_charts(tuple(c[0] for c in tick.charts))
    charts_ = [c for c in tick.charts if c[0] in shown]
    if hero is not None:
        with hero:
            _charts([c for c in charts_ if c[0] in HERO], tick)
        verdicts_ui(list(tick.verdicts))
        with st.container(key="lab-more"):
            _charts([c for c in charts_ if c[0] not in HERO], tick)
    else:
        with st.container(key="lab-charts"):
            _charts(charts_, tick)
        verdicts_ui(list(tick.verdicts))


def _charts(charts_: list[tuple[str, str, int]], tick: Tick) -> None:
    """Charts in the current container, laid out by CSS (scansnap/assets/live.css): one element each, not the
    rows of columns of ``st.columns``.  Every chart updates in place (``live_plot_ui``: Plotly.react,
    no validation on the server, no remount in the browser); its element carries the CSS class
    ``st-key-lab-<chart key>``."""
    for key, data, _ in charts_:
        live_plot_ui(data, f"lab-{key}", tick.id, tick.view)
