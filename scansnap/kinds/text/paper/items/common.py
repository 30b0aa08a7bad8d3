"""Shared pieces of the real-text reproduce items (fig7, joma-real): training on a corpus, tidy frames, the
attention-map grid and the entropy curves.

The claims layer does no I/O, so these items take a ``corpus_loader``: a function from
:class:`~scansnap.kinds.text.science.config.TextDataConfig` to :class:`~scansnap.kinds.text.science.data.EncodedCorpus`;
the service passes the text kind's corpus reader."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.kinds.text.science.config import TextDataConfig, TextRunConfig
from scansnap.kinds.text.science.data import EncodedCorpus
from scansnap.kinds.text.science.trainer import TextSnapshot, TextTrainer
from scansnap.paper.items.common import ItemMap, collect
from scansnap.paper.items.result import Progress

CorpusLoader = Callable[[TextDataConfig], EncodedCorpus]
QUARTERS = (0.0, 0.25, 0.5, 1.0)  # Fig. 7's columns: iterations 0, ¼, ½ and the end


def need_loader(name: str, loader: CorpusLoader | None) -> CorpusLoader:
    if loader is None:
        raise ValueError(
            f"item {name!r} trains on real text and needs corpus_loader (the paper layer reads no files): "
            "pass scansnap.kinds.text.service.corpora.encoded_corpus"
        )
    return loader


@dataclass(frozen=True)
class CorpusFacts:
    """What an item's notes say of the corpus a run trained on."""

    name: str
    description: str
    train_tokens: int
    val_tokens: int
    vocabulary: int


@dataclass(frozen=True)
class TrainedText:
    """One real-text run as an item reads it: the trainer's statics, the probe window's words, the
    corpus's facts and every snapshot; all that a cluster task sends back (the trainer stays)."""

    statics: dict[str, Any]
    probe_tokens: list[str]
    corpus: CorpusFacts
    snaps: list[TextSnapshot]


def train_text(cfg: TextRunConfig, loader: CorpusLoader, progress: Progress | None = None) -> TrainedText:
    """Run ``cfg`` fresh on its corpus and keep every scheduled snapshot."""
    tr = TextTrainer(cfg, loader(cfg.data))
    snaps = collect(tr, progress)
    st, c = tr.statics(), tr.corpus
    facts = CorpusFacts(c.name, c.description, len(c.train_ids), len(c.val_ids), len(c.vocab))
    return TrainedText(st, c.vocab.decode(st["probe_window"]), facts, snaps)


def train_texts(
    cfgs: Sequence[TextRunConfig], loader: CorpusLoader, progress: Progress | None, pmap: ItemMap = map
) -> list[TrainedText]:
    """Each config trained fresh, in order (``pmap``: one after the other here, or each a cluster
    task: a seed's run depends on its config only, so the results are the same either way)."""
    return list(pmap(partial(train_text, loader=loader, progress=progress), cfgs))


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


def layer_scalars_frame(run: str, snaps: Sequence[TextSnapshot]) -> pd.DataFrame:
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


def seed_entropy(seeds: Sequence[Sequence[TextSnapshot]]) -> tuple[np.ndarray, np.ndarray]:
    """(steps, H) of runs that differ only in their seed: H is (seeds, steps, layers)."""
    steps = steps_of(seeds[0])
    assert all(np.array_equal(steps_of(s), steps) for s in seeds), "seeds on different schedules"
    return steps, np.stack([layer_entropy(s) for s in seeds])


SeedRuns = Sequence[Sequence[TextSnapshot]]  # one model's runs, one per seed, on the same schedule


def entropy_figure(runs: Sequence[tuple[str, SeedRuns]], uniform: float, title: str) -> go.Figure:
    """Attention entropy of every layer vs step, one line per (run, layer): the mean over the run's
    seeds, shaded ± 1 SD across them where there are several (as JoMA plots); dashed: uniform attention."""
    fig = go.Figure()
    for label, seeds in runs:
        steps, H = seed_entropy(seeds)
        mean, n = H.mean(axis=0), H.shape[0]
        for layer in range(H.shape[2]):
            name = f"{label}, L{layer}" + (f" (mean of {n} seeds ± SD)" if n > 1 else "")
            fig.add_trace(go.Scatter(x=steps, y=mean[:, layer], mode="lines+markers", name=name))
            if n > 1:
                sd = H[:, :, layer].std(axis=0, ddof=1)
                band = np.concatenate([mean[:, layer] + sd, (mean[:, layer] - sd)[::-1]])
                x = np.concatenate([steps, steps[::-1]])
                fig.add_trace(
                    go.Scatter(x=x, y=band, fill="toself", line=dict(width=0), opacity=0.25, showlegend=False)
                )
    fig.add_hline(y=uniform, line_dash="dash", annotation_text=f"uniform causal attention ({uniform:.2f})")
    fig.update_layout(title=title, xaxis_title="step (minibatch)", yaxis_title="attention entropy (nats)", height=420)
    return fig
