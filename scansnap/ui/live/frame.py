"""The live area's frame, one for every kind's page: a fragment that reruns on the server's tick
budget while the run trains, takes a render slot and an error boundary, tells the service the run is
watched, reruns the whole page once when the run's state moved under the controls, and records what
each tick cost.  A page supplies only the body that draws one tick (:class:`Watched` says what for).

Session keys (under the page's prefix): ``<prefix>.active`` (the run trained at the last full rerun),
``<prefix>.tick`` (the fragment's refresh, s), ``<prefix>.ctl_drawn`` (what the controls drawn show:
:func:`~scansnap.ui.run_actions.controls_for`; the page's control bar sets it).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from scansnap.service.facade import JobStatus, live_refresh_s
from scansnap.ui import run_actions
from scansnap.ui.errors import boundary
from scansnap.ui.live.slots import SLOTS
from scansnap.ui.live.tickbudget import TickBudget
from scansnap.ui.resources import service
from scansnap.ui.text import plain

ss = st.session_state
TICK_S = live_refresh_s()  # the fastest refresh (SCANSNAP_TICK_S); the budget stretches it under load


@st.cache_resource(show_spinner=False)
def tick_budget() -> TickBudget:
    """One budget for the whole server: the live areas of all sessions share one core (scansnap/ui/tickbudget.py)."""
    return TickBudget(base=TICK_S)


def session_id() -> str:
    """This browser session's id: the tick budget's key."""
    ctx = get_script_run_ctx()
    return ctx.session_id if ctx is not None else "no-session"


@dataclass(frozen=True)
class Watched:
    """One tick's view of the run: whether it trains now, its live status (None once its job is gone)
    and its stored row."""

    active: bool
    status: JobStatus | None
    info: dict[str, Any]

    @property
    def state(self) -> tuple[str, int]:
        """(status, step): the job's while it has one, else the store's."""
        s, info = self.status, self.info
        return (s.status, s.step) if s else (info["status"], info["last_step"] or 0)


Body = Callable[[str, Watched], None]


def live_frame(rid: str, prefix: str, body: Body) -> None:
    """Draw run ``rid``'s live area with ``body``: in a fragment that reruns every ``<prefix>.tick``
    seconds while the run trains, and not at all once it stopped."""
    ss[f"{prefix}.active"] = run_actions.active(rid, prefix)
    ss[f"{prefix}.tick"] = tick_budget().tick(session_id()) if ss[f"{prefix}.active"] else None
    if not ss[f"{prefix}.active"]:
        tick_budget().forget(session_id())
    st.fragment(_tick, run_every=ss[f"{prefix}.tick"])(rid, prefix, body)


def _tick(rid: str, prefix: str, body: Body) -> None:
    with SLOTS.slot(), boundary():  # a fragment rerun does not pass through app.py: slot and boundary here too
        t0 = time.perf_counter()
        watched = _watch(rid, prefix)
        if watched is None:
            return
        body(rid, watched)
        if watched.active:
            tick_budget().record(session_id(), time.perf_counter() - t0)


def _watch(rid: str, prefix: str) -> Watched | None:
    """The run's state now; reruns the page once when the controls drawn no longer match it (it stopped
    training, another tab paused or resumed it, its worker acted on a control after the bar was drawn, or
    the tick budget moved), None when it was deleted."""
    service().watch(rid)  # a run that no page shows pauses itself after SCANSNAP_IDLE_PAUSE_S
    now_active = run_actions.active(rid, prefix)
    s = service().status(rid)
    drawn, tick = ss.get(f"{prefix}.ctl_drawn"), ss.get(f"{prefix}.tick")
    # also when the run stopped training between the bar and this frame in one script run: the frame then
    # ticks no more, and a bar left showing "⏸ Pause" on a paused run would stay so until the next click
    stale = drawn is not None and tuple(drawn) != run_actions.controls_for(s)
    retick = now_active and tick is not None and tick_budget().off_by(tick, session_id())
    if (ss.get(f"{prefix}.active") and not now_active) or stale or retick:
        ss[f"{prefix}.active"] = now_active
        st.rerun()  # once: the controls and run_every follow the new state (also when another tab acted)
    info = service().run(rid)
    if info is None:
        st.warning(f"run {plain(rid)} was deleted")
        return None
    return Watched(now_active, s, info)
