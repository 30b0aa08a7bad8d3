"""Plotly figure builders (no streamlit here, so they are unit-testable).

Every builder takes plain arrays (shaped by ``engine.views``) and returns a ``go.Figure``.
Colours are per token and the same in every chart: distinct tokens on a Viridis scale by
their P(l|n) rank within the class (dark = most likely), common tokens grey.  Theory is
dashed.  Trace names use the engine's metric names verbatim.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import plotly.graph_objects as go
from plotly.colors import sample_colorscale
from plotly.subplots import make_subplots

from engine.views import TokenInfo, decimate, rnd

COMMON_GREY = "#9a9a9a"
THEORY = dict(dash="dash", width=2.5)
FONT = 15
LECTURE_FONT = 22
MAX_POINTS = 150  # points per trace in live charts


def plot_config(filename: str) -> dict[str, Any]:
    """Streamlit ``config=``: PNG download at 2× with a meaningful file name, no logo."""
    return {"toImageButtonOptions": {"format": "png", "filename": filename, "scale": 2}, "displaylogo": False}


def token_colors(info: TokenInfo) -> list[str]:
    r = np.clip(0.85 - 0.8 * info.rank, 0, 1)
    dist = sample_colorscale("Viridis", list(r))
    return [dist[i] if info.kind[i] == 1 else COMMON_GREY for i in range(len(info.kind))]


def style(fig: go.Figure, title: str, font: int, key: str, x: str = "", y: str = "", height: int = 380) -> go.Figure:
    fig.update_layout(title=dict(text=title, font=dict(size=font + 3)), font=dict(size=font), uirevision=key,
                      template="plotly_white", height=height + 4 * (font - FONT),
                      margin=dict(l=60, r=20, t=60 + 2 * (font - FONT), b=50),
                      legend=dict(font=dict(size=font - 2)), hoverlabel=dict(font_size=font))
    fig.update_xaxes(title_text=x, title_font_size=font, tickfont_size=font - 1)
    fig.update_yaxes(title_text=y, title_font_size=font, tickfont_size=font - 1)
    return fig


def _cursor(fig: go.Figure, cursor: float | None) -> None:
    if cursor is not None:
        fig.add_vline(x=max(cursor, 1e-9), line=dict(color="#d62728", width=2, dash="dot"))


def _token_lines(fig: go.Figure, steps: np.ndarray, Y: np.ndarray, tokens: np.ndarray, info: TokenInfo,
                 label: str, mf: tuple[np.ndarray, np.ndarray] | None) -> None:
    colors = token_colors(info)
    keep = decimate(len(steps), MAX_POINTS)
    x = steps[keep].tolist()
    for l in tokens:  # noqa: E741 - l is the paper's token index
        kind = "common" if info.kind[l] == 2 else "distinct"
        fig.add_trace(go.Scatter(x=x, y=rnd(Y[keep, l], 4).tolist(), mode="lines", name=f"l={l}",
                                 legendgroup=f"l{l}", line=dict(color=colors[l], width=2.5 if kind == "distinct" else 1.5),
                                 hovertemplate=f"{label} l={l} ({kind}, P={info.p[l]:.3f})<br>step %{{x}}: %{{y}}"
                                 "<extra></extra>"))
    if mf is None:
        return
    ms, MY = mf
    mk = decimate(len(ms), MAX_POINTS)
    for i, l in enumerate(t for t in tokens if info.kind[t] == 1):  # noqa: E741
        fig.add_trace(go.Scatter(x=ms[mk].tolist(), y=rnd(MY[mk, l], 4).tolist(), mode="lines",
                                 name="mean-field (T→∞)", legendgroup="mf", showlegend=i == 0,
                                 line=dict(color=colors[l], **THEORY), opacity=0.8, hoverinfo="skip"))


def cn_lines(steps: np.ndarray, C: np.ndarray, n: int, info: TokenInfo, supp: np.ndarray, step: int,
             font: int = FONT, mf: tuple[np.ndarray, np.ndarray] | None = None,
             cursor: float | None = None) -> go.Figure:
    """c_n over time for next token n: one line per token of supp(n)."""
    fig = go.Figure()
    _token_lines(fig, steps, C, supp, info, "c", mf)
    _cursor(fig, cursor)
    return style(fig, f"c_n over time, next token n={n} · step {step}", font, "cn", "step", "c_{l|n}")


def cn_heatmap(c: np.ndarray, psi: np.ndarray, step: int, font: int = FONT) -> go.Figure:
    """c_n for all next tokens (rows grouped by query) at one step."""
    order = np.argsort(psi, kind="stable")
    fig = go.Figure(go.Heatmap(z=rnd(c[order], 3).tolist(), y=[f"n={n} (q={psi[n]})" for n in order],
                               colorscale="Viridis", zmin=0, colorbar=dict(title="c"),
                               hovertemplate="n=%{y}, l=%{x}: c=%{z}<extra></extra>"))
    fig.update_yaxes(autorange="reversed", type="category")
    return style(fig, f"c_n for all next tokens at step {step}", font, "cnh", "token l", "",
                 height=max(260, 60 + 28 * len(order)))


def z_lines(steps: np.ndarray, Z: np.ndarray, q: int, info: TokenInfo, tokens: np.ndarray, font: int = FONT,
            mf: tuple[np.ndarray, np.ndarray] | None = None, cursor: float | None = None) -> go.Figure:
    """z_{q,l} trajectories of query q, with the mean-field theory dashed."""
    fig = go.Figure()
    _token_lines(fig, steps, Z, tokens, info, "z", mf)
    _cursor(fig, cursor)
    return style(fig, f"z_m trajectories, query q={q} (dashed: mean-field T→∞)", font, "z", "step", "z_{m,l}")


def _phases(fig: go.Figure, overlay: dict[str, Any] | None, xmax: float) -> None:
    if not overlay:
        return
    t1, t0 = overlay["t0_prime"], overlay["t0"]
    fig.add_vrect(x0=1e-3, x1=t1, fillcolor="#1f77b4", opacity=0.08, line_width=0)
    fig.add_vrect(x0=t0, x1=max(xmax, t0) * 10, fillcolor="#ff7f0e", opacity=0.08, line_width=0)
    for x, name in ((t1, "t′₀ (scan ends)"), (t0, "t₀ (snap)")):
        fig.add_vline(x=x, line=dict(color="#555", dash="dot", width=2))
        fig.add_annotation(x=np.log10(x), y=1.0, yref="paper", text=name, showarrow=False, yanchor="bottom",
                           font=dict(size=13))


def entropy_chart(steps: np.ndarray, H: np.ndarray, overlay: dict[str, Any] | None, font: int = FONT,
                  cursor: float | None = None) -> go.Figure:
    """entropy_distinct vs step on a log axis; shaded scanning (t < t′₀) and snapping (t > t₀)."""
    pos = steps > 0
    keep = decimate(int(pos.sum()), MAX_POINTS)
    fig = go.Figure(go.Scatter(x=steps[pos][keep].tolist(), y=rnd(H[pos][keep]).tolist(), mode="lines+markers",
                               name="entropy_distinct", line=dict(color="#2c3e50", width=3), marker=dict(size=5)))
    xmax = float(steps.max()) if len(steps) else 10.0
    _phases(fig, overlay, xmax)
    _cursor(fig, cursor)
    fig.update_xaxes(type="log", range=[-0.3 if not overlay else np.log10(max(min(overlay["t0_prime"], 1) / 2, 1e-2)),
                                        np.log10(max(xmax, 10)) + 0.05])
    return style(fig, "entropy_distinct (nats) · blue: scanning, orange: snapping", font, "H", "step (log)",
                 "entropy_distinct")


def b_chart(steps: np.ndarray, B_hat: np.ndarray, dz: np.ndarray, lo: np.ndarray,
            overlay: dict[str, Any] | None, n: int, font: int = FONT, cursor: float | None = None) -> go.Figure:
    """B_hat vs Thm 4's B_n(t), and dz_dominant inside its Thm 3 bracket [bracket_lo, B_hat]."""
    keep = decimate(len(steps), MAX_POINTS)
    x = steps[keep].tolist()
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=rnd(lo[keep]).tolist(), mode="lines", name="bracket_lo",
                             line=dict(color="#2ca02c", width=1)))
    fig.add_trace(go.Scatter(x=x, y=rnd(B_hat[keep]).tolist(), mode="lines", name="B_hat", fill="tonexty",
                             fillcolor="rgba(44,160,44,0.15)", line=dict(color="#1f77b4", width=3)))
    fig.add_trace(go.Scatter(x=x, y=rnd(dz[keep]).tolist(), mode="lines+markers", name="dz_dominant",
                             line=dict(color="#d62728", width=3), marker=dict(size=5)))
    if overlay:
        fig.add_trace(go.Scatter(x=rnd(overlay["step"]).tolist(), y=rnd(overlay["B_n"]).tolist(), mode="lines",
                                 name="B_n (Thm 4, C₀=1)", line=dict(color="#1f77b4", **THEORY)))
    _cursor(fig, cursor)
    return style(fig, f"B_hat vs theory B_n; dz_dominant in its Thm 3 bracket (n={n})", font, "B", "step", "nats")


