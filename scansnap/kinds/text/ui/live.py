"""The Real text page's live area: a fragment that re-runs every tick only while the run trains.

Each chart is built once per (run, last stored step, font, cursor, whether it finished) and shared
by every session watching that run (an LRU bounded in bytes); the attention maps of a stored step
never change and are cached per (run, step, layer, font).  While the run trains the maps follow its
last snapshot; when it is paused or done, a scrubber picks any stored step.  Fig. 7's row shows one
layer at the run's iterations 0, ¼, ½ and its end (the snapshot schedule always holds them).

In lecture mode the first screen is the story (one sentence from the measurements,
:func:`scansnap.kinds.text.paper.text_view.story`) and four charts that fill it (``text-hero``, fitted by the
browser as the Lab's: the entropy per layer, layer 0's live attention map, the loss, the common and
distinct words); the verdicts, explanations and the other maps come below.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st
from cachetools import LRUCache

from scansnap.kinds.text.paper.text_view import groups_sentence, live_verdict, story
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.contexts import WINDOW as CONTEXT_WINDOW
from scansnap.kinds.text.ui import charts as text_charts
from scansnap.kinds.text.ui import figures
from scansnap.kinds.text.ui.history import TextHistory
from scansnap.kinds.text.ui.sentence import sentence_ui
from scansnap.paper.items.costs import about
from scansnap.ui.caches import BOUNDS_MB, byte_lru
from scansnap.ui.live.figure import live_payload, live_plot_ui, plotly_loader_ui
from scansnap.ui.live.frame import Watched, live_frame
from scansnap.ui.resources import service
from scansnap.ui.text import plain, quoted_words
from scansnap.ui.widgets import LIVE_STYLE, font, lecture_on

ss = st.session_state
_STYLE = LIVE_STYLE
STATICS = ("probe_window_tokens", "uniform_entropy", "uniform_share_frequent", "frequent_tokens", "probe_window_index")
GROUP_STATICS = (
    "uniform_share_common",
    "uniform_share_distinct",
    "common_tokens",
    "distinct_tokens",
    "common_size",
    "distinct_size",
)  # runs stored before the groups were measured lack them
Charts = tuple[tuple[str, str, int], ...]  # (key, live_payload JSON, bytes)
HERO_MAP_LABELS = text_charts.FEW_LABELS  # words labelled on the lecture screen's map (every third of a 35-word window)


def text_live_area() -> None:
    rid = ss.get("text.run")
    if not rid:
        st.info("Pick a preset or set the knobs (sidebar), then press **Start**: the charts appear here, live.")
        return
    plotly_loader_ui()
    st.html(f"<style>{_STYLE}</style>")
    live_frame(rid, "text", _area)


def _area(rid: str, watched: Watched) -> None:
    s, info = watched.status, watched.info
    cfg = TextRunConfig.from_json(info["config_json"])
    status, step = watched.state
    last = info["last_step"] if info["last_step"] is not None else -1
    left = f" · {about(s.left_s)} left" if s is not None and s.left_s is not None else ""
    lecture = lecture_on()
    head = st.container(key="text-story") if lecture else st.container()
    with head:
        st.markdown(
            f"**{status}** · step {step} / {cfg.optim.steps}{left} · last snapshot {max(last, 0)} · run `{rid}`"
        )
        if (s and s.message) or (not s and info["message"]):
            st.caption(plain((s.message if s else None) or info["message"]))
    statics = _statics_of(rid)
    if last < 0 or statics is None:
        st.caption("The worker is loading the corpus and building the model: the first snapshot comes next.")
        return
    hero = st.container() if lecture else None  # on a lecture's first screen: above the scrubber
    cursor = None if watched.active else _scrub(rid)
    view = _charts(rid, last, font(), cursor, status == "finished")
    tick = (f"{rid}@{last}", f"{cursor}/{font()}")  # built at step `last`; the view: scrubbed step, font
    at = cursor if cursor is not None else last
    with head:
        st.markdown(view.story)
    if hero is not None:
        live_map = _map_charts(rid, [(at, 0, f"Layer 0's attention at step {at}")], font(), HERO_MAP_LABELS)
        by_key = {c[0]: c for c in view.charts_with_sizes}
        with hero:
            _grid((by_key["H"], *live_map, by_key["loss"], by_key["groups"]), "text-hero", tick)
    else:  # the charts first (the first screen, at 1440×900 with the sidebar open), what was measured below
        _grid(view.charts_with_sizes, "text-charts", tick)
    st.markdown(view.caption)
    sentence_ui(rid, cfg, at, font(), tick)
    _maps(rid, cfg, (at, last), tick)


# ------------------------------------------------------------------------------ cached, shared
_STATICS: LRUCache[str, dict[str, np.ndarray]] = LRUCache(
    BOUNDS_MB["text statics"] * 2**20, getsizeof=lambda a: sum(x.nbytes for x in a.values())
)
_STATICS_LOCK = threading.Lock()


def _statics_of(rid: str) -> dict[str, np.ndarray] | None:
    """The few statics the page shows, kept once complete (the worker writes them when it starts)."""
    with _STATICS_LOCK:
        got = _STATICS.get(rid)
    if got is None:
        everything = service().stored.statics(rid)  # a text run's statics are small (no vocabulary)
        if not all(k in everything for k in STATICS):
            return None
        got = {k: everything[k] for k in (*STATICS, *GROUP_STATICS) if k in everything}
        with _STATICS_LOCK:
            _STATICS[rid] = got
    return got


@dataclass(frozen=True)
class View:
    """What the live area shows of a run at one snapshot: the story, the caption and the line charts."""

    story: str
    caption: str
    charts_with_sizes: Charts


@byte_lru("text charts")  # a View's bytes: its strings (scansnap.ui.caches.nbytes)
def _charts(rid: str, last: int, fs: int, cursor: int | None, finished: bool) -> View:
    """The story, the caption and the three line charts of run ``rid`` at its snapshot ``last``."""
    hist = TextHistory(rid)
    hist.update(service().stored, upto=last)  # the step the page shows, read once per tick (_area)
    st_ = _statics_of(rid) or {}
    steps, H = hist.layer_metric("attn_entropy")
    uniform = float(st_.get("uniform_entropy", np.nan))
    figs = [
        ("H", figures.entropy_figure(hist, st_, fs, cursor)),
        ("groups", figures.groups_figure(hist, st_, fs, cursor)),
        ("loss", figures.loss_figure(hist, fs, cursor)),
    ]
    charts = tuple((k, p, len(p)) for k, p in ((k, live_payload(f, f"scansnap-{rid}-{k}")) for k, f in figs))
    return View(story(steps, H, uniform), measured(hist, steps, H, uniform, st_, finished), charts)


def measured(hist: TextHistory, steps: np.ndarray, H: np.ndarray, uniform: float, st_: dict, finished: bool) -> str:
    """The caption: what was measured, on what; JoMA's drop and rebound per layer as the live verdict
    reads them (too early, measured, not measured); Scan & Snap's common and distinct words."""
    if len(steps) == 0:
        return ""
    window = int(st_.get("probe_window_index", 0))
    lines = [
        f"Measured on window {window} of the probe streams (the same words at every step): attention entropy of "
        f"each layer, mean over heads and query positions (uniform causal attention: {uniform:.2f} nats; lower = "
        f"sparser); training and validation loss.",
        "JoMA's sparser-then-denser, read on the curves smoothed over 5 snapshots: "
        + "; ".join(live_verdict(steps, H[:, k], finished).sentence(k) for k in range(H.shape[1]))
        + ".",
    ]
    _, common = hist.layer_metric("attn_share_common")
    _, distinct = hist.layer_metric("attn_share_distinct")
    if common.size and distinct.size and "uniform_share_common" in st_:
        lines.append(
            groups_sentence(
                common[:, 0], distinct[:, 0], float(st_["uniform_share_common"]), float(st_["uniform_share_distinct"])
            )
            + f" Common ({int(st_['common_size'])} words): {quoted_words(st_['common_tokens'])}; distinct "
            f"({int(st_['distinct_size']):,} words), e.g. {quoted_words(st_['distinct_tokens'])}; the most "
            f"frequent: {quoted_words(st_.get('frequent_tokens', ()))}, … A word's group is measured on the "
            f"training text: how much its presence in the {CONTEXT_WINDOW} words before a word tells about the "
            "next word (common: least, distinct: most)."
        )
    return "\n\n".join(x for x in lines if x)


