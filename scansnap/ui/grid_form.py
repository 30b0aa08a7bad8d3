"""The Sweep page's grid over any knob: its form in the session, the paper's open questions as one-click
grids, and the grid's runs in the URL (``?grid=ID,ID,...&axes=KEY,KEY``).

A grid is ``KEY=V1,V2,...`` axes (one per line, as ``python -m scansnap sweep --grid`` takes them) ×
seeds over a base preset of any kind, one stored run per cell, trained through the job manager like
any run (on the cluster where the server has one).  Session keys: ``gr.base``, ``gr.axes``,
``gr.seeds`` (the form), ``grid.runs`` and ``grid.keys`` (the grid shown).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import streamlit as st

from scansnap.service.facade import MAX_GRID_CELLS
from scansnap.ui.text import shown

ss = st.session_state
RUN_ID = re.compile(r"[0-9a-f]{12}")
KEY = re.compile(r"[a-z_]+(\.[a-z_0-9]+)+")
MAX_URL_RUNS = MAX_GRID_CELLS  # as many runs as the dashboard lets one grid have
MAX_URL_AXES = 8  # as many axes as a grid may have (scansnap.service.grid.MAX_AXES: pages import only the facade)


@dataclass(frozen=True)
class OpenQuestion:
    """One of the paper's open questions (its §8) as a grid of real-text runs."""

    label: str
    base: str
    axes: tuple[str, ...]
    seeds: str
    why: str


OPEN_QUESTIONS = (
    OpenQuestion(
        "Positional encoding × depth",
        "text-fig7-1layer-live",
        ("model.positional=none,sinusoidal,learned", "model.n_layers=1,2,3"),
        "1",
        "Does the scan and snap need positional encoding, and does it happen in every layer?",
    ),
    OpenQuestion(
        "Sequence length",
        "text-fig7-1layer-live",
        ("optim.bptt=32,128,512",),
        "1-3",
        "Longer contexts hold more common tokens: does attention still leave them?",
    ),
    OpenQuestion(
        "Depth",
        "text-fig7-1layer-live",
        ("model.n_layers=1,2,3,4",),
        "1-3",
        "Which layers' attention snaps, and in what order?",
    ),
)
DEFAULT = OpenQuestion("", "syn-small", ("data.num_distinct_per_next=5,10,20",), "1-2", "")


def fill(q: OpenQuestion) -> None:
    """Put a grid in the form (a button's callback)."""
    ss["gr.base"], ss["gr.axes"], ss["gr.seeds"] = q.base, "\n".join(q.axes), q.seeds


def init_form(names: list[str]) -> None:
    """The default grid, the first time the page is opened (a base the shelves have)."""
    if "gr.base" not in ss or ss["gr.base"] not in names:
        fill(DEFAULT if DEFAULT.base in names else OpenQuestion("", names[0], (), "1", ""))


def axis_lines(text: str) -> list[str]:
    """The form's axes, one ``KEY=V1,V2,...`` per non-empty line."""
    return [line.strip() for line in text.splitlines() if line.strip()]


def grid_from_url() -> tuple[list[str], list[str], list[str]]:
    """(run ids, axis keys, warnings) from ``?grid=...&axes=...``: what does not read as run ids and
    dotted keys is left out, and said."""
    warnings = []
    ids = [r for r in str(st.query_params.get("grid", "")).split(",") if r]
    keys = [k for k in str(st.query_params.get("axes", "")).split(",") if k]
    good_ids = [r for r in ids if RUN_ID.fullmatch(r)][:MAX_URL_RUNS]
    dotted = [k for k in keys if KEY.fullmatch(k)]
    good_keys = dotted[:MAX_URL_AXES]
    if len(good_ids) != len(ids):
        warnings.append(
            f"the link's grid= holds {len(ids) - len(good_ids)} entries that are not run ids "
            f"(12 hex digits, at most {MAX_URL_RUNS}): {shown(','.join(ids))}; left out"
        )
    if len(dotted) > MAX_URL_AXES:  # the cap first: these keys are fine, there are too many of them
        rest = shown(",".join(dotted[MAX_URL_AXES:]))
        warnings.append(
            f"the link's axes= names {len(dotted)} axes: at most {MAX_URL_AXES} are allowed; "
            f"the first {MAX_URL_AXES} are shown, {rest} left out"
        )
    if len(dotted) != len(keys):
        warnings.append(
            f"the link's axes= holds entries that are not dotted config keys: {shown(','.join(keys))}; left out"
        )
    return good_ids, good_keys, warnings


def show_grid(run_ids: list[str], keys: list[str]) -> None:
    """Remember the grid shown, and put it in the URL (a link reopens it)."""
    ss["grid.runs"], ss["grid.keys"] = run_ids, keys
    st.query_params["grid"] = ",".join(run_ids)
    st.query_params["axes"] = ",".join(keys)
