"""The Lab's actions: widget and button callbacks that change the session's config or act on its run.

Runs are started and controlled through the service facade (which checks ownership and budget);
every callback that calls it is :func:`~scansnap.ui.errors.guarded`, so a refusal shows as its message.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np
import streamlit as st
from streamlit.runtime.uploaded_file_manager import UploadedFile

from scansnap.core.config import MAX_SEED, ConfigError, set_dotted
from scansnap.kinds.synthetic.science.config import MAX_SEEDS
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.kinds.synthetic.ui.state import LAB, bump, preset_speed, stale, validate, write_url
from scansnap.paper.presets import get_preset
from scansnap.service.facade import (
    CONFIG_UPLOAD,
    ServiceError,
    UploadKind,
    check_upload_name,
)
from scansnap.ui.errors import guarded
from scansnap.ui.knobs import RATIOS, Knob
from scansnap.ui.resources import service
from scansnap.ui.run_actions import RunActions

ss = st.session_state
MAX_TABLE_EDIT = 20_000  # P(l|n) entries copied into an editable table (and the URL)


# ------------------------------------------------------------------------------ knobs
def on_knob(knob: Knob, value: Any, key: str | None = None) -> None:
    """A config knob changed (``key``: the widget that fired; ignored when
    :func:`~scansnap.kinds.synthetic.ui.state.stale`)."""
    if key is not None and stale(key):
        return
    cfg = ss["lab.cfg"]
    ss["lab.touched"] = True  # the first-visit hint gives way
    seeds = cfg["replicas"]["seeds"]
    if knob.kind == "seed":  # bounded before any list is built (a client may send any number)
        first = min(max(int(value), 0), MAX_SEED - len(seeds) + 1)
        cfg["replicas"]["seeds"] = [first + i for i in range(len(seeds))]
    elif knob.kind == "replicas":
        count = min(max(int(value), 1), MAX_SEEDS)
        cfg["replicas"]["seeds"] = [int(seeds[0]) + i for i in range(count)]
    else:
        set_dotted(cfg, knob.key, value)
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
        if cfg_ok is None or cfg_ok.data.table_cells > MAX_TABLE_EDIT:  # an editable table starts small
            cfg_ok = get_preset("syn-small").config
        pb = build_problem(cfg_ok.data)
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
    RUN.stop_current()
    ss["lab.preset"], ss["lab.cfg"], ss["lab.run"] = name, copy.deepcopy(get_preset(name).config.to_dict()), None
    ss["lab.lock"], ss["lab.origin"], ss["lab.touched"] = None, None, True
    ss["lab.speed"], ss["lab.view"] = preset_speed(name), {}
    bump()
    write_url()


def on_lock(key: str) -> None:
    if stale(key) or bool(ss[key]) == bool(ss.get("lab.lock")):
        return
    cfg = ss["lab.cfg"]
    if ss[key]:
        ratio = float(cfg["optim"]["eta_y"]) / float(cfg["optim"]["eta_z"])
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


# ------------------------------------------------------------------------------ uploads
def _named_right(wk: str, kind: UploadKind) -> UploadedFile | None:
    """The file in uploader ``wk`` if its name is of ``kind``; else None, with the message in ``lab.upload_error``
    (none when the file was removed)."""
    f = ss.get(wk)
    ss.pop("lab.upload_error", None)
    if f is None:
        return None
    try:
        check_upload_name(f.name, kind)
    except ConfigError as e:
        ss["lab.upload_error"] = str(e)
        return None
    return f


def on_config_upload(wk: str) -> None:
    """Replace the Lab's config by an uploaded JSON file, as a preset change does; on any problem
    keep the config and leave the message in ``lab.upload_error``."""
    f = _named_right(wk, CONFIG_UPLOAD)
    if f is None:
        return
    try:
        cfg = service().config_from_upload(f.getvalue(), "synthetic")
    except ConfigError as e:
        ss["lab.upload_error"] = f"{f.name}: {e}"
        return
    RUN.stop_current()
    ss["lab.cfg"], ss["lab.run"], ss["lab.lock"], ss["lab.origin"] = cfg.to_dict(), None, None, None
    ss.pop("lab.upload_error", None)
    bump()
    write_url()


def on_table_upload(wk: str) -> None:
    """Replace P(l|n) and psi by an uploaded CSV (table mode); refused if the run would be over budget."""
    f = _named_right(wk, service().door("synthetic").TABLE_UPLOAD)
    if f is None:
        return
    cfg = copy.deepcopy(ss["lab.cfg"])
    try:
        cfg["data"]["table"], cfg["data"]["psi"] = service().door("synthetic").table_from_csv(f.getvalue())
        valid, _ = validate(cfg)  # other knobs may be invalid right now: the page says so already
        if valid is not None:
            service().check(valid)
    except (ConfigError, ServiceError) as e:
        ss["lab.upload_error"] = f"{f.name}: {e}"
        return
    ss["lab.cfg"] = cfg
    ss.pop("lab.upload_error", None)
    bump()
    write_url()


# ------------------------------------------------------------------------------ the run
RUN = RunActions(LAB, write_url)


@guarded
def new_seed() -> None:
    cfg = ss["lab.cfg"]
    n = len(cfg["replicas"]["seeds"])
    first = random.randrange(0, 2**31 - 1 - n)
    cfg["replicas"]["seeds"] = [first + i for i in range(n)]
    bump()
    RUN.reset()
