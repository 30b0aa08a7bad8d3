"""Students watch the lecturer's runs.  The lecturer's side: the *students watch* switch in the control
bar, before ▶ Start, with the join link and its QR code (the link exists before the first run: it
names the lecturer's browser by its join code, not a run).  The student's side: ``?follow=CODE`` opens
the newest run that code's owner published and moves to the next one as soon as it starts.

Session keys: ``<prefix>.students`` (the switch is on: each run started here is published).
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import segno
import streamlit as st

from scansnap.service.facade import PUBLIC_URL_ENV, code_problem, is_loopback, lan_address, public_base, with_host
from scansnap.ui.errors import guarded
from scansnap.ui.kind_views import views
from scansnap.ui.resources import service
from scansnap.ui.session import actor, may_manage
from scansnap.ui.text import plain, shown

ss = st.session_state
FOLLOW = "follow"  # the URL parameter of a student's page
CHECK_S = 2.0  # how often a student's page looks for the lecturer's next run


# ------------------------------------------------------------------------------ pure
def page_path(kind: str) -> str:
    """The URL path of the page that shows runs of ``kind`` ("" for the home page)."""
    home = next(iter(views()))  # the first kind's page is the one the app opens at "/" (scansnap/ui/shell.py)
    return "" if kind == home else views()[kind].url


def join_link(base: str, code: str) -> str:
    """The link a student opens: ``base`` (the page's address, any query dropped) with ``?follow=CODE``."""
    parts = urlsplit(base)
    path = parts.path.rstrip("/") or "/"
    return urlunsplit((parts.scheme, parts.netloc, path, urlencode({FOLLOW: code}), ""))


def qr_png(link: str, scale: int = 8) -> bytes:
    """The QR code of ``link`` as a PNG (error correction M: readable from a projector at an angle)."""
    buf = io.BytesIO()
    segno.make(link, error="m").save(buf, kind="png", scale=scale, border=2)
    return buf.getvalue()


# ------------------------------------------------------------------------------ the lecturer's side
def page_base(kind: str) -> str:
    """The address of ``kind``'s page as students reach it: ``SCANSNAP_PUBLIC_URL`` (the app's root) and
    the page's path, else the address this browser used (a loopback one with the network address)."""
    public = os.environ.get(PUBLIC_URL_ENV)
    viewer = str(st.context.url or "")
    try:
        if public:
            return f"{public_base(viewer, public)}/{page_path(kind)}"
    except ValueError:
        pass  # the share box says what is wrong with it
    base = public_base(viewer, None)
    lan = lan_address() if is_loopback(base) else None
    return with_host(base, lan) if lan else base


def students_switch(prefix: str, kind: str) -> None:
    """The switch (``<prefix>.students``) and, while it is on, a *Join* button whose popover holds the QR
    code and the link in letters, large enough to read from a hall."""
    on = st.toggle(
        "🎓 Students watch",
        value=bool(ss.get(f"{prefix}.students")),
        key=f"{prefix}.students.w",
        on_change=on_students,
        args=(prefix,),
    )
    if not on:
        return
    code = service().follow_code(actor())
    link = join_link(page_base(kind), code)
    with st.popover(f"📱 {code}", help="the join link for the students: its QR code and its letters"):
        st.image(qr_png(link), width=260)
        st.markdown(f"## Join code {code}")
        st.code(link, language=None, wrap_lines=True)
        st.caption(
            "Students open this link (or scan the code): their page shows each run you start here, live, "
            "from its first step (each is also listed under Live now)."
        )


@guarded
def on_students(prefix: str) -> None:
    """Turn the switch; the run on screen, when this session manages it, is published (or not) with it."""
    on = ss[f"{prefix}.students"] = bool(ss[f"{prefix}.students.w"])
    rid = ss.get(f"{prefix}.run")
    info = service().run(rid) if rid else None
    if info is not None and may_manage(info):
        service().publish(rid, on, actor())


def publish_started(prefix: str, rid: str) -> None:
    """A run just started here: published when the switch is on."""
    if ss.get(f"{prefix}.students"):
        service().publish(rid, True, actor())


# ------------------------------------------------------------------------------ the student's side
@dataclass(frozen=True)
class Follow:
    """A student's page: the join code it follows and the run it shows (None until one is published)."""

    code: str
    run: dict[str, Any] | None


def resolve(kind: str) -> Follow | None:
    """Before the page reads its URL: ``?follow=CODE`` becomes ``?run=<the followed run>`` (so the page
    opens it as any link); None when the page follows no one (a malformed code is said and dropped)."""
    code = st.query_params.get(FOLLOW)
    if code is None:
        return None
    problem = code_problem(code)
    if problem:
        st.warning(f"follow = {shown(code)} {problem}: this page shows its own setup")
        del st.query_params[FOLLOW]
        return None
    run = service().followed_run(code, kind)
    if run is not None and st.query_params.get("run") != run["id"]:
        st.query_params["run"] = run["id"]
    return Follow(code.strip().upper(), run)


def following_ui(f: Follow, prefix: str, kind: str) -> None:
    """What a student sees above the run: whose runs this page follows, or that it waits for the first;
    a fragment that looks every few seconds for the next run and opens it."""
    if f.run is None:
        st.info(f"⏳ Waiting for the lecturer's run (code **{f.code}**): this page opens it as soon as it starts.")
    else:
        st.caption(
            f"👀 You follow the lecturer's runs (code {f.code}): now *{plain(f.run['name'], limit=40)}*; "
            "this page moves to each new run by itself."
        )
    st.fragment(_look, run_every=CHECK_S)(f.code, prefix, kind)


def _look(code: str, prefix: str, kind: str) -> None:
    run = service().followed_run(code, kind)
    if run is not None and run["id"] != ss.get(f"{prefix}.run"):
        st.rerun(scope="app")
