"""The look shared by every chart: fonts, the per-token colours (distinct tokens on Viridis by their
P(l|n) rank, dark = most likely; common tokens grey), theory dashed, layout, PNG download names.
No streamlit here."""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale

from engine.core.metrics import html_subscripts
from engine.paper.history import TokenInfo, rnd

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


def layout_style(title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> dict[str, Any]:
    """Shared layout: readable fonts (≥ 14 px), white background, ``uirevision`` = ``key``."""
    axis = dict(
        title=dict(text="", font=dict(size=font)),
        tickfont=dict(size=font - 1),
        gridcolor="#e6e6e6",
        zerolinecolor="#bdbdbd",
        linecolor="#bdbdbd",
        automargin=True,
    )
    return dict(
        title=dict(text=f"<b>{title}</b>", font=dict(size=font + 3), x=0.01, xanchor="left"),
        font=dict(size=font),
        uirevision=key,
        paper_bgcolor="white",
        plot_bgcolor="white",
        height=height + 4 * (font - FONT),
        margin=dict(l=60, r=20, t=60 + 2 * (font - FONT), b=50),
        legend=dict(font=dict(size=font - 2)),
        hoverlabel=dict(font=dict(size=font)),
        xaxis={**axis, "title": dict(text=x, font=dict(size=font))},
        yaxis={**axis, "title": dict(text=y, font=dict(size=font))},
    )


def style(fig: go.Figure, title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> go.Figure:
    lay = layout_style(title, font, key, x, y, height)
    xa, ya = lay.pop("xaxis"), lay.pop("yaxis")
    fig.update_layout(lay)
    fig.update_xaxes(
        title_text=x, title_font_size=font, tickfont_size=font - 1, gridcolor=xa["gridcolor"], automargin=True
    )
    fig.update_yaxes(
        title_text=y, title_font_size=font, tickfont_size=font - 1, gridcolor=ya["gridcolor"], automargin=True
    )
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


def legend_entries(fig: Spec) -> int:
    """How many entries plotly's legend shows (none for a single trace, as plotly does)."""
    if len(fig["data"]) < 2 or fig["layout"].get("showlegend") is False:
        return 0
    return sum(1 for t in fig["data"] if t.get("showlegend", True) and t.get("name"))


def lecture_layout(fig: Spec, title: str | None = None) -> Spec:
    """A chart for a projector: the title pinned to the top, the legend in two columns between the
    title and the plot (a side legend would take half of a third of the screen), the top margin
    grown to hold both; ``title``: a shorter one (one line in a third of a 1280 px screen, ≤ 36
    characters).  The browser sets the height (ui/live/figure.py fits it to the screen)."""
    lay = fig["layout"]
    font = lay["font"]["size"]
    if title:
        lay["title"]["text"] = f"<b>{html_subscripts(title)}</b>"
    lay["title"].update(y=1, yref="container", yanchor="top", pad=dict(t=8))
    top = int(1.4 * (font + 3)) + 16
    rows = math.ceil(legend_entries(fig) / 2)
    if rows:
        lay["legend"].update(orientation="h", x=0, xanchor="left", y=1.0, yanchor="bottom", entrywidth=0.5,
                             entrywidthmode="fraction", font=dict(size=font - 1))  # fmt: skip
        top += rows * int(1.6 * (font - 1)) + 4
    lay["height"] += top - lay["margin"]["t"]
    lay["margin"]["t"] = top
    return fig
