"""The Real text page's actions: knob, preset and corpus callbacks, and the run's controls.

Runs are started and controlled through the service facade (ownership, corpus access, budget), as
the Lab's (:mod:`scansnap.kinds.synthetic.ui.actions`); each callback that calls it is
:func:`~scansnap.ui.errors.guarded`.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import streamlit as st

from scansnap.core.config import set_dotted
from scansnap.kinds.text.ui.door import text_door
from scansnap.kinds.text.ui.state import TEXT, bump, stale, write_url
from scansnap.paper.presets import get_preset
from scansnap.ui.errors import guarded
from scansnap.ui.knobs import Knob
from scansnap.ui.run_actions import RunActions
from scansnap.ui.session import actor

ss = st.session_state


# ------------------------------------------------------------------------------ config
def on_knob(knob: Knob, value: Any, key: str | None = None) -> None:
    if key is not None and stale(key):
        return
    cfg = ss["text.cfg"]
    set_dotted(cfg, knob.key, value)
    if knob.key == "data.source":
        data = cfg["data"]
        folders = text_door().wikitext_folders()
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
    ss["text.cfg"]["data"]["upload_name"] = text_door().save_upload(f.name, f.getvalue(), actor())
    write_url()


def on_preset(key: str) -> None:
    if stale(key) or ss[key] == ss.get("text.preset"):
        return
    RUN.stop_current()
    name = ss[key]
    ss["text.preset"], ss["text.run"] = name, None
    ss["text.cfg"] = copy.deepcopy(get_preset(name, "text").config.to_dict())
    bump()
    write_url()


# ------------------------------------------------------------------------------ the run
RUN = RunActions(TEXT, write_url)


@guarded
def new_seed() -> None:
    ss["text.cfg"]["optim"]["seed"] = random.randrange(0, 2**31 - 1)
    bump()
    RUN.reset()
