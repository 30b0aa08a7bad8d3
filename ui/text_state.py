"""The Real text page's knobs and its state in the URL (URL ⇄ session state), as the Lab's
(:mod:`ui.knobs`, :mod:`ui.session`) but for a :class:`~engine.core.text.config.TextRunConfig`.

The URL holds ``preset=<text preset>`` plus one ``<dotted.key>=<value>`` for every setting that
differs from the preset, and ``run`` (a text run to reopen) and ``speed``; ``lecture`` is kept as
it is.  Session keys: ``text.preset``, ``text.cfg`` (config dict, possibly invalid: the page says
why and blocks Start), ``text.run``, ``text.rev`` (bumped to rebuild the widgets), ``text.sig``
(the URL last written or applied), ``text.speed``, ``text.target`` (the step Step N runs to).
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from engine.core.config import flatten_dotted
from engine.core.text.config import TextRunConfig
from engine.paper.presets import load_presets
from engine.paper.text_presets import get_text_preset, load_text_presets
from ui import knobs
from ui.knobs import SPEEDS, Knob, choice, encode
from ui.links import link_settings
from ui.resources import service
from ui.text import shown

ss = st.session_state
DEFAULT_PRESET = "text-fig7-1layer"
UI_PARAMS = ("preset", "run", "lecture", "speed")
SOURCE = ("data.source", ("builtin", "upload", "wikitext-dir"))
TEXT_KNOBS: tuple[Knob, ...] = (
    Knob("data.source", "corpus", "select", SOURCE[1], help="built-in: the World English Bible (public domain)"),
    Knob("data.vocab_size", "vocabulary cap (words)", "int", help="the most frequent words; the rest are <unk>"),
    Knob("model.n_layers", "layers", "int", section="model"),
    Knob("model.n_heads", "heads per layer", "int", section="model", help="must divide d_model"),
    Knob("model.positional", "positional encoding", "select", ("sinusoidal", "learned", "none"), section="model"),
    Knob("model.mlp", "MLP", "select", ("relu", "linear", "none"), section="model"),
    Knob("model.d_model", "embedding size d_model", "int", section="model", advanced=True),
    Knob("model.d_ff", "MLP width d_ff", "int", section="model", advanced=True),
    Knob("model.dropout", "dropout", "float", section="model", advanced=True),
    Knob("model.norm", "LayerNorm", "select", ("post", "pre"), section="model", advanced=True),
    Knob("optim.method", "optimizer", "select", ("sgd", "adam"), section="train"),
    Knob("optim.lr_attention", "learning rate: attention", "float", section="train"),
    Knob("optim.lr_mlp", "learning rate: MLP", "float", section="train"),
    Knob("optim.lr_other", "learning rate: embedding, decoder", "float", section="train"),
    Knob("optim.bptt", "sequence length (bptt)", "int", section="train"),
    Knob("optim.batch", "batch (streams)", "int", section="train"),
    Knob("optim.steps", "steps", "int", section="train"),
    Knob("optim.seed", "seed", "int", section="train", advanced=True),
    Knob("optim.gamma", "StepLR γ per epoch", "float", section="train", advanced=True),
    Knob("snapshots.linear_every", "snapshot every N steps", "text", section="train", advanced=True),
)


# ------------------------------------------------------------------------------ pure: URL ⇄ config
def config_params(preset: str, cfg: dict[str, Any]) -> dict[str, str]:
    """``preset`` + the dotted keys where ``cfg`` differs from the preset."""
    base = flatten_dotted(get_text_preset(preset).config.to_dict())
    out = {"preset": preset}
    for key, value in flatten_dotted(cfg).items():
        if key not in base or json.dumps(base[key]) != json.dumps(value):
            out[key] = encode(value)
    return out


def parse_params(params: dict[str, str]) -> tuple[str, dict[str, Any], list[str]]:
    """(preset, config dict, problems): the link's settings that validate together (:mod:`ui.links`)."""
    problems = []
    preset = params.get("preset", DEFAULT_PRESET)
    if preset not in load_text_presets():
        allowed = ", ".join(load_text_presets())
        problems.append(f"unknown text preset {shown(preset)}: using {DEFAULT_PRESET} (allowed: {allowed})")
        preset = DEFAULT_PRESET
    cfg, found = link_settings(get_text_preset(preset).config.to_dict(), params, TextRunConfig, UI_PARAMS)
    return preset, cfg, problems + found


SCHEMA = TextRunConfig  # the config class of a real-text run: the widgets' bounds


def validate(cfg: dict[str, Any]) -> tuple[TextRunConfig | None, str | None]:
    return knobs.validate(cfg, TextRunConfig)


# ------------------------------------------------------------------------------ session
def bump() -> None:
    ss["text.rev"] = ss.get("text.rev", 0) + 1


def wkey(name: str) -> str:
    return f"t{ss.get('text.rev', 0)}.{name}"


def stale(key: str) -> bool:
    """A widget event of an earlier rev than the one on screen (see :func:`ui.session.stale`)."""
    return not key.startswith(f"t{ss.get('text.rev', 0)}.")


def init_state() -> list[str]:
    """Apply the URL when it is new to this session, else keep the session's state; write the URL."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k != "lecture"}
    if params.get("preset") in load_presets():  # the Lab's URL, kept by a page switch that did not clear it
        params = {}
    problems: list[str] = []
    if "text.cfg" not in ss or (params and params != ss.get("text.sig")):
        problems = apply_params(params)
    write_url()
    return problems


def apply_params(params: dict[str, str]) -> list[str]:
    preset, cfg, problems = parse_params(params)
    run = params.get("run")
    if run:
        info = service().run(run)
        if info is None or info["kind"] != "text":
            what = "is not in the run store" if info is None else "is not a real-text run: open it in the Lab"
            problems.append(f"run {shown(run)} {what}")
            run = None
        else:
            cfg = json.loads(info["config_json"])
    ss["text.preset"], ss["text.cfg"], ss["text.run"] = preset, cfg, run
    ss["text.speed"] = choice(params.get("speed"), SPEEDS, "speed", "max", problems)
    bump()
    return problems


def canonical_params() -> dict[str, str]:
    p = config_params(ss["text.preset"], ss["text.cfg"])
    if ss.get("text.run"):
        p["run"] = ss["text.run"]
    if ss.get("text.speed", "max") != "max":
        p["speed"] = f"{ss['text.speed']:g}"
    return p


def write_url() -> None:
    """Write the canonical URL (never from a run_every tick)."""
    params = canonical_params()
    full = {**params, **{k: v for k, v in st.query_params.to_dict().items() if k == "lecture"}}
    if st.query_params.to_dict() != full:
        st.query_params.from_dict(full)
    ss["text.sig"] = params
