"""The Lab's per-session state, its URL round trip and its actions (button callbacks).

Session keys: ``lab.preset`` (name), ``lab.cfg`` (config dict, possibly invalid: the page
shows why and blocks Start), ``lab.run`` (the run on screen), ``lab.rev`` (bumped on every
programmatic change so that widgets are rebuilt with the new values), ``lab.sig`` (the URL
this session last wrote or applied), ``lab.speed``, ``lab.lock``, ``lab.target``,
``lab.upload_error``; ``owner`` (this browser's owner id) and ``operator`` (the operator key
was typed) for access control (:mod:`engine.service.access`).
"""

from __future__ import annotations

import copy
import json
import random
import time
from typing import Any

import numpy as np
import streamlit as st

from engine.core.config import ConfigError
from engine.core.data import build_problem
from engine.paper.presets import get_preset
from engine.service.access import XSRF_COOKIE, browser_owner, can_manage, operator_configured, operator_ok, owner_salt
from engine.service.budget import check_budget
from engine.service.jobs import TERMINAL, JobManager
from engine.service.store import RunStore, StoreError
from engine.service.uploads import config_from_upload, table_from_csv
from ui.urlstate import SPEEDS, Knob, config_params, parse_params, validate

ss = st.session_state
PAGE_ONLY = ("lecture", "show")


def bump() -> None:
    ss["lab.rev"] = ss.get("lab.rev", 0) + 1


def wkey(name: str) -> str:
    return f"w{ss.get('lab.rev', 0)}.{name}"


def stale(key: str) -> bool:
    """Whether widget ``key`` belongs to an earlier rev than the one on screen.

    After a ``bump()`` the browser can still send an event from the previous rev's widget (a
    click that landed before the rerun redrew it, or its old state re-sent with a later rerun:
    seen in the browser as a preset callback firing long after the preset was picked, which
    dropped the run on screen).  Such an event carries an old value: it is ignored, and the
    rerun it triggers redraws the widget with the current state."""
    return not key.startswith(f"w{ss.get('lab.rev', 0)}.")


def owner() -> str:
    """This browser's owner id, stable across reloads and tabs (a salted hash of Streamlit's XSRF
    cookie, :func:`engine.service.access.browser_owner`); a random per-session id when the request has
    no such cookie (AppTest, or XSRF protection turned off)."""
    if "owner" not in ss:
        ss["owner"] = _browser_owner() or f"session-{random.getrandbits(48):012x}"
    return ss["owner"]


def _browser_owner() -> str | None:
    from ui.widgets import store

    cookie = st.context.cookies.get(XSRF_COOKIE)
    return browser_owner(cookie, owner_salt(str(store().data_dir.resolve()))) if cookie else None


# ------------------------------------------------------------------------------ URL
def init_state(store: RunStore) -> list[str]:
    """Apply the URL when it is new to this session (a link, a reload, another page's button);
    otherwise keep the session's state.  Then write the canonical URL.  Returns problems."""
    params = st.query_params.to_dict()
    lab = {k: v for k, v in params.items() if k not in PAGE_ONLY}
    problems: list[str] = []
    if "lab.cfg" not in ss or (lab and lab != ss.get("lab.sig")):
        problems = apply_params(lab, store)
    write_url()
    return problems


def apply_params(params: dict[str, str], store: RunStore) -> list[str]:
    preset, cfg, problems = parse_params(params)
    run = params.get("run")
    if run:
        info = store.get_run(run)
        if info is None:
            problems.append(f"run {run!r} is not in the run store")
            run = None
        else:
            cfg = json.loads(info["config_json"])
    valid, _ = validate(cfg)
    cfg = valid.to_dict() if valid else cfg  # canonical types (10 → 10.0) when it is a valid config
    speed = params.get("speed", "max")
    ss["lab.preset"], ss["lab.cfg"], ss["lab.run"] = preset, cfg, run
    ss["lab.speed"] = speed if speed == "max" else float(speed) if _is_num(speed) else "max"
    ss["lab.lock"] = float(params["lock"]) if _is_num(params.get("lock")) else None
    bump()
    return problems


def _is_num(v: Any) -> bool:
    try:
        float(v)
        return True
    except (TypeError, ValueError):
        return False


def canonical_params() -> dict[str, str]:
    p = config_params(ss["lab.preset"], ss["lab.cfg"])
    if ss.get("lab.run"):
        p["run"] = ss["lab.run"]
    if ss.get("lab.speed", "max") != "max":
        p["speed"] = f"{ss['lab.speed']:g}"
    if ss.get("lab.lock"):
        p["lock"] = f"{ss['lab.lock']:g}"
    return p


def write_url() -> None:
    """Write the canonical URL (never called from a run_every tick)."""
    lab = canonical_params()
    full = {**lab, **{k: v for k, v in st.query_params.to_dict().items() if k in PAGE_ONLY}}
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)
    ss["lab.sig"] = lab


