"""The Runs page's picker and what its buttons do to the picked run: stop, resume (a paused run, or a
stopped or interrupted one from its checkpoint), re-run, rename, delete.

Every action is a button callback with the run's id as its argument: it runs before the page is drawn
again, so that drawing already shows what it did (the picker the new name, the table the new status),
and it says what it did once, at the top of the page (:func:`notice_ui`).  A refusal is the service's
message (:func:`~scansnap.ui.errors.guarded`).

The picker is set from the session on every run (:func:`pick_ui`).  Streamlit identifies a select
box's choice by its label, and a run's label (name · id · status · step) changes when the run is renamed,
stopped or resumed; the label the browser still held then matched no option on the next rerun, so
Streamlit silently fell back to the first run, and the click that came with that rerun (Resume from
checkpoint, say) landed on a page that no longer drew its button: it did nothing.  Set every run, the
browser always holds the current label, and a stale one still finds its run by the id inside it."""

from __future__ import annotations

from typing import Any

import streamlit as st

from scansnap.service.facade import (
    ANY_OWNER,
    OPERATOR_ENV,
    RECOVERABLE,
    TERMINAL,
    JobStatus,
    ServiceError,
    operator_configured,
)
from scansnap.ui import session
from scansnap.ui.errors import guarded
from scansnap.ui.kind_views import KindView
from scansnap.ui.resources import service
from scansnap.ui.run_list import (
    MAX_NAME,
    chosen_run,
    continued,
    deleted,
    name_problem,
    recovery_note,
    renamed,
    rerun_started,
    resumed,
    run_label,
    stopped,
)
from scansnap.ui.text import plain

ss = st.session_state
PICK, SHOWN, NEW_NAME, SURE, NOTICE = "runs.pick", "runs.shown", "runs.newname", "runs.sure", "runs.notice"
STOPPING = "runs.stopping"  # (run id, name) of a Stop its worker had not acted on when the page was redrawn
ACT_WAIT_S = 2.0  # a Stop or Resume waits (bounded) until the worker has acted, so the page redrawn shows it
WATCH_S = 1.0  # how often a page with a pending Stop looks whether it took effect


# ------------------------------------------------------------------------------ operator mode
def _leave_operator() -> None:
    ss["operator"] = ss["operator_tried"] = False


def operator_ui() -> None:
    """Operator mode for this session: a password field, or a way out once in."""
    if session.is_operator():
        st.success("Operator mode: you may manage every run.")
        st.button("Leave operator mode", key="runs.opleave", on_click=_leave_operator)
        return
    configured = operator_configured()
    help_ = (
        f"The key set in {OPERATOR_ENV} on the server: manage (rename, delete, stop, resume) every run "
        "for the rest of this browser session."
        if configured
        else f"Operator mode does not exist on this server: {OPERATOR_ENV} is not set."
    )
    st.text_input(
        "operator key",
        type="password",
        key="runs.opkey",
        disabled=not configured,
        help=help_,
        on_change=session.on_operator_key,
        args=("runs.opkey",),
    )
    if ss.get("operator_wait"):
        st.error(f"Too many wrong keys: try again in {ss['operator_wait']:.0f} s.")
    elif configured and ss.get("operator_tried"):
        st.error("That is not the operator key.")


# ------------------------------------------------------------------------------ the picker and the notice
PER_PAGE = 200  # runs the table and the picker list at once
WHOSE = {"everyone's": ANY_OWNER, "mine": "me", "the command line's": None}


