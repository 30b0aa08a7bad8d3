"""Type a sentence, see each layer's attention on it: the maps of a real-text run's model at the step on
screen (the latest step at or before it whose weights the run keeps), as the probe window's maps are
drawn.  The forward pass is the service's (the kind's door on the facade,
:meth:`~scansnap.kinds.text.service.door.TextDoor.sentence_maps`)."""

from __future__ import annotations

import zlib

import streamlit as st

from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.ui import charts as text_charts
from scansnap.kinds.text.ui.door import text_door
from scansnap.service.facade import ServiceError
from scansnap.ui.caches import byte_lru
from scansnap.ui.live.figure import live_payload, live_plot_ui
from scansnap.ui.resources import service
from scansnap.ui.text import plain, quoted_words

EXAMPLE = "In the beginning God created the heavens and the earth."  # the built-in corpus's first verse
MAX_CHARS = 400


@byte_lru("text charts")
def _sentence_charts(rid: str, at: int, text: str, fs: int) -> tuple[int, list[str], tuple[str, ...], int, int]:
    """(the step read, the words outside the vocabulary, one live payload per layer, words shown, words cut)."""
    got = text_door().sentence_maps(rid, at, text)
    payloads = tuple(
        live_payload(
            text_charts.attention_map(a, got.words, f"layer {k} · your words", fs, f"text-typed-{k}", k == 0),
            f"scansnap-{rid}-typed-L{k}-step{got.step}",
        )
        for k, a in enumerate(got.maps)
    )
    return got.step, got.unknown, payloads, len(got.words), got.cut


def sentence_ui(rid: str, cfg: TextRunConfig, at: int, fs: int, tick: tuple[str, str]) -> None:
    """The text box and, once it holds words, one attention map per layer on them at step ``at``."""
    st.subheader("Your sentence")
    text = st.text_input(
        "Type a sentence: each layer's attention on its words, at the step on screen",
        value=EXAMPLE if cfg.data.source == "builtin" else "",
        max_chars=MAX_CHARS,
        key=f"text.sentence.{rid}",
        placeholder="type any English sentence",
        help="read with the run's own tokenizer and vocabulary; words it never saw read as <unk>; "
        f"the first {min(cfg.optim.bptt, 64)} words are shown",
    )
    if not text.strip():
        return
    try:
        step, unknown, payloads, shown, cut = _sentence_charts(rid, at, text, fs)
    except ServiceError as e:
        st.caption(plain(str(e)))
        return
    kept = service().stored.weight_steps(rid)
    notes = [
        f"At step {step}: the run keeps its weights at {len(kept)} steps "
        f"({', '.join(map(str, kept[:12]))}), this is the latest at or before step {at}."
        if step != at
        else f"At step {step}."
    ]
    if unknown:
        notes.append(f"Not in the run's vocabulary (read as <unk>): {quoted_words(unknown)}.")
    if cut:
        notes.append(f"The maps show the first {shown} words ({cut} more left out).")
    st.caption(" ".join(notes) + " Row = a word, column = the earlier words it attends to; bright = much attention.")
    view = f"{tick[1]}/typed@{step}:{zlib.crc32(text.encode())}"  # a new sentence is a new view
    with st.container(key="text-typed"):
        for k, data in enumerate(payloads):
            live_plot_ui(data, f"text-typed-{k}", tick[0], view)