# ------------------------------------------------------------------------------ knobs
def _set(cfg: dict[str, Any], key: str, value: Any) -> None:
    *path, last = key.split(".")
    node = cfg
    for part in path:
        node = node[part]
    node[last] = value


def on_knob(knob: Knob, value: Any, key: str | None = None) -> None:
    """A config knob changed (``key``: the widget that fired; ignored when :func:`stale`)."""
    if key is not None and stale(key):
        return
    cfg = ss["lab.cfg"]
    seeds = cfg["replicas"]["seeds"]
    if knob.kind == "seed":
        cfg["replicas"]["seeds"] = [int(value) + i for i in range(len(seeds))]
    elif knob.kind == "replicas":
        cfg["replicas"]["seeds"] = [int(seeds[0]) + i for i in range(max(1, int(value)))]
    else:
        _set(cfg, knob.key, value)
    if knob.key == "optim.eta_z" and ss.get("lab.lock"):
        cfg["optim"]["eta_y"] = round(ss["lab.lock"] * float(value), 10)
    if knob.key == "data.source":
        _switch_source(cfg, value)
        bump()
    write_url()


def _switch_source(cfg: dict[str, Any], source: str) -> None:
    """Entering table mode starts from the generator's P(l|n); leaving it drops the table."""
    if source == "table" and cfg["data"].get("table") is None:
        gen = {**cfg["data"], "source": "generator", "table": None, "psi": None}
        cfg_ok, _ = validate({**cfg, "data": gen})
        pb = build_problem(cfg_ok.data) if cfg_ok else build_problem(get_preset("syn-small").config.data)
        cfg["data"]["table"] = np.round(pb.P, 4).tolist()
        cfg["data"]["psi"] = pb.psi.tolist()
    elif source == "generator":
        cfg["data"]["table"], cfg["data"]["psi"] = None, None


def on_preset(key: str) -> None:
    """``key``: the widget that fired (callbacks get their own key: after a ``bump()`` a click on
    the previous rev's widget can still arrive, and ``wkey()`` would name the new one)."""
    if stale(key) or ss[key] == ss.get("lab.preset"):
        return
    name = ss[key]
    stop_current()
    ss["lab.preset"], ss["lab.cfg"], ss["lab.run"] = name, copy.deepcopy(get_preset(name).config.to_dict()), None
    ss["lab.lock"] = None
    bump()
    write_url()


def on_lock(key: str) -> None:
    if stale(key) or bool(ss[key]) == bool(ss.get("lab.lock")):
        return
    cfg = ss["lab.cfg"]
    if ss[key]:
        ratio = float(cfg["optim"]["eta_y"]) / float(cfg["optim"]["eta_z"])
        from ui.widgets import RATIOS

        ss["lab.lock"] = min(RATIOS, key=lambda r: abs(np.log(r / ratio)))
        cfg["optim"]["eta_y"] = round(ss["lab.lock"] * float(cfg["optim"]["eta_z"]), 10)
    else:
        ss["lab.lock"] = None
    bump()
    write_url()


def on_ratio(key: str) -> None:
    if stale(key):
        return
    ss["lab.lock"] = float(ss[key])
    cfg = ss["lab.cfg"]
    cfg["optim"]["eta_y"] = round(ss["lab.lock"] * float(cfg["optim"]["eta_z"]), 10)
    write_url()


def on_table(table: list[list[float]], psi: list[int]) -> None:
    cfg = ss["lab.cfg"]
    if cfg["data"].get("table") != table or cfg["data"].get("psi") != psi:
        cfg["data"]["table"], cfg["data"]["psi"] = table, psi
        write_url()


# ------------------------------------------------------------------------------ ownership, broadcast
def is_operator() -> bool:
    """The operator key was typed in this session (and operator mode exists on this server)."""
    return bool(ss.get("operator")) and operator_configured()


def on_operator_key(wk: str) -> None:
    ss["operator"] = operator_ok(ss.get(wk) or "")
    ss["operator_tried"] = bool(ss.get(wk))


def may_manage(info: dict[str, Any]) -> bool:
    """Whether this session may delete, rename, stop, resume or publish the stored run ``info``."""
    return can_manage(info["owner"], owner(), is_operator())


def owns(rid: str | None) -> bool:
    """Whether this session may control run ``rid``: its owner (the same browser, across reloads)
    or the operator.  Everyone else who opens it watches: a published run is a broadcast, an
    unpublished one a read-only view.  True when there is no stored run to protect."""
    if not rid:
        return True
    from ui.widgets import store

    info = store().get_run(rid)
    return info is None or may_manage(info)


def on_publish(rid: str, wk: str) -> None:
    from ui.widgets import store

    info = store().get_run(rid)
    if info is not None and may_manage(info):
        store().set_published(rid, bool(ss[wk]))


