"""Plain words first on the lecture screen (issue 50): every text a student reads there that holds one of the
paper's symbols (c_n, z_m, B̂, λ, ξ, Δz) holds its words beside it, as "attention c(l | n)" or "the common
token's drop −Δz"; the symbols and formulas are for the tooltips.  Read from the Lab with ``?lecture=1``
and a finished run of each lecture preset: the story, the badges, every chart's title, axis titles, legend
names, on-line labels and caption."""

from __future__ import annotations

import json
import re

import pytest

from scansnap.service.jobs import get_manager
from tests.apphelp import live_figure, run_app
from tests.guards import GUARD_S

# symbol (as a regular expression) → the words one of which must stand in the same text
WORDS: dict[str, tuple[str, ...]] = {
    r"c\(l ?\| ?n\)|c_n|c<sub>n</sub>": ("attention",),
    r"z\(m, ?l\)|z_m|z<sub>m</sub>": ("logit",),
    r"B̂": ("growth",),
    r"Δz": ("drop", "logit change", "logit"),
    r"λ|ξ": ("overlap", "drive"),
}


def _chart_texts(fig: dict) -> list[str]:
    lay = fig["layout"]
    out = [lay.get("title", {}).get("text", "")]
    for axis in (k for k in lay if k.startswith(("xaxis", "yaxis"))):
        out.append((lay[axis].get("title") or {}).get("text", ""))
    out += [a.get("text", "") for a in lay.get("annotations", [])]
    out.append((lay.get("legend", {}).get("title") or {}).get("text", ""))
    for t in fig["data"]:
        if t.get("showlegend", True) is not False and t.get("name"):
            out.append(str(t["name"]))
        out.append(((t.get("colorbar") or {}).get("title") or {}).get("text", ""))
    return [x for x in out if x]


def screen_texts(at) -> list[str]:
    """What a student reads on the page: Markdown (the story, the badges), captions, and every chart's text."""
    texts = [m.value for m in at.markdown] + [c.value for c in at.caption]
    for c in at.get("bidi_component"):
        try:
            texts += _chart_texts(live_figure(c))
        except (KeyError, json.JSONDecodeError, TypeError):
            continue  # not a live chart (the plotly loader)
    return [t for t in texts if t]


def bare_symbols(texts: list[str]) -> list[str]:
    """Each text that holds a symbol without any of its words."""
    bad = []
    for text in texts:
        low = text.lower()
        for symbol, words in WORDS.items():
            if re.search(symbol, text) and not any(w in low for w in words):
                bad.append(f"{symbol!r} without {words}: {text!r}")
    return bad


def test_the_rule_finds_a_bare_symbol():
    assert bare_symbols(["c(l | n) over time", "B̂ and −Δz"]) and not bare_symbols(["attention c(l | n)"])


@pytest.mark.parametrize("preset", ["lecture", "lecture-finite-t"])
def test_the_lecture_screen_names_every_symbol_in_words(data_dir, preset):
    at = run_app({"lecture": "1", "preset": preset, "speed": "max"})
    at.button(key="btn.start").click().run()
    rid = at.session_state["lab.run"]
    assert get_manager(data_dir).wait(rid, GUARD_S) == "finished"
    at.run()
    assert not at.exception
    texts = screen_texts(at)
    assert sum("-badge[" in t for t in texts) == 4 and any("The snap" in t for t in texts)  # the whole screen read
    assert bare_symbols(texts) == []
