"""The Real text page's actions: knob, preset and corpus callbacks, and the run's controls.

Runs are started and controlled through the service facade (ownership, corpus access, budget), as
the Lab's (:mod:`ui.lab_actions`); every callback that calls it is :func:`~ui.errors.guarded`.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any

import streamlit as st

from engine.core.config import set_dotted
from engine.paper.text_presets import get_text_preset
from engine.service.jobs import TERMINAL, JobStatus
from ui.errors import guarded
from ui.knobs import Knob
from ui.resources import service
from ui.session import actor, owns
from ui.text_state import bump, stale, validate, write_url

ss = st.session_state
CONTROL_WAIT_S = 0.5  # a button's rerun waits (bounded) until the worker has acted on it


# ------------------------------------------------------------------------------ config
def on_knob(knob: Knob, value: Any, key: str | None = None) -> None:
    if key is not None and stale(key):
        return
    cfg = ss["text.cfg"]
    set_dotted(cfg, knob.key, value)
    if knob.key == "data.source":
        data = cfg["data"]
        folders = service().wikitext_folders()
        data["path"] = folders[0] if value == "wikitext-dir" and folders else None
        if value != "upload":
            data["upload_name"] = None
        bump()
    write_url()


def on_folder(key: str) -> None:
    if not stale(key):
        ss["text.cfg"]["data"]["path"] = ss[key]
        write_url()


@guarded
def on_upload(key: str) -> None:
    """Keep an uploaded .txt on the server (checked: size, UTF-8, length) and train on it."""
    f = ss.get(key)
    if f is None or stale(key):
        return
    ss["text.cfg"]["data"]["upload_name"] = service().save_text_upload(f.name, f.getvalue())
    write_url()


def on_preset(key: str) -> None:
    if stale(key) or ss[key] == ss.get("text.preset"):
        return
    stop_current()
    name = ss[key]
    ss["text.preset"], ss["text.run"] = name, None
    ss["text.cfg"] = copy.deepcopy(get_text_preset(name).config.to_dict())
    bump()
    write_url()


# ------------------------------------------------------------------------------ the run
def live_status() -> JobStatus | None:
    rid = ss.get("text.run")
    return service().status(rid) if rid else None


def is_live() -> bool:
    s = live_status()
    return s is not None and s.status not in TERMINAL


def _settle(rid: str, done: Callable[[JobStatus], bool]) -> None:
    jobs = service().jobs
    with jobs.changed:
        jobs.changed.wait_for(lambda: (s := jobs.status(rid)) is None or done(s), CONTROL_WAIT_S)


@guarded
def start(paused: bool = False) -> None:
    cfg, err = validate(ss["text.cfg"])
    if cfg is None:
        ss["text.error"] = err
        return
    ss.pop("text.error", None)
    svc, me = service(), actor()
    rid = svc.submit(cfg, me, name=cfg.name or ss["text.preset"], paused=True)
    speed = ss.get("text.speed", "max")
    svc.set_speed(rid, None if speed == "max" else float(speed), me)
    if not paused:
        svc.resume(rid, me)
        _settle(rid, lambda x: x.status not in ("paused", "queued"))
    ss["text.run"], ss["text.target"] = rid, 0
    write_url()


def stop_current() -> None:
    rid = ss.get("text.run")
    if rid and owns(rid) and service().is_live(rid):
        service().stop(rid, actor())


@guarded
def pause_resume() -> None:
    s = live_status()
    if s is None or s.status in TERMINAL:
        return
    if s.status == "paused":
        ss["text.target"] = 0
        service().resume(s.run_id, actor())
        _settle(s.run_id, lambda x: x.status != "paused")
    else:
        service().pause(s.run_id, actor())
        _settle(s.run_id, lambda x: x.status == "paused" or x.status in TERMINAL)


@guarded
def step_n(key: str) -> None:
    n = max(1, int(ss.get(key, 10)))
    if not is_live():
        start(paused=True)
    s = live_status()
    if s is not None and s.status not in TERMINAL:
        service().step(s.run_id, n, actor())
        ss["text.target"] = s.step + n


@guarded
def stop() -> None:
    stop_current()
    if ss.get("text.run"):
        _settle(ss["text.run"], lambda x: x.status in TERMINAL)


@guarded
def reset() -> None:
    """Restart with the same config, seed included."""
    stop()
    start()


@guarded
def new_seed() -> None:
    ss["text.cfg"]["optim"]["seed"] = random.randrange(0, 2**31 - 1)
    bump()
    reset()


@guarded
def on_speed(key: str) -> None:
    if stale(key):
        return
    speed = ss["text.speed"] = ss[key]
    rid = ss.get("text.run")
    if rid and is_live() and owns(rid):
        service().set_speed(rid, None if speed == "max" else float(speed), actor())
    write_url()


@guarded
def on_publish(rid: str, key: str) -> None:
    service().publish(rid, bool(ss[key]), actor())
