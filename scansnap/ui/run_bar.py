"""The run's control bar, drawn the same on the Lab and the Real text page.

One row with full labels (sticky in ``scansnap/assets/live.css``: it stays on screen while the charts
scroll): the *students watch* switch (:mod:`scansnap.ui.follow`), Start, Pause/Resume, N and Step N, Stop,
Reset, New seed and the speed.  The buttons act
through the page's :class:`~scansnap.ui.run_actions.RunActions`; a viewer of someone else's run sees its
real speed and cannot pause, stop or throttle it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

from scansnap.service.facade import JobStatus
from scansnap.ui import follow, knobs, session
from scansnap.ui.resources import service
from scansnap.ui.run_actions import RunActions, controls_for
from scansnap.ui.text import plain


def control_bar(
    run: RunActions, new_seed: Callable[[], None], wkey: Callable[[str], str], button_key: str, valid: bool
) -> JobStatus | None:
    """The bar of ``run``'s page (its widgets keyed ``<button_key>.start`` …, container ``<prefix>-bar``);
    returns the status of the run on screen (None when there is none)."""
    ss = st.session_state
    s = run.live_status()
    mine = session.owns(ss.get(f"{run.prefix}.run"))  # viewers of someone else's run watch it, never control it
    live, paused = ss[f"{run.prefix}.ctl_drawn"] = controls_for(s)  # the live frame reruns the page when stale

    def k(name: str) -> str:
        return f"{button_key}.{name}"

    with st.container(key=f"{run.prefix}-bar", horizontal=True, vertical_alignment="center", gap="small"):
        follow.students_switch(run.prefix, run.kind)
        tip = "train this config in the background" if mine else "train your own run of this config"
        st.button(
            "▶ Start",
            key=k("start"),
            type="primary",
            disabled=not valid or (live and mine),
            on_click=run.start,
            help=tip,
        )
        # Two widgets, not one relabelled: a button's id is its key, and a trigger that Streamlit replays
        # after a fragment's rerun interrupted the click's run calls the callback registered last, so one
        # key would let a Pause click, replayed after its rerun drew "Resume", resume the run at once.
        st.button(
            "▶ Resume" if paused else "⏸ Pause",
            key=k("resume" if paused else "pause"),
            disabled=not live or not mine,
            on_click=run.resume if paused else run.pause,
        )
        _step_and_reset(run, new_seed, k, wkey, valid, live, mine)
        speed_slider(run, wkey, s if live else None, mine)
    return s


def _step_and_reset(
    run: RunActions,
    new_seed: Callable[[], None],
    k: Callable[[str], str],
    wkey: Callable[[str], str],
    valid: bool,
    live: bool,
    mine: bool,
) -> None:
    """N and Step N, Stop, Reset and New seed: the bar's buttons after Start and Pause."""
    st.number_input(
        "N",
        min_value=1,
        max_value=100000,
        value=10,
        key=wkey("stepn"),
        label_visibility="collapsed",
        width=70,
        help="how many steps Step N takes",
    )
    st.button(
        "Step N",
        key=k("step"),
        disabled=(not valid and not live) or (live and not mine),
        on_click=run.step_n,
        args=(wkey("stepn"),),
    )
    st.button("⏹ Stop", key=k("stop"), disabled=not live or not mine, on_click=run.stop)
    st.button(
        "↺ Reset",
        key=k("reset"),
        disabled=not valid,
        on_click=run.reset,
        help="restart with the same config and seed",
    )
    st.button("🎲 New seed", key=k("seed"), disabled=not valid, on_click=new_seed)


def speed_slider(run: RunActions, wkey: Callable[[str], str], status: Any, mine: bool) -> None:
    """Steps per second, slow to fast: the run's real speed while it trains (a viewer sees it, only
    its owner changes it), else the speed the next run will take."""
    cur = st.session_state.get(f"{run.prefix}.speed", "max")
    if status is not None:
        cur = knobs.status_speed(status)
    st.select_slider(
        "speed (steps/s)",
        options=knobs.speed_options(cur),
        value=cur,
        key=wkey("speed"),
        format_func=knobs.speed_label,
        on_change=run.on_speed,
        args=(wkey("speed"),),
        disabled=status is not None and not mine,
        label_visibility="collapsed",
        width=150,
        help="story time: the whole run in 20 s, each tenfold of steps as long (the first steps slow, the "
        "later ones fast, as the log-step charts draw them); or steps per second; or as fast as it goes",
    )


def viewer_caption(run: RunActions, start_on: bool = True) -> None:
    """Someone who opened another browser's run watches it (no training of theirs) and is told whose run
    it is and what ▶ Start does for them (``start_on``: whether Start is enabled)."""
    rid = st.session_state.get(f"{run.prefix}.run")
    info = service().run(rid) if rid else None
    if info is not None and not session.may_manage(info):
        st.caption(viewer_note(rid, plain(info["name"]), run.is_live(), start_on))


def viewer_note(rid: str, name: str, live: bool, start_on: bool) -> str:
    """What a viewer of someone else's run may do, true to the buttons they see."""
    if live:
        whose = (
            f"📡 Watching run `{rid}` ({name}), started in another browser: only that browser (or the "
            "operator) can pause, stop or slow it."
        )
    else:
        whose = f"Run `{rid}` ({name}) was started in another browser: only that browser (or the operator) manages it."
    if not start_on:
        return f"{whose} ▶ Start (your own run of this config) is off: the message on this page says why."
    goes_on = " (this one goes on, unchanged)" if live else ""
    return f"{whose} ▶ Start or ↺ Reset trains your own run of this config{goes_on}, shown here instead."
