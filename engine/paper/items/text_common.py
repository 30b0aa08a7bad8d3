"""Shared pieces of the real-text reproduce items (fig7, joma-real): training with progress, tidy
frames, the attention-map grid and the entropy curves.

The paper layer does no I/O, so these items take a ``corpus_loader``: a function from
:class:`~engine.core.text.config.TextDataConfig` to :class:`~engine.core.text.data.EncodedCorpus`;
the service passes ``engine.service.corpora.encoded_corpus``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from engine.core.text.config import TextDataConfig, TextRunConfig
from engine.core.text.data import EncodedCorpus
from engine.core.text.trainer import TextSnapshot, TextTrainer
from engine.paper.items.common import collect
from engine.paper.items.result import Progress
from engine.paper.items.text_configs import preset_text_config

__all__ = ["QUARTERS", "CorpusLoader", "preset_text_config", "train_text"]

CorpusLoader = Callable[[TextDataConfig], EncodedCorpus]
QUARTERS = (0.0, 0.25, 0.5, 1.0)  # Fig. 7's columns: iterations 0, ¼, ½ and the end


def need_loader(name: str, loader: CorpusLoader | None) -> CorpusLoader:
    if loader is None:
        raise ValueError(
            f"item {name!r} trains on real text and needs corpus_loader (the paper layer reads no files): "
            "pass engine.service.corpora.encoded_corpus"
        )
    return loader


def train_text(
    cfg: TextRunConfig, loader: CorpusLoader, progress: Progress | None = None
) -> tuple[TextTrainer, list[TextSnapshot]]:
    """Run ``cfg`` fresh on its corpus and keep every scheduled snapshot."""
    tr = TextTrainer(cfg, loader(cfg.data))
    return tr, collect(tr.run(), progress)


def layer_entropy(snaps: Sequence[TextSnapshot]) -> np.ndarray:
    """(steps, layers) attention entropy, mean over heads."""
    return np.stack([s.scalars["attn_entropy"].mean(axis=1) for s in snaps])


def steps_of(snaps: Sequence[TextSnapshot]) -> np.ndarray:
    return np.array([s.step for s in snaps])


def quarter_snapshots(snaps: Sequence[TextSnapshot]) -> list[TextSnapshot]:
    """The snapshots at iterations 0, ¼, ½ and the end (the schedule always holds them)."""
    end = snaps[-1].step
    by_step = {s.step: s for s in snaps}
    return [by_step[round(q * end)] for q in QUARTERS]


def scalars_frame(run: str, snaps: Sequence[TextSnapshot]) -> pd.DataFrame:
    """Tidy rows (run, step, layer, head, metric, value); layer/head −1 where they do not apply,
    head −1 = the mean over heads."""
    rows = [
        (run, s.step, -1 if layer is None else layer, -1 if head is None else head, metric, value)
        for s in snaps
        for layer, head, metric, value in s.scalar_rows()
    ]
    return pd.DataFrame(rows, columns=["run", "step", "layer", "head", "metric", "value"])


def maps_frame(run: str, snaps: Sequence[TextSnapshot], tokens: Sequence[str], layer: int = 0) -> pd.DataFrame:
    """Tidy head-mean attention a_ij of one layer at the given snapshots (run, step, query, key, tokens, a)."""
    T = len(tokens)
    q, k = np.tril_indices(T)
    parts = [
        pd.DataFrame(
            {
                "run": run,
                "step": s.step,
                "layer": layer,
                "query": q,
                "key": k,
                "query_token": [tokens[int(i)] for i in q],
                "key_token": [tokens[int(j)] for j in k],
                "a": s.arrays["attn_map_mean"][layer][q, k],
            }
        )
        for s in snaps
    ]
    return pd.concat(parts, ignore_index=True)


def map_grid(panels: Sequence[tuple[str, Sequence[TextSnapshot]]], tokens: Sequence[str], title: str) -> go.Figure:
    """One row per run, one column per iteration (0, ¼, ½, end): the lowest layer's head-mean
    attention map of the probe window; y = query token, x = key token (Fig. 7's layout)."""
    cols = len(QUARTERS)
    titles = [f"{label}: iteration {s.step}" for label, snaps in panels for s in quarter_snapshots(snaps)]
    fig = make_subplots(rows=len(panels), cols=cols, subplot_titles=titles, horizontal_spacing=0.04)
    pos = list(range(len(tokens)))
    for r, (_, snaps) in enumerate(panels, start=1):
        for c, s in enumerate(quarter_snapshots(snaps), start=1):
            fig.add_trace(
                go.Heatmap(
                    z=s.arrays["attn_map_mean"][0],
                    x=pos,
                    y=pos,
                    coloraxis="coloraxis",
                    customdata=[[f"{tokens[i]} → {tokens[j]}" for j in pos] for i in pos],
                    hovertemplate="%{customdata}<br>a = %{z:.3f}<extra></extra>",
                ),
                row=r,
                col=c,
            )
            fig.update_yaxes(autorange="reversed", tickvals=pos, ticktext=list(tokens), tickfont_size=7, row=r, col=c)
            fig.update_xaxes(tickvals=pos, ticktext=list(tokens), tickfont_size=7, tickangle=-90, row=r, col=c)
    fig.update_layout(
        title=title, coloraxis={"colorscale": "Viridis", "colorbar": {"title": "a"}}, height=420 * len(panels) + 80
    )
    return fig


def entropy_figure(runs: Sequence[tuple[str, Sequence[TextSnapshot]]], uniform: float, title: str) -> go.Figure:
    """Attention entropy of every layer vs step, one line per (run, layer); dashed: uniform attention."""
    fig = go.Figure()
    for label, snaps in runs:
        H = layer_entropy(snaps)
        for layer in range(H.shape[1]):
            fig.add_trace(go.Scatter(x=steps_of(snaps), y=H[:, layer], mode="lines+markers", name=f"{label}, L{layer}"))
    fig.add_hline(y=uniform, line_dash="dash", annotation_text=f"uniform causal attention ({uniform:.2f})")
    fig.update_layout(title=title, xaxis_title="step (minibatch)", yaxis_title="attention entropy (nats)", height=420)
    return fig
