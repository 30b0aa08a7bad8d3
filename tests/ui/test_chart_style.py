"""The shared chart layout (scansnap/ui/chart_style.py): titles wrapped to the narrowest chart and kept below the
toolbar, the legend right under the title and above the plot.  The browser test
(tests/e2e/test_chart_layout.py) checks what plotly draws; these check the numbers it is given."""

from __future__ import annotations

import math
import re

import numpy as np

from scansnap.kinds.synthetic.ui import figures
from scansnap.ui import chart_style
from scansnap.ui.chart_style import (
    CHAR_EM,
    LEGEND_EM,
    LEGEND_ICON_PX,
    LEGEND_PX,
    MODEBAR_PX,
    MULTILINE_SHIFT_EM,
    TITLE_PX,
    fit_top,
    legend_rows,
    spec,
    title_style,
    visible_len,
    wrap_html,
)

TAG = re.compile(r"<(/?)(\w+)[^>]*>")


def _balanced(line: str) -> bool:
    """Every tag the line opens it closes, in order (plotly closes what a line break leaves open)."""
    stack: list[str] = []
    for closing, name in TAG.findall(line):
        if not closing:
            stack.append(name)
        elif not stack or stack.pop() != name:
            return False
    return not stack


def test_wrap_keeps_lines_short_breaks_between_phrases_and_balances_tags():
    text = "final H(c<sub>n</sub>) on distinct tokens (nats) vs η<sub>Y</sub>/η<sub>Z</sub> (mean ± SEM over seeds)"
    lines = wrap_html(text, 40)
    assert len(lines) > 1 and all(visible_len(x) <= 40 for x in lines) and all(map(_balanced, lines))
    assert " ".join(TAG.sub("", x) for x in lines) == TAG.sub("", text)  # nothing lost, nothing added
    assert wrap_html("Attention c(l | n) over time, next token n=0 · step 300", 42) == [
        "Attention c(l | n) over time,",  # broken after the comma, not inside "next token"
        "next token n=0 · step 300",
    ]
    assert wrap_html("Attention logits z(m, l) of query q=0 (dashed: T→∞ mean field)", 42)[1] == (
        "(dashed: T→∞ mean field)"  # the comma inside z(m, l) is no break
    )
    sup = wrap_html("P(l|n) preview<br><sup>downsampled: each column is the largest P of 3 tokens</sup>", 30)
    assert sup[0] == "P(l|n) preview" and all(x.startswith("<sup>") and x.endswith("</sup>") for x in sup[1:])


def test_a_title_fits_the_narrowest_chart_and_starts_below_the_toolbar():
    size = 18
    chars = int(TITLE_PX / (CHAR_EM * size))
    one = title_style("Loss and accuracy", size)
    two = title_style("The snap: the common token's logit drop and B̂ (n = 0), a long title", size)
    assert one["pad"]["t"] == MODEBAR_PX and one["text"] == "<b>Loss and accuracy</b>"
    lines = two["text"].split("<br>")
    assert len(lines) == 2 and all(x.startswith("<b>") and visible_len(x) <= chars for x in lines)
    # plotly draws a title of several lines ~0.7 em higher: the padding makes up for it
    assert two["pad"]["t"] == MODEBAR_PX + math.ceil(MULTILINE_SHIFT_EM * size)
    assert two["yref"] == "container" and two["yanchor"] == "top" and two["automargin"] is False


def test_legend_rows_fill_the_plot_width():
    size = 10
    per_char = LEGEND_EM * size
    fits_two = int((LEGEND_PX / 2 - LEGEND_ICON_PX) / per_char)  # two such entries fill one row
    assert legend_rows(["x" * fits_two] * 4, size) == 2
    assert legend_rows(["x" * (fits_two + 2)] * 4, size) == 4  # one a row
    assert legend_rows(["a<br>b"], size) == 2 and legend_rows([], size) == 0


def _lines(n: int) -> list[dict]:
    return [dict(type="scatter", x=[0, 1], y=[0, k], name=f"line {k}") for k in range(n)]


def test_fit_top_puts_the_legend_under_the_title_and_grows_the_height_by_its_rows():
    fig = spec(_lines(5), "Two traces and a title", 15, "k")
    lay = fig["layout"]
    t0, h0 = lay["margin"]["t"], lay["height"]
    fit_top(fig)
    rows = legend_rows([f"line {k}" for k in range(5)], lay["legend"]["font"]["size"])
    added = lay["meta"]["legend_px"]
    assert rows >= 1 and added == rows * int(1.6 * lay["legend"]["font"]["size"] + 2)
    assert lay["margin"]["t"] == t0 and lay["height"] == h0 + added
    assert lay["legend"]["yref"] == "container" and lay["legend"]["yanchor"] == "top"
    assert math.isclose((1 - lay["legend"]["y"]) * lay["height"], lay["margin"]["t"])  # right under the title
    before = dict(lay["margin"]), lay["height"], lay["legend"]["y"]
    fit_top(fig)
    assert (dict(lay["margin"]), lay["height"], lay["legend"]["y"]) == before  # a second call changes nothing


def test_a_single_trace_or_a_heatmap_gets_no_legend_room():
    single = fit_top(spec(_lines(1), "One line", 15, "k"))
    heat = fit_top(figures.cn_heatmap(np.eye(2), np.array([0, 0]), 3))
    assert single["layout"]["meta"]["legend_px"] == 0 and heat["layout"]["meta"]["legend_px"] == 0
    assert chart_style.legend_names(heat) == [] and heat["layout"]["title"]["text"].count("<sub>n</sub>") == 1


def test_a_wrapped_title_gets_the_room_of_its_lines():
    short = fit_top(spec(_lines(2), "Short", 15, "k"))["layout"]
    long_ = fit_top(spec(_lines(2), "A title long enough to need a second line on the narrowest chart", 15, "k"))
    assert long_["layout"]["margin"]["t"] - short["margin"]["t"] == int(1.3 * 18)  # one more 18-px line
