"""The Real text page's live area: a fragment that re-runs every tick only while the run trains.

Each chart is built once per (run, last stored step, font, cursor) and shared by every session
watching that run (an LRU bounded in bytes); the attention maps of a stored step never change and
are cached per (run, step, layer, font).  While the run trains the maps follow its last snapshot;
when it is paused or done, a scrubber picks any stored step.  Fig. 7's row shows one layer at the
run's iterations 0, ¼, ½ and its end (the snapshot schedule always holds them).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import streamlit as st
from cachetools import LRUCache

from engine.core.text.config import TextRunConfig
from engine.paper.text_view import drop_rebound, summary
from ui import text_charts
from ui.caches import BOUNDS_MB, byte_lru
from ui.live.area import plotly_loader_ui
from ui.live.figure import live_payload, live_plot_ui
from ui.live.frame import Watched, live_frame
from ui.resources import service
from ui.text import plain
from ui.text_history import TextHistory
from ui.widgets import LIVE_STYLE, font, lecture_on

ss = st.session_state
_STYLE = LIVE_STYLE
STATICS = ("probe_window_tokens", "uniform_entropy", "uniform_share_frequent", "frequent_tokens", "probe_window_index")
Charts = tuple[tuple[str, str, int], ...]  # (key, live_payload JSON, bytes)


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
    st.markdown(f"**{status}** · step {step} / {cfg.optim.steps} · last snapshot {max(last, 0)} · run `{rid}`")
    if (s and s.message) or (not s and info["message"]):
        st.caption(plain((s.message if s else None) or info["message"]))
    statics = _statics_of(rid)
    if last < 0 or statics is None:
        st.caption("The worker is loading the corpus and building the model: the first snapshot comes next.")
        return
    cursor = None if watched.active else _scrub(rid)
    caption, charts = _charts(rid, last, font(), cursor)
    st.markdown(caption)
    tick = (f"{rid}@{last}", f"{cursor}/{font()}")  # built at step `last`; the view: scrubbed step, font
    _grid(charts, "text-charts-wide" if lecture_on() else "text-charts", tick)
    _maps(rid, cfg, (cursor if cursor is not None else last, last), tick)


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
        got = {k: everything[k] for k in STATICS}
        with _STATICS_LOCK:
            _STATICS[rid] = got
    return got


@byte_lru("text charts")
def _charts(rid: str, last: int, fs: int, cursor: int | None) -> tuple[str, Charts]:
    """The caption and the three line charts of run ``rid`` at its snapshot ``last``."""
    hist = TextHistory(rid)
    hist.update(service().stored, upto=last)  # the step the page shows, read once per tick (_area)
    st_ = _statics_of(rid) or {}
    steps, H = hist.layer_metric("attn_entropy")
    marks = [drop_rebound(steps, H[:, k]) for k in range(H.shape[1])]
    uniform = float(st_.get("uniform_entropy", np.nan))
    figs = [
        ("H", text_charts.entropy_chart(steps, H, uniform, marks, fs, cursor)),
        ("share", _share(hist, st_, fs, cursor)),
        ("loss", _loss(hist, fs, cursor)),
    ]
    charts = tuple((k, p, len(p)) for k, p in ((k, live_payload(f, f"scansnap-{rid}-{k}")) for k, f in figs))
    return measured(steps, H, uniform, st_), charts


def _share(hist: TextHistory, st_: dict, fs: int, cursor: int | None) -> dict:
    steps, share = hist.layer_metric("attn_share_frequent")
    top = len(st_.get("frequent_tokens", ()))
    return text_charts.share_chart(steps, share, float(st_.get("uniform_share_frequent", np.nan)), top, fs, cursor)


def _loss(hist: TextHistory, fs: int, cursor: int | None) -> dict:
    steps, val = hist.run_metric("val_loss")
    train = hist.run_metric("train_loss")[1]
    ppl = hist.run_metric("val_ppl")[1]
    return text_charts.loss_chart(steps, train, val, ppl, fs, cursor)


def measured(steps: np.ndarray, H: np.ndarray, uniform: float, st_: dict) -> str:
    """The caption: what was measured, on what, and JoMA's drop-then-rebound per layer, with numbers."""
    if len(steps) == 0:
        return ""
    window = int(st_.get("probe_window_index", 0))
    words = ", ".join(str(w) for w in st_.get("frequent_tokens", ())[:8])
    lines = [
        f"Measured on validation window {window} (the same words at every step): attention entropy of each "
        f"layer, mean over heads and query positions (uniform causal attention: {uniform:.2f} nats; lower = "
        f"sparser); attention share on the most frequent words ({plain(words)}, …); training and validation loss.",
        summary(steps, H) if len(steps) > 1 else "",
    ]
    return "\n\n".join(x for x in lines if x)


@byte_lru("text charts")
def _map(rid: str, step: int, layer: int, fs: int, title: str, scale: bool) -> str:
    """One stored attention map (head mean) as a live payload (KeyError when the step is not stored:
    an error is not cached)."""
    a = service().stored.snapshot(rid, step)["attn_map_mean"][layer]
    words = (_statics_of(rid) or {}).get("probe_window_tokens", np.array([], dtype=str))
    fig = text_charts.attention_map(a, list(words[: a.shape[0]]), title, fs, f"text-map-{layer}", scale)
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


def _map_charts(rid: str, panels: Sequence[tuple[int, int, str]], fs: int) -> Charts:
    out = []
    for i, (step, layer, title) in enumerate(panels):
        try:
            payload = _map(rid, step, layer, fs, title, i == len(panels) - 1)
        except KeyError:  # rewound by a resume, stored again in a moment
            continue
        out.append((f"map-{i}", payload, len(payload)))
    return tuple(out)


def _grid(charts: Charts, key: str, tick: tuple[str, str]) -> None:
    """The charts in one container laid out by CSS (assets/live.css); each updates in place (``tick``:
    the tick they belong to and the view they show, for the browser's queue: ``live_plot_ui``)."""
    with st.container(key=key):
        for k, data, _ in charts:
            live_plot_ui(data, f"{key}-{k}", *tick)
