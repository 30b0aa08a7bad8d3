"""What the live area shows of a run (the view): next token n, query q, replica, the scrubbed step and
which charts, picked with widgets whose changes go into the URL
(``scansnap.kinds.synthetic.ui.state.set_view``), and checked against the run when a link names them."""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from scansnap.kinds.synthetic.paper.observe import query_row
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.ui.state import INDICATIVE, set_view
from scansnap.paper.history import RunHistory

ss = st.session_state
SEGMENTS = 12  # up to this many choices: one button each (one click), more: a select box


def linked(key: str, count: int, default: int) -> int:
    """The view's ``key`` from the link if it is one of ``range(count)``, else ``default`` (a link's value
    beyond the run was already reported and dropped: :func:`scansnap.kinds.synthetic.ui.state.view_in_range`)."""
    value = ss.get("lab.view", {}).get(key)
    return default if value is None or value >= count else int(value)


def selectors(cfg: RunConfig, statics: dict[str, np.ndarray], rid: str) -> tuple[int, int, int]:
    """(replica r, next token n, query q), each remembered in the URL."""
    K, Q = statics["P"].shape[0], len(statics["query_tokens"])
    with st.container(horizontal=True, gap="medium"):  # one element for the row, not four (st.columns)
        n = _pick("next token n (c_n, B)", K, linked("n", K, 0), f"live.n.{rid}", "n")
        q0 = linked("q", Q, query_row(statics, n))
        q = _pick("query q (z_m)", Q, q0, f"live.q.{rid}.{n}", "q")
        r = 0
        if cfg.n_replicas > 1:
            ey, ez, seed = statics["eta_y"], statics["eta_z"], statics["seed"]
            key = f"live.r.{rid}"
            r = st.selectbox(
                "replica",
                range(cfg.n_replicas),
                index=linked("replica", cfg.n_replicas, 0),
                key=key,
                format_func=lambda i: f"{i}: η_Y={ey[i]:g}, η_Z={ez[i]:g}, seed {seed[i]}",
                on_change=lambda: set_view("replica", ss[key]),
            )
    return int(r), int(n), int(q)


def _pick(label: str, count: int, default: int, key: str, name: str) -> int:
    """One of ``range(count)``: buttons in a row for a few (one click to switch, and lighter for
    the browser to redraw on every tick than a select box), a select box for many."""
    remember: dict[str, Any] = dict(key=key, on_change=lambda: _remember(name, ss[key]))
    if count <= SEGMENTS:
        return int(st.segmented_control(label, range(count), default=default, required=True, **remember))
    return int(st.selectbox(label, range(count), index=default, **remember))


def _remember(name: str, value: int) -> None:
    set_view(name, value)
    if name == "n":  # the query shown follows the next token's own, unless picked again
        set_view("q", None)


def indicative_toggle(statics: dict[str, np.ndarray], r: int) -> bool:
    """Whether Theorem 4's curves are drawn where the theorem does not apply (off by default, kept in the
    link): a toggle, shown only when replica ``r`` is outside the theorem."""
    solid = statics.get("theory_solid")
    if solid is None or r >= len(solid) or bool(solid[r]):
        return False
    key = "live.indicative"
    on = ss.get("lab.view", {}).get("theory") == INDICATIVE
    st.toggle(
        "show Theorem 4's curve anyway",
        value=on,
        key=key,
        help="The theorem's conditions do not hold on this run, so its curve is only an indication of what it "
        "would predict; the caption under the chart says which condition fails.",
        on_change=lambda: set_view("theory", INDICATIVE if ss[key] else None),
    )
    return on


SCRUB_LABEL = "scrub through the stored steps (heatmap and cursor)"


def scrub(hist: RunHistory, rid: str, active: bool) -> int | None:
    """The stored step the heatmap and the cursors show (the link's ``at``, or the nearest stored step);
    while the run trains, the same slider, disabled at its last step (the page keeps its height)."""
    if active or len(hist.steps) < 2:
        last = hist.steps[-1] if hist.steps else 0
        st.select_slider(SCRUB_LABEL + " · when paused or finished", options=[last], value=last, disabled=True)
        return None
    at = ss.get("lab.view", {}).get("at")
    value = hist.steps[-1] if at is None else min(hist.steps, key=lambda s: abs(s - at))
    key = f"live.scrub.{rid}"
    return st.select_slider(
        SCRUB_LABEL,
        options=hist.steps,
        value=value,
        key=key,
        on_change=lambda: set_view("at", ss[key]),
    )


def shown_charts(keys: tuple[str, ...]) -> tuple[str, ...]:
    """The charts the view keeps, in page order (all when it names none)."""
    chosen = ss.get("lab.view", {}).get("charts")
    return tuple(k for k in keys if chosen is None or k in chosen)