def loss_chart(steps: np.ndarray, loss: np.ndarray, acc: np.ndarray, font: int = FONT,
               cursor: float | None = None) -> go.Figure:
    keep = decimate(len(steps), MAX_POINTS)
    fig = make_subplots(specs=[[{"secondary_y": True}]])
    fig.add_trace(go.Scatter(x=steps[keep].tolist(), y=rnd(loss[keep]).tolist(), name="loss",
                             line=dict(color="#8c564b", width=3)), secondary_y=False)
    fig.add_trace(go.Scatter(x=steps[keep].tolist(), y=rnd(acc[keep]).tolist(), name="accuracy",
                             line=dict(color="#17becf", width=3)), secondary_y=True)
    _cursor(fig, cursor)
    fig.update_yaxes(title_text="loss", type="log", secondary_y=False)
    fig.update_yaxes(title_text="accuracy", range=[0, 1.05], secondary_y=True)
    return style(fig, "loss and accuracy (all classes, T→∞ contexts)", font, "loss", "step")


def p_preview(P: np.ndarray, psi: np.ndarray, token_kind: np.ndarray, font: int = FONT) -> go.Figure:
    """P(l|n): rows = next tokens grouped by query, columns = tokens; a strip marks each token's kind."""
    order = np.argsort(psi, kind="stable")
    glob = np.where((token_kind == 2).any(0), 2, np.where((token_kind == 1).any(0), 1, 0))
    fig = make_subplots(rows=2, cols=1, row_heights=[0.1, 0.9], shared_xaxes=True, vertical_spacing=0.03)
    fig.add_trace(go.Heatmap(z=[glob.tolist()], colorscale=[[0, "#ffffff"], [0.5, "#440154"], [1, COMMON_GREY]],
                             zmin=0, zmax=2, showscale=False, y=["kind"],
                             hovertemplate="l=%{x}: %{customdata}<extra></extra>",
                             customdata=[[("—", "distinct", "common")[k] for k in glob]]), row=1, col=1)
    fig.add_trace(go.Heatmap(z=rnd(P[order], 3).tolist(), y=[f"n={n} (q={psi[n]})" for n in order],
                             colorscale="Blues", zmin=0, colorbar=dict(title="P(l|n)", len=0.85, y=0.42),
                             hovertemplate="%{y}, l=%{x}: P=%{z}<extra></extra>"), row=2, col=1)
    fig.update_yaxes(autorange="reversed", type="category", row=2, col=1)
    style(fig, "P(l|n) preview · strip: purple = distinct, grey = common", font, "P", "", "",
          height=max(240, 90 + 24 * len(order)))
    fig.update_xaxes(title_text="token l", row=2, col=1)
    return fig


def payload_bytes(figs: list[go.Figure]) -> int:
    """Bytes of JSON these figures send to the browser (what one live tick costs)."""
    return sum(len(f.to_json()) for f in figs)
