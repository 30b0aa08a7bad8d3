"""The run's verdict badges on the Lab: one per claim of Theorems 2–4, with its sentence of words."""

from __future__ import annotations

import streamlit as st

from scansnap.kinds.synthetic.paper.claims import in_words, none_judged
from scansnap.paper.verdicts import Verdict, verdict_text
from scansnap.ui.text import plain

BADGES = {"pass": ("green", "✅"), "fail": ("red", "❌"), "n/a": ("gray", "➖")}


def verdicts_ui(verdicts: list[Verdict]) -> None:
    """One badge per verdict, four in a row (one Markdown element per verdict in a container laid out by
    scansnap/assets/live.css): its label, then one sentence of words (whether the claim holds, or why it is not
    judged); the statistic, the number and the threshold in its tooltip."""
    if (why := none_judged(verdicts)) is not None:
        st.caption(plain(why))
    with st.container(key="lab-verdicts"):
        for v in verdicts:
            color, icon = BADGES[v.status]
            st.markdown(
                f":{color}-badge[{icon} {plain(v.label)}]\n\n:small[{plain(in_words(v))}]", help=plain(verdict_text(v))
            )
