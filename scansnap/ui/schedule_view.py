"""The server's training slots on the Runs page: who holds each, who runs light without one, who
waits and for what (:meth:`scansnap.service.facade.LabService.schedule`)."""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from scansnap.service.facade import JobStatus
from scansnap.ui import session
from scansnap.ui.knobs import speed_label, status_speed
from scansnap.ui.resources import service


def _who(owner: str | None) -> str:
    if owner is None:
        return "command line"
    if owner == session.owner():
        return "you"
    return f"browser {owner[:8]}" if session.is_operator() else "another browser"


def _row(role: str, s: JobStatus, names: dict[str, str]) -> dict[str, Any]:
    return {
        "holds": role,
        "run": s.run_id,
        "name": names.get(s.run_id, ""),
        "owner": _who(s.owner),
        "status": s.status,
        "step": f"{s.step:,} / {s.total_steps:,}",
        "speed": speed_label(status_speed(s)),
        "shown on a page": f"{s.watched_s:.0f} s ago",
        "waits for": s.waiting or "",
    }


def _free(role: str) -> dict[str, Any]:
    """A slot nobody holds: blank cells, not "None"."""
    return {
        "holds": role,
        "run": "",
        "name": "",
        "owner": "",
        "status": "free",
        "step": "",
        "speed": "",
        "shown on a page": "",
        "waits for": "",
    }


def schedule_rows(names: dict[str, str]) -> list[dict[str, Any]]:
    """One row per slot (``slot 1`` … ``slot S``, ``free`` when nobody holds it), per light run and per
    queued run, in queue order."""
    sch = service().schedule()
    rows = [_row(f"slot {i + 1}", s, names) for i, s in enumerate(sch.holders)]
    rows += [_free(f"slot {i + 1}") for i in range(len(sch.holders), sch.slots)]
    rows += [_row("no slot (light)", s, names) for s in sch.light]
    rows += [_row(f"queue #{i + 1}", s, names) for i, s in enumerate(sch.queue)]
    return rows


def schedule_ui(names: dict[str, str]) -> None:
    """The slots table, with one sentence on the rules."""
    sch = service().schedule()
    st.subheader("Training slots")
    st.caption(
        f"{sch.slots} runs train at once (SCANSNAP_MAX_JOBS). A paused run holds no slot, and neither does a "
        f"run throttled to a sliver of a core (light); {sch.paused} paused runs wait for their owners. A run "
        "that no page shows for a while pauses itself (SCANSNAP_IDLE_PAUSE_S)."
    )
    st.dataframe(pd.DataFrame(schedule_rows(names)), hide_index=True, key="runs.slots")
