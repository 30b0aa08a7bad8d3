"""The controls of the run on screen, shared by the Lab and the Real text page: start, pause/resume,
step, stop, reset and speed (a run started with *students watch* on is published).  A page's run, its
step target, speed, error and preset live in the session under one prefix (``lab.`` or ``text.``); the
page supplies how its config is validated and written to the URL.  Every method that calls the service
facade is :func:`~scansnap.ui.errors.guarded`, so a refusal (ownership, budget) shows as its message."""

from __future__ import annotations

from collections.abc import Callable

import streamlit as st

from scansnap.service.facade import TERMINAL, JobStatus
from scansnap.ui.errors import guarded
from scansnap.ui.follow import publish_started
from scansnap.ui.knobs import speed_value
from scansnap.ui.resources import service
from scansnap.ui.session import actor, owns
from scansnap.ui.url_state import UrlState

CONTROL_WAIT_S = 0.5  # a button's rerun waits (bounded) until the worker has acted on it


def active(rid: str, prefix: str) -> bool:
    """Training now, or a paused run still taking the steps that Step N granted (``<prefix>.target``)."""
    s = service().status(rid)
    if s is None or s.status in TERMINAL:
        return False
    return s.status in ("queued", "running") or s.step < st.session_state.get(f"{prefix}.target", 0)


def controls_for(s: JobStatus | None) -> tuple[bool, bool]:
    """What the control bar shows for a run whose live status is ``s``: (live: Pause/Resume and Stop act on
    it, paused: the button says Resume)."""
    return s is not None and s.status not in TERMINAL, s is not None and s.status == "paused"


class RunActions:
    def __init__(self, state: UrlState, write_url: Callable[[], None]):
        self.prefix, self.kind, self.validate, self.stale = state.prefix, state.kind, state.validate, state.stale
        self.write_url = write_url

    def _k(self, name: str) -> str:
        return f"{self.prefix}.{name}"

    def live_status(self) -> JobStatus | None:
        rid = st.session_state.get(self._k("run"))
        return service().status(rid) if rid else None

    def is_live(self) -> bool:
        return controls_for(self.live_status())[0]

    @staticmethod
    def settle(rid: str, done: Callable[[JobStatus], bool]) -> None:
        """Wait (bounded) until the worker has acted on a control, so the rerun shows its effect."""
        service().wait_for(rid, done, CONTROL_WAIT_S)

    @guarded
    def start(self, paused: bool = False) -> None:
        ss, k = st.session_state, self._k
        cfg, err = self.validate(ss[k("cfg")])
        if cfg is None:
            ss[k("error")] = err
            return
        ss.pop(k("error"), None)
        svc, me = service(), actor()
        rid = svc.submit(cfg, me, name=cfg.name or ss[k("preset")], paused=True)
        speed = ss.get(k("speed"), "max")
        svc.set_speed(rid, speed_value(speed), me)
        publish_started(self.prefix, rid)  # before it trains: the hall sees its first step
        if not paused:
            svc.resume(rid, me)
            self.settle(rid, lambda x: x.status not in ("paused", "queued"))  # so the controls show "Pause"
        ss[k("run")], ss[k("target")] = rid, 0
        self.write_url()

    def stop_current(self) -> None:
        """Stop the run on screen if this session owns it and it trains (a viewer's Reset starts its own
        run and never stops the broadcast)."""
        rid = st.session_state.get(self._k("run"))
        if rid and owns(rid) and service().is_live(rid):
            service().stop(rid, actor())

    # Pause and Resume are two actions on two buttons (keys ``pause`` and ``resume``), each a no-op when its
    # run is already so: a click whose callback runs twice (Streamlit re-applies a button's trigger when a
    # fragment's rerun interrupts the click's run) cannot pause and then resume the run.
    @guarded
    def pause(self) -> None:
        s = self.live_status()
        if s is None or s.status in TERMINAL or s.status == "paused":
            return
        service().pause(s.run_id, actor())
        self.settle(s.run_id, lambda x: x.status == "paused" or x.status in TERMINAL)

    @guarded
    def resume(self) -> None:
        s = self.live_status()
        if s is None or s.status != "paused":
            return
        st.session_state[self._k("target")] = 0
        service().resume(s.run_id, actor())
        self.settle(s.run_id, lambda x: x.status != "paused")

    @guarded
    def step_n(self, key: str) -> None:
        n = max(1, int(st.session_state.get(key, 10)))
        if not self.is_live():
            self.start(paused=True)
        s = self.live_status()
        if s is not None and s.status not in TERMINAL:
            service().step(s.run_id, n, actor())
            st.session_state[self._k("target")] = s.step + n

    @guarded
    def stop(self) -> None:
        self.stop_current()
        rid = st.session_state.get(self._k("run"))
        if rid:
            self.settle(rid, lambda x: x.status in TERMINAL)

    @guarded
    def reset(self) -> None:
        """Restart with the same config, seed included."""
        self.stop()
        self.start()

    @guarded
    def on_speed(self, key: str) -> None:
        if self.stale(key):
            return
        speed = st.session_state[self._k("speed")] = st.session_state[key]
        rid = st.session_state.get(self._k("run"))
        if rid and self.is_live() and owns(rid):
            service().set_speed(rid, speed_value(speed), actor())
        self.write_url()