def find_ui(me: str) -> tuple[list[dict[str, Any]], int, str]:
    """Search by name or id, whose runs, and which page of them: every stored run is reachable, not
    only the newest :data:`PER_PAGE`.  Returns (this page's runs, how many match, the filter in words:
    "" when there is none)."""
    c = st.columns([3, 2, 1.2], vertical_alignment="bottom")
    search = c[0].text_input("find a run", key="runs.search", max_chars=200, placeholder="a name or an id").strip()
    whose = c[1].radio("whose", list(WHOSE), key="runs.whose", horizontal=True)
    owner = me if WHOSE[whose] == "me" else WHOSE[whose]
    total = service().count_runs(search, owner)
    pages = max(1, -(-total // PER_PAGE))
    page = int(c[2].number_input("page", 1, pages, key="runs.page")) if pages > 1 else 1
    runs = service().find_runs(search, owner, (min(page, pages) - 1) * PER_PAGE, PER_PAGE)
    words = filter_words(search, whose)
    if total > len(runs):
        first = (min(page, pages) - 1) * PER_PAGE + 1
        shown = f"Runs {first:,}–{first + len(runs) - 1:,} of {total:,}"
        st.caption(f"{shown} {words}, newest first." if words else f"{shown}, newest first.")
    elif words and runs:
        st.caption(f"{total:,} run{'' if total == 1 else 's'} {words}.")
    return runs, total, words


def filter_words(search: str, whose: str) -> str:
    """The Runs page's filter in words ("matching “lr 2” of yours"), "" for none."""
    mine = {"mine": "of yours", "the command line's": "from the command line"}.get(whose, "")
    return " ".join(w for w in (f"matching “{search}”" if search else "", mine) if w)


def pick_ui(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The run picker over ``runs`` (newest first, not empty); returns the picked run.  Another run than
    the last one shown gets its own name in the rename box and the delete check cleared."""
    by_id = {r["id"]: r for r in runs}
    rid = chosen_run(ss.get(PICK), ss.get(SHOWN), list(by_id))
    if rid != ss.get(SHOWN):
        ss[NEW_NAME], ss[SURE] = str(by_id[rid]["name"])[:MAX_NAME], False
    ss[PICK] = ss[SHOWN] = rid  # the browser is sent this run's label as it reads now (module docstring)
    st.selectbox("run", list(by_id), key=PICK, format_func=lambda i: run_label(by_id[i]))
    return by_id[rid]


def notice_ui() -> None:
    """What the last action did, once (it survives the rerun that its button started)."""
    msg = ss.pop(NOTICE, None)
    if msg:
        st.success(plain(msg), icon="✅")


def stop_watch_ui() -> None:
    """While a Stop is pending (its worker was still starting, say), a fragment looks every :data:`WATCH_S`
    and redraws the page once the run has stopped: Stop gives way to Resume from checkpoint by itself."""
    pending = ss.get(STOPPING)
    if pending:
        st.fragment(_watch_stop, run_every=WATCH_S)(*pending)


def _watch_stop(rid: str, name: str) -> None:
    s = service().status(rid)
    if s is None or s.status in TERMINAL:
        ss.pop(STOPPING, None)
        _say(stopped(name, s.step if s else (service().run(rid) or {}).get("last_step") or 0, True))
        st.rerun(scope="app")


def _say(msg: str) -> None:
    ss[NOTICE] = msg


def _stored(rid: str) -> dict[str, Any]:
    info = service().run(rid)
    if info is None:
        raise ServiceError(f"run {rid} is no longer in the run store: someone deleted it meanwhile")
    return info


def _settled(rid: str, done: Any) -> JobStatus | None:
    """The run's job status once ``done(status)`` holds, or after :data:`ACT_WAIT_S` (None: no job)."""
    service().wait_for(rid, done, ACT_WAIT_S)
    return service().status(rid)


# ------------------------------------------------------------------------------ the actions (callbacks)
# A click whose run a fragment's rerun interrupts has its callback applied twice (Streamlit re-applies the
# trigger): Stop, Resume and Resume from checkpoint do nothing when their run is already so.
def _live(rid: str) -> JobStatus | None:
    s = service().status(rid)
    return s if s is not None and s.status not in TERMINAL else None


@guarded
def stop(rid: str) -> None:
    info = _stored(rid)
    if _live(rid) is None:
        return
    service().stop(rid, session.actor())
    s = _settled(rid, lambda s: s.status in TERMINAL)
    done = s is None or s.status in TERMINAL
    if not done:
        ss[STOPPING] = (rid, info["name"])
    _say(stopped(info["name"], s.step if s else info["last_step"] or 0, done))


@guarded
def unpause(rid: str) -> None:
    info, s = _stored(rid), _live(rid)
    if s is None or s.status != "paused":
        return
    service().resume(rid, session.actor())
    s = _settled(rid, lambda s: s.status != "paused")
    _say(continued(info["name"], s.step if s else info["last_step"] or 0, s.status if s else None))


@guarded
def resume_stored(rid: str) -> None:
    info = _stored(rid)
    if _live(rid) is not None:
        return
    step = service().checkpoint_step(rid)
    service().resume_stored(rid, session.actor())
    s = _settled(rid, lambda s: s.status != "queued")
    _say(resumed(info["name"], step, s.status if s else None))


@guarded
def rerun(rid: str) -> None:
    info = _stored(rid)
    new = service().rerun(rid, session.actor())
    s = _settled(new, lambda s: s.status != "queued")
    ss[PICK] = new  # the page shows the new run
    _say(rerun_started(info["name"], new, s.status if s else None))


@guarded
def rename(rid: str) -> None:
    info = _stored(rid)
    new = str(ss.get(NEW_NAME) or "").strip()
    problem = name_problem(new, info["name"])
    if problem:
        raise ServiceError(problem)
    service().rename(rid, new, session.actor())
    ss[NEW_NAME] = new
    _say(renamed(info["name"], new))


@guarded
def delete(rid: str) -> None:
    info = _stored(rid)
    snapshots = len(service().stored.steps(rid))
    service().delete(rid, session.actor())
    ss[SURE] = False
    if (ss.get(STOPPING) or ("",))[0] == rid:
        ss.pop(STOPPING)
    _say(deleted(info["name"], rid, snapshots))


# ------------------------------------------------------------------------------ the buttons
def controls_ui(run: dict[str, Any], view: KindView, allowed: bool) -> None:
    """Open the run; stop or resume it while it trains, or resume or re-run it once it stopped."""
    rid, c = run["id"], st.columns(4)
    if view.page and c[0].button(f"Open in {view.page_title}", key="runs.open", type="primary"):
        st.switch_page(view.page, query_params={"run": rid})
    if view.is_sweep(run) and c[1].button("Open in Sweep", key="runs.sweep"):
        st.switch_page("app_pages/sweep.py", query_params={"run": rid})
    live = service().status(rid)
    if live is not None and live.status not in TERMINAL:
        c[2].button("⏹ Stop", key="runs.stop", disabled=not allowed, on_click=stop, args=(rid,))
        if live.status == "paused":
            c[3].button("▶ Resume", key="runs.resume", disabled=not allowed, on_click=unpause, args=(rid,))
    elif run["status"] in RECOVERABLE:
        recovery_ui(run, allowed)


def recovery_ui(run: dict[str, Any], allowed: bool) -> None:
    """A stopped or interrupted run: resume it from its checkpoint (owner or operator), or train it again."""
    msg = plain(run["message"]) if run["message"] else None
    st.warning(recovery_note(run["status"], run["last_step"], msg), icon="⚠️")
    c, rid = st.columns(2), run["id"]
    c[0].button(
        "Resume from checkpoint",
        key="runs.ckpt",
        type="primary",
        disabled=not allowed,
        help="continue from the last checkpoint; the result is the same as an uninterrupted run"
        if allowed
        else "only the browser that started this run (or the operator) may resume it",
        on_click=resume_stored,
        args=(rid,),
    )
    c[1].button(
        "Re-run from scratch",
        key="runs.rerun",
        help="train the same config (seed included) again as a new run of yours",
        on_click=rerun,
        args=(rid,),
    )


def manage_ui(run: dict[str, Any], allowed: bool) -> None:
    """Rename or delete the run (owner or operator)."""
    rid = run["id"]
    with st.expander("Rename or delete"):
        if not allowed:
            who = "it was created from the command line" if run["owner"] is None else "another browser started it"
            st.caption(
                f"Read-only: {who}, so only its owner or the operator may rename, delete, stop or resume it. "
                "You may open, compare, export and re-run it."
            )
        st.text_input("new name", key=NEW_NAME, disabled=not allowed, max_chars=MAX_NAME)
        st.button("Rename", key="runs.rename", on_click=rename, args=(rid,), disabled=not allowed)
        sure = st.checkbox("yes, delete this run and all its data", key=SURE, disabled=not allowed)
        st.button("Delete", key="runs.delete", disabled=not (sure and allowed), on_click=delete, args=(rid,))
