"""Token-line traces: one line per token l of a class or query over the stored steps (c_{l|n} or
z_{ml}), drawn as one plotly trace per colour shade, with the mean-field twin dashed.  No streamlit here."""

from __future__ import annotations

from typing import Any

import numpy as np

from scansnap.paper.history import TokenInfo, decimate
from scansnap.ui.chart_style import MAX_CHART_POINTS, MAX_POINTS, THEORY, colour_levels, jl, token_colors

MAX_LINES = 40  # token lines per chart: a 100-token class at 150 points a line outgrew 200 KB a tick


def shown_tokens(tokens: np.ndarray, info: TokenInfo, limit: int = MAX_LINES) -> np.ndarray:
    """At most ``limit`` of ``tokens`` to draw: the distinct ones with the largest P(l|n) first,
    then common ones (all alike: grey, suppressed together) in the room left, at least 4."""
    tokens = np.asarray(tokens)
    if len(tokens) <= limit:
        return tokens
    dist = sorted((t for t in tokens if info.kind[t] == 1), key=lambda t: -info.p[t])
    common = [t for t in tokens if info.kind[t] != 1]
    n_common = min(len(common), max(4, limit - len(dist)))
    return np.sort(np.array(dist[: limit - n_common] + common[:n_common], dtype=np.int64))


def token_traces(
    steps: np.ndarray,
    Y: np.ndarray,
    tokens: np.ndarray,
    info: TokenInfo,
    label: str,
    mf: tuple[np.ndarray, np.ndarray] | None,
) -> list[dict[str, Any]]:
    """One line per token of ``tokens`` (at most :data:`MAX_LINES`), drawn as one trace per colour
    (P-rank shade, or common grey): lines split by gaps, each point's ``customdata`` its token l
    (for the hover).  Each trace costs plotly ~1.2 ms a redraw however few its points
    (``bench/chart_draw.py``)."""
    colors = token_colors(info)
    hidden = len(tokens) - len(tokens := shown_tokens(tokens, info))
    lines = len(tokens) + (sum(info.kind[t] == 1 for t in tokens) if mf is not None else 0)
    per_line = max(40, min(MAX_POINTS, MAX_CHART_POINTS // max(lines, 1)))
    keep = decimate(len(steps), per_line)
    groups = _colour_groups(tokens, info)
    out = [
        _lines(
            steps[keep],
            Y[keep],
            group,
            name=name or kind,
            showlegend=bool(name),
            color=colors[group[0]],
            width=1.5 if kind == "common" else 2.5,
            hovertemplate=f"{label} l=%{{customdata}} ({kind})<br>step %{{x}}: %{{y}}<extra></extra>",
        )
        for group, kind, name in groups
    ]
    if hidden:
        out.append(_legend_note(f"+{hidden} tokens of smallest P not drawn"))
    if mf is not None:
        out += _meanfield_traces(mf, [g for g, kind, _ in groups if kind == "distinct"], colors, per_line)
    return out


def _legend_note(text: str) -> dict[str, Any]:
    """A legend entry that draws nothing."""
    return dict(type="scatter", x=[None], y=[None], mode="lines", line=dict(width=0), name=text)


def _meanfield_traces(
    mf: tuple[np.ndarray, np.ndarray], groups: list[list[int]], colors: list[str], per_line: int
) -> list[dict[str, Any]]:
    """The mean-field twin's lines (dashed), one trace per colour group of distinct tokens."""
    ms, MY = mf
    mk = decimate(len(ms), per_line)
    style = dict(name="mean-field (T→∞)", legendgroup="mf", width=THEORY["width"], dash=THEORY["dash"])
    return [
        _lines(ms[mk], MY[mk], g, showlegend=i == 0, color=colors[g[0]], opacity=0.8, hoverinfo="skip", **style)
        for i, g in enumerate(groups)
    ]


def _colour_groups(tokens: np.ndarray, info: TokenInfo) -> list[tuple[list[int], str, str]]:
    """``tokens`` grouped by colour, largest P first, then the common ones: (tokens, kind, legend
    name, "" for none).  The legend names three groups: highest-P and lowest-P distinct, common."""
    level = colour_levels(info)
    shades = sorted({int(level[t]) for t in tokens if info.kind[t] == 1}, reverse=True)
    groups = []
    for i, lv in enumerate(shades):
        name = (
            "distinct"
            if len(shades) == 1
            else "distinct, highest P(l|n)"
            if i == 0
            else "distinct, lowest P(l|n)"
            if i == len(shades) - 1
            else ""
        )
        groups.append(([int(t) for t in tokens if info.kind[t] == 1 and level[t] == lv], "distinct", name))
    common = [int(t) for t in tokens if info.kind[t] != 1]
    return groups + ([(common, "common", "common")] if common else [])


def _lines(
    x: np.ndarray, Y: np.ndarray, tokens: list[int], color: str, width: float, dash: str | None = None, **trace: Any
) -> dict[str, Any]:
    """Columns ``tokens`` of ``Y`` (rows at steps ``x``) as one scatter trace, lines split by gaps."""
    xs: list[Any] = []
    ys: list[Any] = []
    cd: list[Any] = []
    xl = x.tolist()
    for l in tokens:  # noqa: E741 - l is the paper's token index
        xs += [*xl, None]
        ys += [*jl(Y[:, l]), None]
        cd += [*([l] * len(xl)), None]
    line = dict(color=color, width=width, **({"dash": dash} if dash else {}))
    return dict(type="scatter", x=xs[:-1], y=ys[:-1], customdata=cd[:-1], mode="lines", line=line, **trace)