# ------------------------------------------------------------------------------ uploads
def on_config_upload(wk: str) -> None:
    """Replace the Lab's config by an uploaded JSON file, as a preset change does; on any problem
    keep the config and leave the message in ``lab.upload_error``."""
    f = ss.get(wk)
    if f is None:
        ss.pop("lab.upload_error", None)
        return
    try:
        cfg = config_from_upload(f.getvalue())
    except ConfigError as e:
        ss["lab.upload_error"] = f"{f.name}: {e}"
        return
    stop_current()
    ss["lab.cfg"], ss["lab.run"], ss["lab.lock"] = cfg.to_dict(), None, None
    ss.pop("lab.upload_error", None)
    bump()
    write_url()


def on_table_upload(wk: str) -> None:
    """Replace P(l|n) and psi by an uploaded CSV (table mode); refused if the run would be over budget."""
    f = ss.get(wk)
    if f is None:
        ss.pop("lab.upload_error", None)
        return
    cfg = copy.deepcopy(ss["lab.cfg"])
    try:
        cfg["data"]["table"], cfg["data"]["psi"] = table_from_csv(f.getvalue())
        valid, _ = validate(cfg)  # other knobs may be invalid right now: the page says so already
        if valid is not None:
            check_budget(valid)
    except ConfigError as e:
        ss["lab.upload_error"] = f"{f.name}: {e}"
        return
    ss["lab.cfg"] = cfg
    ss.pop("lab.upload_error", None)
    bump()
    write_url()


# ------------------------------------------------------------------------------ actions
def live_status(mgr: JobManager) -> Any:
    rid = ss.get("lab.run")
    return mgr.status(rid) if rid else None


def is_live(mgr: JobManager) -> bool:
    s = live_status(mgr)
    return s is not None and s.status not in TERMINAL


def start(mgr: JobManager, paused: bool = False) -> None:
    cfg, err = validate(ss["lab.cfg"])
    if cfg is None:
        ss["lab.error"] = err
        return
    try:
        rid = mgr.submit(cfg, name=cfg.name or ss["lab.preset"], owner=owner(), paused=True)
    except (RuntimeError, ConfigError, StoreError) as e:  # a full queue, over budget, a locked store
        ss["lab.error"] = str(e)
        return
    ss.pop("lab.error", None)
    speed = ss.get("lab.speed", "max")
    mgr.set_speed(rid, None if speed == "max" else float(speed))
    if not paused:
        mgr.resume(rid)
        _wait(mgr, rid, lambda x: x.status not in ("paused", "queued"))  # so the controls show "Pause"
    ss["lab.run"], ss["lab.target"] = rid, 0
    write_url()


def stop_current() -> None:
    from ui.widgets import manager

    if ss.get("lab.run") and owns(ss["lab.run"]):  # a viewer's Reset starts its own run, never stops the broadcast
        mgr = manager()
        if mgr.is_live(ss["lab.run"]):
            mgr.stop(ss["lab.run"])


def _wait(mgr: JobManager, rid: str, done: Any, timeout: float = 0.5) -> None:
    """Wait (bounded) until the worker has acted on a control, so the rerun shows its effect."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        s = mgr.status(rid)
        if s is None or done(s):
            return
        time.sleep(0.02)


def pause_resume(mgr: JobManager) -> None:
    s = live_status(mgr)
    if s is None or s.status in TERMINAL or not owns(s.run_id):
        return
    if s.status == "paused":
        ss["lab.target"] = 0
        mgr.resume(s.run_id)
        _wait(mgr, s.run_id, lambda x: x.status != "paused")
    else:
        mgr.pause(s.run_id)
        _wait(mgr, s.run_id, lambda x: x.status == "paused" or x.status in TERMINAL)


def step_n(mgr: JobManager, key: str) -> None:
    n = max(1, int(ss.get(key, 10)))
    if not is_live(mgr):
        start(mgr, paused=True)
    elif not owns(ss["lab.run"]):
        return
    s = live_status(mgr)
    if s is not None:
        mgr.step(s.run_id, n)
        ss["lab.target"] = s.step + n


def stop(mgr: JobManager) -> None:
    stop_current()
    if ss.get("lab.run"):
        _wait(mgr, ss["lab.run"], lambda x: x.status in TERMINAL)


def reset(mgr: JobManager) -> None:
    """Restart with the same config, seed included."""
    stop(mgr)
    start(mgr)


def new_seed(mgr: JobManager) -> None:
    cfg = ss["lab.cfg"]
    n = len(cfg["replicas"]["seeds"])
    first = random.randrange(0, 2**31 - 1 - n)
    cfg["replicas"]["seeds"] = [first + i for i in range(n)]
    bump()
    reset(mgr)


def on_speed(mgr: JobManager, key: str) -> None:
    if stale(key):
        return
    speed = ss[key]
    ss["lab.speed"] = speed
    if is_live(mgr) and owns(ss["lab.run"]):
        mgr.set_speed(ss["lab.run"], None if speed == "max" else float(speed))
    write_url()


def speed_options() -> list[Any]:
    cur = ss.get("lab.speed", "max")
    return list(SPEEDS) if cur in SPEEDS else [*SPEEDS, cur]