@byte_lru("text charts")
def _map(rid: str, step: int, layer: int, fs: int, title: str, scale: bool, labels: int) -> str:
    """One stored attention map (head mean) as a live payload (KeyError when the step is not stored:
    an error is not cached)."""
    maps = service().stored.snapshot(rid, step)["attn_map_mean"]
    words = (_statics_of(rid) or {}).get("probe_window_tokens", np.array([], dtype=str))
    fig = figures.map_figure(maps, layer, list(words), title, fs, scale, labels)
    return live_payload(fig, f"scansnap-{rid}-attention-L{layer}-step{step}")


# ------------------------------------------------------------------------------ widgets
def _scrub(rid: str) -> int | None:
    steps = service().stored.steps(rid)
    if len(steps) < 2:
        return None
    return int(
        st.select_slider(
            "step (scrub through the stored snapshots: maps and cursor)", steps, steps[-1], key=f"text.scrub.{rid}"
        )
    )


def quarter_steps(steps: int) -> list[int]:
    """Fig. 7's columns: iterations 0, ¼, ½ and the end of a run of ``steps`` steps."""
    return [round(q * steps) for q in (0.0, 0.25, 0.5, 1.0)]


def _maps(rid: str, cfg: TextRunConfig, steps: tuple[int, int], tick: tuple[str, str]) -> None:
    """The attention maps at step ``at`` and Fig. 7's row, of the steps stored up to ``last`` (``steps``)."""
    (at, last), L, fs = steps, cfg.model.n_layers, font()
    st.subheader(f"Attention maps at step {at}")
    st.caption(
        "The probe window's attention a_ij (mean over heads): row = query word i, column = key word j ≤ i; "
        "bright = much attention. Sparse attention is a few bright cells per row."
    )
    _grid(_map_charts(rid, [(at, k, f"layer {k}") for k in range(L)], fs), "text-maps", tick)
    st.subheader("Fig. 7: one layer at iterations 0, ¼, ½ and the end")
    layer = 0
    if L > 1:
        layer = int(st.segmented_control("layer", range(L), default=0, required=True, key=f"text.fig7layer.{rid}"))
    stored = {s for s in service().stored.steps(rid) if s <= last}  # a snapshot stored since: next tick
    quarters = [q for q in quarter_steps(cfg.optim.steps) if q in stored]
    _grid(_map_charts(rid, [(q, layer, f"iteration {q}") for q in quarters], fs), "text-fig7", tick)
    missing = [q for q in quarter_steps(cfg.optim.steps) if q not in stored]
    if missing:
        st.caption(f"Not reached yet: iteration {', '.join(map(str, missing))}.")


def _map_charts(
    rid: str, panels: Sequence[tuple[int, int, str]], fs: int, labels: int = text_charts.MAX_TOKEN_LABELS
) -> Charts:
    out = []
    for i, (step, layer, title) in enumerate(panels):
        try:
            payload = _map(rid, step, layer, fs, title, i == len(panels) - 1, labels)
        except KeyError:  # rewound by a resume, stored again in a moment
            continue
        out.append((f"map-{i}", payload, len(payload)))
    return tuple(out)


def _grid(charts: Charts, key: str, tick: tuple[str, str]) -> None:
    """The charts in one container laid out by CSS (scansnap/assets/live.css); each updates in place (``tick``:
    the tick they belong to and the view they show, for the browser's queue: ``live_plot_ui``)."""
    with st.container(key=key):
        for k, data, _ in charts:
            live_plot_ui(data, f"{key}-{k}", *tick)
