"""The data designer's P(l|n) preview: one ``go.Figure`` (rows = next tokens grouped by query, columns =
tokens, a strip marking each token's kind), downsampled for large problems."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.paper.history import rnd
from scansnap.ui.chart_style import COMMON_GREY, FONT, style

PREVIEW_COLUMNS = 600  # tokens drawn side by side; more are max-pooled into this many columns
PREVIEW_ROWS = 100  # classes drawn; more are cut (the note says so)


def pooled(a: np.ndarray, width: int) -> tuple[np.ndarray, int]:
    """Columns of ``a`` max-pooled into at most ``width`` columns: (pooled array, tokens per column)."""
    per = max(1, -(-a.shape[-1] // width))
    pad = (-a.shape[-1]) % per
    padded = np.pad(a, [(0, 0)] * (a.ndim - 1) + [(0, pad)])
    return padded.reshape(*a.shape[:-1], -1, per).max(-1), per


def p_heatmap(P: np.ndarray, psi: np.ndarray, token_kind: np.ndarray, font: int = FONT) -> go.Figure:
    """P(l|n): rows = next tokens grouped by query, columns = tokens; a strip marks each token's kind.
    Large problems are shown downsampled (columns max-pooled, rows cut), and the title says how."""
    order = np.argsort(psi, kind="stable")[:PREVIEW_ROWS]
    glob = np.where((token_kind == 2).any(0), 2, np.where((token_kind == 1).any(0), 1, 0))
    Pp, per = pooled(P[order], PREVIEW_COLUMNS)
    kinds, _ = pooled(glob[None, :], PREVIEW_COLUMNS)
    x = (np.arange(Pp.shape[1]) * per).tolist()
    fig = make_subplots(rows=2, cols=1, row_heights=[0.1, 0.9], shared_xaxes=True, vertical_spacing=0.03)
    fig.add_trace(_kind_strip(kinds[0], x), row=1, col=1)
    fig.add_trace(
        go.Heatmap(
            z=rnd(Pp, 3).tolist(),
            x=x,
            y=[f"n={n} (q={psi[n]})" for n in order],
            colorscale="Blues",
            zmin=0,
            colorbar=dict(title="P(l|n)", len=0.85, y=0.42),
            hovertemplate="%{y}, l=%{x}: P=%{z}<extra></extra>",
        ),
        row=2,
        col=1,
    )
    fig.update_yaxes(autorange="reversed", type="category", row=2, col=1)
    note = _preview_note(len(psi), len(order), per)
    title = f"P(l|n) preview · strip: purple = distinct, grey = common{note}"
    style(fig, title, font, "P", "", "", height=max(320, 90 + 28 * len(order)))
    fig.update_xaxes(title_text="token l", row=2, col=1)
    return fig


def _kind_strip(kinds: np.ndarray, x: list[int]) -> go.Heatmap:
    return go.Heatmap(
        z=[kinds.tolist()],
        x=x,
        colorscale=[[0, "#ffffff"], [0.5, "#440154"], [1, COMMON_GREY]],
        zmin=0,
        zmax=2,
        showscale=False,
        y=["kind"],
        hovertemplate="l=%{x}: %{customdata}<extra></extra>",
        customdata=[[("—", "distinct", "common")[k] for k in kinds]],
    )


def _preview_note(classes: int, shown_rows: int, per: int) -> str:
    parts = []
    if per > 1:
        parts.append(f"each column is the largest P of {per} tokens")
    if shown_rows < classes:
        parts.append(f"first {shown_rows} of {classes} next tokens")
    return f"<br><sup>downsampled: {'; '.join(parts)}</sup>" if parts else ""
