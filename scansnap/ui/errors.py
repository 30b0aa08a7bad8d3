"""The one error boundary of the dashboard: what the service refuses reaches the user as its message.

Pages run inside :func:`boundary`; button and widget callbacks are wrapped by :func:`guarded`,
which keeps the message for the page to show (a callback runs before the page script).  Only
:class:`~scansnap.service.facade.ServiceError` is caught: its message names what is wrong and what
is allowed.  Streamlit's own control flow (rerun, stop, page switch) passes through untouched.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec

import streamlit as st

from scansnap.service.facade import ServiceError
from scansnap.ui.text import plain

P = ParamSpec("P")
KEY = "scansnap.ui.error"
DAMAGE_KEY = "scansnap.ui.store_damage"


@contextmanager
def boundary() -> Iterator[None]:
    """Run a page (or a part of it); a ServiceError ends that part with its message on screen (unless it
    is the damaged store's one message, which :func:`damage_notice` shows over every page)."""
    try:
        yield
    except ServiceError as e:
        if str(e) != st.session_state.get(DAMAGE_KEY):
            st.error(plain(str(e)), icon="🚫")


def damage_notice(message: str | None) -> None:
    """The damaged store's one message over the page (None: the store is sound), kept for
    :func:`boundary`, which shows no second copy of it."""
    st.session_state[DAMAGE_KEY] = message
    if message:
        st.error(plain(message), icon="🚫")


def guarded(callback: Callable[P, Any]) -> Callable[P, None]:
    """A widget callback whose ServiceError is kept for :func:`show_callback_error`."""

    @functools.wraps(callback)
    def run(*args: P.args, **kwargs: P.kwargs) -> None:
        st.session_state.pop(KEY, None)
        try:
            callback(*args, **kwargs)
        except ServiceError as e:
            st.session_state[KEY] = str(e)

    return run


def show_callback_error() -> None:
    """The message of the last callback that was refused, once."""
    msg = st.session_state.pop(KEY, None)
    if msg:
        st.error(plain(msg), icon="🚫")
