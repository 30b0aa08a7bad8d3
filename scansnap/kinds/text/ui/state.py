"""The Real text page's knobs and its state in the URL: its :class:`~scansnap.ui.url_state.UrlState`
``TEXT`` (the same machinery as the Lab's) for a :class:`~scansnap.kinds.text.science.config.TextRunConfig`.

The URL holds the preset and the settings that differ from it, ``run`` (a text run to reopen) and
``speed``; ``lecture`` is kept as it is.  Session keys: ``text.preset``, ``text.cfg``, ``text.run``,
``text.rev``, ``text.sig`` (:mod:`scansnap.ui.url_state`), ``text.speed``, ``text.target`` (the step Step N
runs to).
"""

from __future__ import annotations

from functools import partial

import streamlit as st

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import load_presets
from scansnap.ui.knobs import SPEEDS, Knob, choice
from scansnap.ui.url_state import UrlState

ss = st.session_state
DEFAULT_PRESET = "text-fig7-1layer-live"  # trains live on a CPU; the paper's settings are text-fig7-1layer
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
    Knob(
        "model.layer_init",
        "layers start",
        "select",
        ("independent", "copy"),
        section="model",
        advanced=True,
        help="copy: every layer starts as a copy of layer 0, as the authors' nn.TransformerEncoder",
    ),
    Knob("optim.method", "optimizer", "select", ("sgd", "adam"), section="train"),
    Knob("optim.lr_attention", "learning rate: attention", "float", section="train"),
    Knob("optim.lr_mlp", "learning rate: MLP", "float", section="train"),
    Knob("optim.lr_other", "learning rate: embedding, decoder", "float", section="train"),
    Knob("optim.bptt", "sequence length (bptt)", "int", section="train"),
    Knob("optim.batch", "batch (streams)", "int", section="train"),
    Knob("optim.steps", "steps", "int", section="train"),
    Knob("optim.seed", "seed", "int", section="train", advanced=True),
    Knob("optim.gamma", "StepLR γ per epoch", "float", section="train", advanced=True),
    Knob(
        "optim.mlp_lr_layers",
        "MLP learning rate on",
        "select",
        ("all", "first"),
        section="train",
        advanced=True,
        help="first: on layer 0's MLP only, the others at the embedding's rate (Fig. 7's notebook)",
    ),
    Knob(
        "optim.reset_each_epoch",
        "reset the optimiser every epoch",
        "select",
        (False, True),
        section="train",
        advanced=True,
        help="True: a fresh optimiser (Adam's moments reset) at each epoch, as JoMA's code",
    ),
    Knob(
        "probe.stream",
        "attention maps drawn on",
        "select",
        ("validation", "train"),
        section="train",
        advanced=True,
        help="train: a training window, stream 0, as Fig. 7's notebook",
    ),
    Knob("snapshots.linear_every", "snapshot every N steps", "text", section="train", advanced=True),
)


PAGE_ONLY = ("lecture", "follow")  # left in the URL as they are
TEXT = UrlState("text", "t", "text", TextRunConfig, partial(load_presets, "text"), UI_PARAMS, PAGE_ONLY, DEFAULT_PRESET)
SCHEMA = TextRunConfig  # the config class of a real-text run: the widgets' bounds
bump, wkey, stale, validate = TEXT.bump, TEXT.wkey, TEXT.stale, TEXT.validate


def init_state() -> list[str]:
    """Apply the URL when it is new to this session, else keep the session's state; write the URL."""
    params = {k: v for k, v in st.query_params.to_dict().items() if k not in PAGE_ONLY}
    if params.get("preset") in load_presets():  # the Lab's URL, kept by a page switch that did not clear it
        params = {}
    problems = TEXT.init_state(params, apply_params)
    write_url()
    return problems


def apply_params(params: dict[str, str]) -> list[str]:
    link = TEXT.read_link(params)
    problems = link.problems
    ss["text.preset"], ss["text.cfg"], ss["text.run"] = link.preset, link.cfg, link.run
    ss["text.speed"] = choice(params.get("speed"), SPEEDS, "speed", "max", problems)
    bump()
    return problems


def canonical_params() -> dict[str, str]:
    p = TEXT.own_params()
    if ss.get("text.speed", "max") != "max":
        p["speed"] = ss["text.speed"] if isinstance(ss["text.speed"], str) else f"{ss['text.speed']:g}"
    return p


def write_url() -> None:
    """Write the canonical URL (never from a run_every tick)."""
    TEXT.write_url(canonical_params())
