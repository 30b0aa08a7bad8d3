"""Small ``*_ui()`` helpers shared by the pages: chart output, lecture mode, knob widgets, the
copy-link box, recovery of interrupted runs.  They return plain values."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import plotly.graph_objects as go
import streamlit as st
from pydantic import BaseModel

from scansnap.core.config import MAX_SEED, RootConfig, field_bounds, field_max_length, get_dotted, parse_value
from scansnap.service.facade import PUBLIC_URL_ENV, is_loopback, lan_address, public_base, with_host
from scansnap.ui.chart_style import FONT, LECTURE_FONT, plot_config
from scansnap.ui.kind_views import view_of
from scansnap.ui.knobs import Knob, eta_options
from scansnap.ui.resources import service
from scansnap.ui.session import actor

CSS = Path(__file__).resolve().parent.parent / "assets" / "style.css"
LIVE_STYLE = CSS.with_name("live.css").read_text()  # the live pages' layout (Lab, Real text): read once
# The server's event loop and many sessions' script threads share the GIL.
# A thread that releases it for I/O (the event loop, a torch kernel) waits up to the switch
# interval (5 ms by default) to get it back from a busy thread; 1 ms shortens those hand-offs
# when tens of sessions tick at once (set once, when the UI is first imported).
sys.setswitchinterval(0.001)
MAX_TEXT = 200  # characters of a text knob (T, snapshot interval, run name)


def lecture_on() -> bool:
    return st.session_state.get("lecture", False)


def font() -> int:
    return LECTURE_FONT if lecture_on() else FONT


def lecture_requested() -> bool:
    """Lecture mode asked for by the link (``?lecture=1``) or kept from earlier in this session."""
    qp = st.query_params
    if "lecture" in qp:
        return qp["lecture"] not in ("0", "false", "")
    return lecture_on()


def apply_lecture_mode() -> bool:
    """``?lecture=1`` (kept across pages in the session): large fonts from scansnap/assets/style.css."""
    qp = st.query_params
    if "lecture" in qp:
        st.session_state["lecture"] = lecture_requested()
    elif lecture_on():
        qp["lecture"] = "1"  # query params are cleared on page switches: re-apply
    if lecture_on():
        st.html(f"<style>{CSS.read_text()}</style>")
    return lecture_on()


def plot_ui(fig: go.Figure, key: str, filename: str) -> None:
    """A static page's chart, with its own fonts and layout (``theme=None``: Streamlit's theme would shrink
    the fonts the shared style sets, as the live charts, which it never touches, keep theirs)."""
    st.plotly_chart(fig, key=key, width="stretch", theme=None, config=plot_config(filename))


def copy_link_ui(params: dict[str, str]) -> None:
    """The link to this view in a code box (its copy button copies it): at the address the viewer
    used, or ``SCANSNAP_PUBLIC_URL``; a hint with the network address when that is ``localhost``."""
    public = os.environ.get(PUBLIC_URL_ENV)
    try:
        base = public_base(str(st.context.url or ""), public)
    except ValueError as e:
        st.warning(str(e))
        base = public_base(str(st.context.url or ""), None)
    link = f"{base}?{urlencode(params)}"
    st.caption("Share this view (copy button on the right):")
    st.code(link, language=None, wrap_lines=True)
    if is_loopback(base):
        lan = lan_address()
        where = f": on this network it is {with_host(link, lan)}" if lan else ""
        st.caption(f"Others cannot open localhost{where}. Set {PUBLIC_URL_ENV} to the address students use.")


def share_ui(key: str, params: dict[str, str], config: RootConfig | None) -> None:
    """The "Share, config JSON" expander: the link to this view and the run's config, drawn (and the JSON
    written) only while it is open (it reruns the page when opened or closed): its code boxes load the
    browser's syntax highlighter, a 1.5 MB script that took ~0.65 s of the page's main thread at every
    load of the Lab (a CDP profile of Chromium here), whether or not anyone opened the box."""
    box = st.expander("Share, config JSON", key=key, on_change="rerun")
    if not box.open:
        return
    with box:
        copy_link_ui(params)
        if config is not None:
            st.code(config.to_json(), language="json")


def preset_select(label: str, presets: dict[str, Any], current: str, key: str, on_change: Any) -> None:
    """A page's preset picker: the presets by their titles, ``current`` selected; ``on_change(key)`` on a pick."""
    names = list(presets)
    st.selectbox(
        label,
        names,
        index=names.index(current),
        key=key,
        on_change=on_change,
        args=(key,),
        format_func=lambda k: presets[k].title,
    )


