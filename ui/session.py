"""One browser session: who it is (owner, operator), its widget revision, and the Lab's state in
the URL (URL ⇄ session state; the knobs and their parsing are in :mod:`ui.knobs`).

Session keys: ``owner`` (this browser's owner id), ``operator`` (the operator key was typed),
``lab.preset`` (name), ``lab.cfg`` (config dict, possibly invalid: the page shows why and blocks
Start), ``lab.run`` (the run on screen), ``lab.rev`` (bumped on every programmatic change so that
widgets are rebuilt with the new values), ``lab.sig`` (the URL this session last wrote or
applied), ``lab.speed``, ``lab.lock``.
"""

from __future__ import annotations

import json
import random
import time
from typing import Any

import streamlit as st

from engine.service.access import XSRF_COOKIE, browser_owner, operator_configured, operator_ok, owner_salt
from engine.service.facade import Actor
from ui.knobs import RATIOS, SPEEDS, choice, config_params, parse_params, validate
from ui.resources import service
from ui.text import shown

ss = st.session_state
PAGE_ONLY = ("lecture", "show")
OPERATOR_MAX_DELAY_S = 60


# ------------------------------------------------------------------------------ who
def owner() -> str:
    """This browser's owner id, stable across reloads and tabs (a salted hash of Streamlit's XSRF
    cookie, :func:`engine.service.access.browser_owner`); a random per-session id when the request
    has no such cookie (AppTest, or XSRF protection turned off)."""
    if "owner" not in ss:
        cookie = st.context.cookies.get(XSRF_COOKIE)
        salt = owner_salt(str(service().store.data_dir.resolve()))
        ss["owner"] = (browser_owner(cookie, salt) if cookie else None) or f"session-{random.getrandbits(48):012x}"
    return ss["owner"]


def is_operator() -> bool:
    """The operator key was typed in this session (and operator mode exists on this server)."""
    return bool(ss.get("operator")) and operator_configured()


def actor() -> Actor:
    return Actor(owner(), is_operator())


def on_operator_key(wk: str) -> None:
    """Check a typed operator key; after each wrong one the next is refused for a delay that doubles
    (1, 2, 4 … up to 60 s), so guessing costs time (the comparison itself is constant-time)."""
    now = time.monotonic()
    if now < ss.get("op.next_try", 0.0):
        ss["operator_wait"] = ss["op.next_try"] - now
        return
    ss.pop("operator_wait", None)
    ss["operator"] = operator_ok(ss.get(wk) or "")
    ss["operator_tried"] = bool(ss.get(wk))
    if ss["operator_tried"] and not ss["operator"]:
        ss["op.failures"] = ss.get("op.failures", 0) + 1
        ss["op.next_try"] = now + operator_delay(ss["op.failures"])


def operator_delay(failures: int) -> float:
    """Seconds before the next operator-key attempt after ``failures`` wrong ones: 1, 2, 4 … ≤ 60."""
    return float(min(OPERATOR_MAX_DELAY_S, 2 ** (failures - 1)))


def may_manage(info: dict[str, Any]) -> bool:
    """Whether this session may delete, rename, stop, resume or publish the stored run ``info``."""
    return service().may_manage(info, actor())


def owns(rid: str | None) -> bool:
    """Whether this session may control run ``rid`` (its owner or the operator); True when there is
    no stored run to protect.  Everyone else who opens it watches."""
    if not rid:
        return True
    info = service().run(rid)
    return info is None or may_manage(info)


# ------------------------------------------------------------------------------ widget revisions
def bump() -> None:
    ss["lab.rev"] = ss.get("lab.rev", 0) + 1


def wkey(name: str) -> str:
    return f"w{ss.get('lab.rev', 0)}.{name}"


def stale(key: str) -> bool:
    """Whether widget ``key`` belongs to an earlier rev than the one on screen.

    After a ``bump()`` the browser can still send an event from the previous rev's widget (a
    click that landed before the rerun redrew it, or its old state re-sent with a later rerun):
    such an event carries an old value; it is ignored, and the rerun redraws the widget."""
    return not key.startswith(f"w{ss.get('lab.rev', 0)}.")


# ------------------------------------------------------------------------------ URL ⇄ state
def init_state() -> list[str]:
    """Apply the URL when it is new to this session (a link, a reload, another page's button);
    otherwise keep the session's state.  Then write the canonical URL.  Returns problems."""
    params = st.query_params.to_dict()
    lab = {k: v for k, v in params.items() if k not in PAGE_ONLY}
    problems: list[str] = []
    if "lab.cfg" not in ss or (lab and lab != ss.get("lab.sig")):
        problems = apply_params(lab)
    write_url()
    return problems


def apply_params(params: dict[str, str]) -> list[str]:
    preset, cfg, problems = parse_params(params)
    run = params.get("run")
    if run:
        info = service().run(run)
        if info is None or info["kind"] != "synthetic":
            what = "is not in the run store" if info is None else "is a real-text run: open it on the Real text page"
            problems.append(f"run {shown(run)} {what}")
            run = None
        else:
            cfg = json.loads(info["config_json"])
    valid, _ = validate(cfg)
    cfg = valid.to_dict() if valid else cfg  # canonical types (10 → 10.0) when it is a valid config
    ss["lab.preset"], ss["lab.cfg"], ss["lab.run"] = preset, cfg, run
    ss["lab.speed"] = choice(params.get("speed"), SPEEDS, "speed", "max", problems)
    ss["lab.lock"] = choice(params.get("lock"), RATIOS, "lock (η_Y/η_Z)", None, problems)
    bump()
    return problems


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


def speed_options() -> list[Any]:
    cur = ss.get("lab.speed", "max")
    return list(SPEEDS) if cur in SPEEDS else [*SPEEDS, cur]
