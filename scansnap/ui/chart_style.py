"""The look shared by every chart: fonts, the per-token colours (distinct tokens on Viridis by their
P(l|n) rank, dark = most likely; common tokens grey), theory dashed, PNG download names, and one layout
rule: the title at the top left below the toolbar's strip, wrapped to the narrowest chart's width; the
legend in rows right under it, above the plot (never over the plot, a title or a label).  No streamlit
here."""

from __future__ import annotations

import functools
import math
import re
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from scansnap.core.metrics import html_subscripts
from scansnap.paper.history import TokenInfo, rnd

Spec = dict[str, Any]
COMMON_GREY = "#9a9a9a"
THEORY: dict[str, Any] = dict(dash="dash", width=2.5)
FONT = 15
LECTURE_FONT = 17  # lecture mode: ticks 16 px, titles 20 px, legends 16 px (read from the back of a hall)
MAX_POINTS = 150  # points per trace in live charts
MAX_CHART_POINTS = 4000  # points per chart: many-token charts get fewer points a line


def plot_config(filename: str) -> dict[str, Any]:
    """Streamlit ``config=``: PNG download at 2× with a meaningful file name, no logo."""
    return {"toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}, "displaylogo": False}


COLOR_LEVELS = 6  # shades of distinct tokens: one trace per shade keeps a live chart's redraw cheap


def colour_levels(info: TokenInfo) -> np.ndarray:
    """Each distinct token's P(l|n) rank quantised to ``COLOR_LEVELS`` shades (0 = smallest P)."""
    return np.rint(np.asarray(info.rank) * (COLOR_LEVELS - 1)).astype(np.int64)


def token_colors(info: TokenInfo) -> list[str]:
    """Distinct tokens on Viridis by their P(l|n) rank in ``COLOR_LEVELS`` shades (darker =
    larger P), common tokens grey."""
    r = 0.85 - 0.8 * colour_levels(info) / (COLOR_LEVELS - 1)
    return list(_token_colors(tuple(np.round(r, 6).tolist()), tuple(int(k) for k in info.kind)))


@functools.lru_cache(maxsize=256)
def _token_colors(r: tuple[float, ...], kind: tuple[int, ...]) -> tuple[str, ...]:
    """Cached: plotly's colour-scale sampling validates every colour (~3 ms a call), and the
    ranks only change with the run's P(l|n), not from one live tick to the next."""
    dist = sample_colorscale("Viridis", list(r))
    return tuple(dist[i] if k == 1 else COMMON_GREY for i, k in enumerate(kind))


def jl(a: Any, digits: int = 4) -> list[float | None]:
    """A JSON-safe rounded list (NaN/inf → null, as plotly's own serialiser does)."""
    return [v if math.isfinite(v) else None for v in rnd(a, digits).ravel().tolist()]


MODEBAR_PX = 32  # the toolbar's strip at the top right of every chart (24 px tall): the title starts below it
MULTILINE_SHIFT_EM = 0.72  # plotly.js 4 draws a title of several lines this much higher (measured)
TITLE_PX = 370  # a title's line: the narrowest chart (half of a 1280-px screen with the sidebar open, a
# third of a 1280-px projector) is ~400 px wide
LEGEND_PX = 360  # the plot area a legend's rows are estimated for (plotly places the real rows: a chart
# narrower than this has a slightly shorter plot, a wider one a taller plot)
CHAR_EM = 0.48  # a title character's mean width, in font sizes (bold titles measured 0.44 in Chromium)
LEGEND_EM = 0.5  # a legend character's width, in font sizes (measured ≤ 0.5)
LEGEND_ICON_PX = 50  # a legend entry's line sample and gaps, besides its text
_TAG = re.compile(r"<[^>]+>")
_ENTITY = re.compile(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);")  # what plotly.js decodes (svg_text_utils.convertEntities)


def plotly_text(text: str) -> str:
    """``text`` for a plotly label (a trace name, a title), shown as typed.  Plotly's labels are its own
    pseudo-HTML: it splits them at tags (``<b>``, ``<br>``, ``<a href>``, ...), and decodes in the text
    between only ``&amp;``, ``&lt;``, ``&gt;``, a few named entities (``&mu;``, ``&times;``, ...) and
    numeric ones, never ``&quot;`` (which html.escape writes for a quote, and plotly shows as it is).
    So exactly ``&``, ``<`` and ``>`` are escaped (``&`` first): a name ``<b>x</b>`` shows its tags, not
    bold; ``&mu;`` shows as typed; quotes stay quotes."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def visible_len(text: str) -> int:
    """Characters a plotly text shows (its HTML tags not counted, an entity counted as one)."""
    return len(_ENTITY.sub("&", _TAG.sub("", text)))


def wrap_html(text: str, chars: int) -> list[str]:
    """``text``'s lines (its own ``<br>`` kept) of at most ``chars`` shown characters: broken between
    phrases (:func:`_phrases`) where one fits, else at a space; a tag open at a break is closed at the
    line's end and opened again on the next line."""
    lines: list[str] = []
    for part in text.split("<br>"):
        line = ""
        for phrase in _phrases(part):
            if line and visible_len(line) + 1 + visible_len(phrase) > chars:
                lines.append(line.removesuffix(" ·"))
                line = ""
            for word in phrase.split(" "):
                if line and visible_len(line) + 1 + visible_len(word) > chars:
                    lines.append(line)
                    line = word
                else:
                    line = f"{line} {word}" if line else word
        lines.append(line)
    return _balanced(lines)


def _phrases(text: str) -> list[str]:
    """``text`` cut after each ", " and " · " and before each " (" outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += {"(": 1, ")": -1}.get(ch, 0)
        cut = text[i - 1 : i + 1] in (", ", "· ") or text[i : i + 2] == " ("
        if depth == 0 and ch == " " and cut:
            out.append(text[start:i])
            start = i + 1
    return [*out, text[start:]]


def _balanced(lines: list[str]) -> list[str]:
    """Each line with the tags left open by the lines before it opened again, and its own closed."""
    out: list[str] = []
    stack: list[str] = []  # names of the tags open at the start of the line
    for line in lines:
        text = "".join(f"<{t}>" for t in stack) + line
        for closing, name in re.findall(r"<(/?)(\w+)[^>]*>", line):
            if not closing:
                stack.append(name)
            elif name in stack:
                stack.remove(name)
        out.append(text + "".join(f"</{t}>" for t in reversed(stack)))
    return out


def title_lines(text: str, size: int, width: int = TITLE_PX) -> list[str]:
    """A title's lines at font ``size``: each fits ``width`` pixels."""
    return wrap_html(text, int(width / (CHAR_EM * size)))


def title_style(text: str, size: int, width: int = TITLE_PX) -> dict[str, Any]:
    """A bold title at the top left, below the toolbar's strip (:func:`title_px` makes room for it).
    Plotly draws a title of several lines ~0.7 em higher than one line (and shifts it further with
    its ``automargin``, off here): the padding makes up for it."""
    lines = title_lines(text, size, width)
    bold = "<br>".join(f"<b>{line}</b>" for line in lines)
    pad = MODEBAR_PX + (math.ceil(MULTILINE_SHIFT_EM * size) if len(lines) > 1 else 0)
    return dict(
        text=bold,
        font=dict(size=size),
        x=0,
        xanchor="left",
        y=1,
        yref="container",
        yanchor="top",
        pad=dict(t=pad, l=8),
        automargin=False,
    )


def plain_title(fig: Spec) -> str:
    """A figure's title as one line (no bold, no line breaks; subscripts kept)."""
    return re.sub(r"</?b>", "", str(fig["layout"]["title"]["text"])).replace("<br>", " ")


def set_title(fig: Spec, text: str) -> Spec:
    """``fig`` titled ``text`` (plain or HTML, no bold tags), wrapped, at its title's font size."""
    title = fig["layout"]["title"]
    title.update(title_style(text, title["font"]["size"]))
    return fig


def legend_style(size: int) -> dict[str, Any]:
    """The shared legend: in rows right under the title, above the plot area (:func:`fit_top` places
    it); plotly wraps its entries to the plot's width and starts the plot under its last row (a legend
    placed on the container reserves its room), so it never covers the plot, a title or a label."""
    return dict(
        orientation="h",
        x=0,
        xanchor="left",
        yref="container",
        y=1,
        yanchor="top",
        font=dict(size=size),
        title=dict(side="top"),
        tracegroupgap=0,
    )


def legend_rows(names: list[str], size: int, width: float = LEGEND_PX) -> int:
    """About how many rows plotly needs for legend entries ``names`` in a plot ``width`` px wide (the
    text's width from :data:`LEGEND_EM`; an entry of several lines takes rows of its own)."""
    rows, used = 0, width
    for name in names:
        parts = name.split("<br>")
        w = LEGEND_ICON_PX + LEGEND_EM * size * max(map(visible_len, parts))
        if used + w > width:
            rows, used = rows + len(parts), 0.0  # several-line entries: rows of their own (an upper bound)
        used += w
    return rows


def layout_style(title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> dict[str, Any]:
    """Shared layout: readable fonts (≥ 14 px), white background, ``uirevision`` = ``key``; the title and
    the legend above the plot area (:func:`fit_top` sizes the room for them)."""
    axis = dict(
        title=dict(text="", font=dict(size=font)),
        tickfont=dict(size=font - 1),
        gridcolor="#e6e6e6",
        zerolinecolor="#bdbdbd",
        linecolor="#bdbdbd",
        automargin=True,
    )
    head = title_style(title, font + 3)
    return dict(
        title=head,
        font=dict(size=font),
        uirevision=key,
        paper_bgcolor="white",
        plot_bgcolor="white",
        height=height + 4 * (font - FONT),
        margin=dict(l=60, r=20, t=title_px(head["text"], font + 3), b=50),
        legend=legend_style(font - 1),
        hoverlabel=dict(font=dict(size=font)),
        xaxis={**axis, "title": dict(text=x, font=dict(size=font))},
        yaxis={**axis, "title": dict(text=y, font=dict(size=font))},
    )


def title_px(title: str, size: int) -> int:
    """The room at the top for the toolbar's strip and the title's lines at font ``size``."""
    lines = len(title.split("<br>")) if title else 0
    return MODEBAR_PX + int(1.3 * size) * lines + 6


def fit_top(fig: Spec) -> Spec:
    """The top margin holds the title; the legend goes right under it (plotly starts the plot under the
    legend's last row); the height grows by the legend's estimated rows so the plot keeps its size
    (``layout.meta.legend_px``: what was added, so a second call changes nothing).  Call it after the
    traces, the legend and the title are final; the browser moves the legend when it changes the
    height (scansnap/ui/live/figure.py).  A figure :func:`layout_style` never styled is returned as it is."""
    lay = fig["layout"]
    if "legend" not in lay or "title" not in lay:
        return fig
    size = lay["legend"].get("font", {}).get("size", FONT)
    names = legend_names(fig)
    title = lay["legend"].get("title", {}).get("text")
    rows = legend_rows(names, size) + (len(str(title).split("<br>")) if title and names else 0)
    room = title_px(str(lay["title"]["text"]), lay["title"]["font"]["size"])
    legend_px = rows * int(1.6 * size + 2)
    meta = lay.setdefault("meta", {})
    if "height" in lay:
        lay["height"] += legend_px - meta.get("legend_px", 0) + room - lay["margin"]["t"]
        lay["legend"]["y"] = 1 - room / lay["height"]
    meta["legend_px"] = legend_px
    lay["margin"]["t"] = room
    return fig


def style(fig: go.Figure, title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> go.Figure:
    """:func:`layout_style` applied to a ``go.Figure`` (the static pages' charts), top room fitted."""
    lay = layout_style(title, font, key, x, y, height)
    xa, ya = lay.pop("xaxis"), lay.pop("yaxis")
    fig.update_layout(lay)
    fig.update_xaxes(
        title_text=x, title_font_size=font, tickfont_size=font - 1, gridcolor=xa["gridcolor"], automargin=True
    )
    fig.update_yaxes(
        title_text=y, title_font_size=font, tickfont_size=font - 1, gridcolor=ya["gridcolor"], automargin=True
    )
    return fit_figure(fig)


def fit_figure(fig: go.Figure) -> go.Figure:
    """:func:`fit_top` for a ``go.Figure`` (the static pages' charts)."""
    lay = fig.layout
    spec_: Spec = {
        "data": [t.to_plotly_json() for t in fig.data],
        "layout": {
            "title": {"text": lay.title.text or "", "font": {"size": lay.title.font.size or FONT + 3}},
            "legend": lay.legend.to_plotly_json(),
            "margin": {"t": lay.margin.t or 0},
            "showlegend": lay.showlegend,
            "meta": lay.meta or {},
        },
    }
    if lay.height:
        spec_["layout"]["height"] = lay.height
    out = fit_top(spec_)["layout"]
    fig.update_layout(margin_t=out["margin"]["t"], height=out.get("height"), meta=out["meta"], legend=out["legend"])
    return fig


def spec(
    traces: list[dict[str, Any]], title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380
) -> Spec:
    """A figure whose title, axis titles and trace names show subscripts as subscripts (``H(c_n)`` →
    H(c<sub>n</sub>): plotly has no LaTeX without MathJax)."""
    for t in traces:
        if isinstance(t.get("name"), str):
            t["name"] = html_subscripts(t["name"])
    sub = html_subscripts
    return {"data": traces, "layout": layout_style(sub(title), font, key, sub(x), sub(y), height)}


def vline(x: float, color: str = "#555", dash: str = "dot") -> dict[str, Any]:
    return dict(type="line", x0=x, x1=x, y0=0, y1=1, xref="x", yref="paper", line=dict(color=color, width=2, dash=dash))


def cursor_line(fig: Spec, cursor: float | None) -> None:
    if cursor is not None:
        fig["layout"].setdefault("shapes", []).append(vline(max(cursor, 1e-9), "#d62728"))


def legend_names(fig: Spec) -> list[str]:
    """The entries plotly's legend shows: named line traces not hidden from it (heatmaps have none),
    and none at all for a single trace unless the layout asks for a legend (as plotly does)."""
    shown = fig["layout"].get("showlegend")
    lines = [t for t in fig["data"] if t.get("type", "scatter") not in ("heatmap", "histogram2d")]
    if shown is False or (shown is None and len(lines) < 2):
        return []
    return [str(t["name"]) for t in lines if t.get("showlegend", True) is not False and t.get("name")]


def lecture_layout(fig: Spec, title: str | None = None) -> Spec:
    """A chart for a projector: ``title`` a shorter one (≤ 36 characters: one line in a third of a
    1280-px screen), the top room refitted to the lecture font.  The browser sets the height
    (scansnap/ui/live/figure.py fits it to the screen)."""
    if title:
        set_title(fig, html_subscripts(title))
    return fit_top(fig)


REPORT_PX = 900  # a reproduction's figure spans the page (≥ 1,100 px at 1280×720): its title's and legend's width


def report_layout(fig: go.Figure, size: int) -> go.Figure:
    """A reproduction's stored figure (its own panels, their titles above them) under the shared rule: the
    title at the top left below the toolbar, the panel titles under it, the legend in rows at the bottom
    of the figure (placed on the container: plotly keeps the axes' titles above it), the height grown by
    its rows."""
    head = title_style(str(fig.layout.title.text or ""), size + 3, REPORT_PX)
    panels = any(a.yref == "paper" and (a.y or 0) >= 1 for a in fig.layout.annotations)  # subplot titles
    top = title_px(head["text"], size + 3) + (int(1.5 * (size + 1)) if panels else 0)
    names = legend_names(
        {"data": [t.to_plotly_json() for t in fig.data], "layout": {"showlegend": fig.layout.showlegend}}
    )
    rows = legend_rows(names, size - 1, REPORT_PX)
    legend = dict(
        orientation="h",
        x=0,
        xanchor="left",
        yref="container",
        y=0,
        yanchor="bottom",
        font=dict(size=size - 1),
        title=dict(side="top"),
        tracegroupgap=0,
    )
    grow = rows * int(1.6 * (size - 1) + 2) + max(0, top - (fig.layout.margin.t or 80))
    return fig.update_layout(title=head, margin_t=top, legend=legend, height=(fig.layout.height or 450) + grow)