def _widget_value(knob: Knob, raw: Any) -> Any:
    """Widget value → config value (text fields are parsed like URL values; '' means None)."""
    if knob.kind == "text":
        if knob.key == "name":
            return raw
        return None if str(raw).strip() == "" else parse_value(str(raw).strip())
    return raw


def knob_ui(knob: Knob, cfg: dict[str, Any], wkey: str, on_change: Any, schema: type[BaseModel]) -> None:
    """One widget for one config key; ``on_change(knob, value)`` is called with the new value.  Number
    widgets carry the schema's bounds (``schema``: the kind's config class), so no widget
    event can ask for more than the schema allows."""
    cb: dict[str, Any] = dict(
        on_change=lambda: on_change(knob, _widget_value(knob, st.session_state[wkey])), key=wkey, help=knob.help
    )
    if knob.kind == "seed":
        count = len(cfg["replicas"]["seeds"])
        st.number_input(knob.label, 0, MAX_SEED - count + 1, _clamp(cfg["replicas"]["seeds"][0], 0, MAX_SEED), 1, **cb)
    elif knob.kind == "replicas":
        most = field_max_length("replicas.seeds", schema)
        st.number_input(knob.label, 1, most, _clamp(len(cfg["replicas"]["seeds"]), 1, most), 1, **cb)
    elif knob.kind == "eta":
        v = float(get_dotted(cfg, knob.key))
        st.select_slider(knob.label, options=eta_options(v), value=v, format_func=lambda x: f"{x:g}", **cb)
    elif knob.kind == "select":
        v = get_dotted(cfg, knob.key)
        opts = list(knob.options) if v in knob.options else [*knob.options, v]
        st.selectbox(knob.label, opts, index=opts.index(v), **cb)
    elif knob.kind == "text":
        v = get_dotted(cfg, knob.key)
        st.text_input(knob.label, value="" if v is None else str(v), max_chars=MAX_TEXT, **cb)
    else:
        typ = int if knob.kind == "int" else float
        lo, hi = (None if b is None else typ(b) for b in field_bounds(knob.key, schema))
        value = _clamp(_num(get_dotted(cfg, knob.key), typ), lo, hi)
        fmt = {} if typ is int else {"format": "%g"}
        st.number_input(
            knob.label, min_value=lo, max_value=hi, value=value, step=typ(1) if typ is int else None, **fmt, **cb
        )


def _clamp(v: Any, lo: Any, hi: Any) -> Any:
    """``v`` inside [lo, hi] (a bound of None is open), so a widget always gets a value it accepts."""
    if lo is not None and v < lo:
        return lo
    if hi is not None and v > hi:
        return hi
    return v


def _num(v: Any, typ: type) -> Any:
    try:
        x = typ(v)
    except (TypeError, ValueError, OverflowError):
        return typ(0)
    return x if x == x else typ(0)  # NaN: no widget value


def recovery_ui(info: dict[str, Any], prefix: str, allowed: bool) -> None:
    """The two recovery buttons of an interrupted or stopped run; either one opens the run on its
    page (the Lab, or Real text for a text run).  Resume needs ``allowed`` (owner or operator);
    anyone may re-run (it is their own run)."""
    c = st.columns(2)
    resume = c[0].button(
        "Resume from checkpoint",
        key=f"{prefix}.resume",
        disabled=not allowed,
        type="primary",
        help="continue from the last checkpoint; the result is the same as an uninterrupted run"
        if allowed
        else "only the browser that started this run (or the operator) may resume it",
    )
    rerun = c[1].button(
        "Re-run from scratch",
        key=f"{prefix}.rerun",
        help="train the same config (seed included) again as a new run of yours",
    )
    if resume:
        target = service().resume_stored(info["id"], actor())
    elif rerun:
        target = service().rerun(info["id"], actor())
    else:
        return
    page = view_of(info).page
    if page is not None:
        st.switch_page(page, query_params={"run": str(target)})
