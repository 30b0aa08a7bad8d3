"""One browser session: who it is (owner, operator) and what it may manage.  (The Lab's state in the
URL is :mod:`scansnap.kinds.synthetic.ui.state`, the Real text page's :mod:`scansnap.kinds.text.ui.state`.)

Session keys: ``owner`` (this browser's owner id), ``operator`` (the operator key was typed).
"""

from __future__ import annotations

import random
from typing import Any

import streamlit as st

from scansnap.service.facade import OPERATOR_GATE, XSRF_COOKIE, Actor, browser_owner, operator_configured
from scansnap.ui.resources import service

ss = st.session_state


# ------------------------------------------------------------------------------ who
def owner() -> str:
    """This browser's owner id, stable across reloads and tabs (a salted hash of Streamlit's XSRF
    cookie, :func:`scansnap.service.access.browser_owner`); a random per-session id when the request
    has no such cookie (AppTest, or XSRF protection turned off)."""
    if "owner" not in ss:
        cookie = st.context.cookies.get(XSRF_COOKIE)
        salt = service().owner_salt()
        ss["owner"] = (browser_owner(cookie, salt) if cookie else None) or f"session-{random.getrandbits(48):012x}"
    return ss["owner"]


def is_operator() -> bool:
    """The operator key was typed in this session (and operator mode exists on this server)."""
    return bool(ss.get("operator")) and operator_configured()


def actor() -> Actor:
    return Actor(owner(), is_operator())


def client_address() -> str | None:
    """The address the browser's requests come from (None where Streamlit knows none: AppTest, a callback
    called outside a script run)."""
    try:
        address = st.context.ip_address
    except Exception:
        return None
    return address if isinstance(address, str) and address else None


def on_operator_key(wk: str) -> None:
    """Check a typed operator key; after each wrong one, this browser's and its address's next try is
    refused for a delay that doubles (1, 2, 4 … up to 60 s: :class:`~scansnap.service.access.KeyGate`), so
    guessing costs time (the comparison itself is constant-time); a browser that once gave the right key
    is not held by its address's wait."""
    given = ss.get(wk) or ""
    ok, wait = OPERATOR_GATE.attempt(given, owner(), client_address()) if given else (False, 0.0)
    if wait:
        ss["operator_wait"] = wait
        return
    ss.pop("operator_wait", None)
    ss["operator"], ss["operator_tried"] = ok, bool(given)


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
