"""Shared pieces of the reproduce items: training with progress, tidy frames and the c_n heat-map
figure used by Figs. 4 and 5; for the real-text items (fig7, joma-real) training on a corpus, tidy
frames, the attention-map grid and the entropy curves.

The paper layer does no I/O, so the real-text items take a ``corpus_loader``: a function from
:class:`~scansnap.kinds.text.science.config.TextDataConfig` to :class:`~scansnap.kinds.text.science.data.EncodedCorpus`;
the service passes ``scansnap.service.corpora.encoded_corpus``."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol, TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.core.metrics import html_subscripts
from scansnap.kinds.synthetic.paper.claims import Observed
from scansnap.kinds.synthetic.paper.run_theory import replica_curves, replica_t0, unmet_conditions
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Snapshot, Trainer
from scansnap.kinds.text.science.config import TextDataConfig, TextRunConfig
from scansnap.kinds.text.science.data import EncodedCorpus
from scansnap.kinds.text.science.trainer import TextSnapshot, TextTrainer
from scansnap.paper.items.result import Progress

HEATMAP_STEPS = (0, 2, 4, 6, 8, 10)  # Fig. 4/5 rows, then "Final"
KIND_NAMES = {0: "none", 1: "distinct", 2: "common"}
S = TypeVar("S")  # a kind's snapshot
S_co = TypeVar("S_co", covariant=True)
PROGRESS_EVERY_S = 0.25  # with a progress callback, it is told about this often (a step allowing)


class Stepping(Protocol[S_co]):
    """What both kinds' trainers have: a snapshot schedule, a step count, ``advance(n)`` and ``snapshot()``."""

    schedule: Any
    step_count: int

    def advance(self, n: int) -> None: ...

    def snapshot(self) -> S_co: ...


def collect(trainer: Stepping[S], progress: Progress | None = None) -> list[S]:
    """Every scheduled snapshot of a fresh ``trainer`` (``trainer.run()``'s).  With ``progress``, it is told the
    steps taken in chunks sized from the last chunk's time to take about :data:`PROGRESS_EVERY_S`, not only at
    the snapshots: a stop raised by ``progress`` ends a reproduction within a chunk, where Fig. 6's panels
    snapshot only at their first and last step."""
    snaps: list[S] = []
    chunk = 1
    for target in trainer.schedule:
        while (left := int(target) - trainer.step_count) > 0:
            n = left if progress is None else min(chunk, left)
            t0 = time.perf_counter()
            trainer.advance(n)
            if progress is not None:
                dt = time.perf_counter() - t0
                progress(n)
                chunk = max(1, min(10_000, int(n * PROGRESS_EVERY_S / dt))) if dt > 0 else 2 * n
        snaps.append(trainer.snapshot())
    return snaps


def train(cfg: RunConfig, progress: Progress | None = None) -> tuple[Trainer, list[Snapshot]]:
    """Run ``cfg`` fresh (all replicas in one Trainer) and keep every scheduled snapshot."""
    tr = Trainer(cfg)
    return tr, collect(tr, progress)


def observed_from_snapshots(snaps: Sequence[Snapshot], tr: Trainer, replica: int = 0) -> Observed:
    """The view of one replica that :mod:`scansnap.kinds.synthetic.paper.claims` judges, its theorems' conditions
    checked (the Lab builds the same from the run store, :func:`scansnap.kinds.synthetic.paper.observe.observed`)."""
    last, problem = snaps[-1].scalars, tr.problem
    full = all("z" in s.arrays for s in snaps)
    z0 = tr.Z0[replica].double().cpu().numpy()
    steps = np.array([s.step for s in snaps], dtype=np.int64)
    unmet = unmet_conditions(tr.cfg, problem, z0, replica)
    failed = {name: tuple(c.detail for c in cs) for name, cs in unmet.items()}
    curves = None if failed["theorem4"] else replica_curves(tr.cfg, problem, z0, replica, steps)
    return Observed(
        steps=steps,
        z=np.stack([s.arrays["z"][replica] for s in snaps]) if full else None,
        entropy=np.array([np.nanmean(s.scalars["entropy_distinct"][replica]) for s in snaps]),
        P=problem.P,
        token_kind=problem.token_kind,
        rows=np.asarray(problem.psi, dtype=np.int64),  # row q of Zq is query index q = ψ(n)
        shares={k: float(np.nanmean(last[k][replica])) for k in ("share_common_down", "share_distinct_up")},
        dz_common=np.array([np.nanmean(s.scalars["dz_common"][replica]) for s in snaps]),
        failed=failed,
        failed_plain={name: tuple(c.plain for c in cs) for name, cs in unmet.items()},
        method=tr.cfg.optim.method,
        dz_theory=None if curves is None else curves.dz_common_theory,
        t0=math.nan if curves is None else replica_t0(tr.cfg, problem, replica),
    )


def scalar_series(snaps: Sequence[Snapshot], metric: str) -> np.ndarray:
    """(steps, R, K) or (steps, R) stack of one metric over the snapshots."""
    return np.stack([s.scalars[metric] for s in snaps])


def scalars_frame(tr: Trainer, snaps: Sequence[Snapshot], metrics: Sequence[str]) -> pd.DataFrame:
    """Tidy rows (eta_y, eta_z, seed, step, n, metric, value); n = -1 for per-replica metrics."""
    rows = []
    for s in snaps:
        for m in metrics:
            v = s.scalars[m]
            v2 = v if v.ndim == 2 else v[:, None]
            for r in range(v2.shape[0]):
                ey, ez = tr.replica_lr[r]
                for n in range(v2.shape[1]):
                    rows.append((ey, ez, tr.replica_seed[r], s.step, n if v.ndim == 2 else -1, m, float(v2[r, n])))
    return pd.DataFrame(rows, columns=["eta_y", "eta_z", "seed", "step", "n", "metric", "value"])


def c_frame(tr: Trainer, snaps: Sequence[Snapshot], steps: Sequence[int] | None = None) -> pd.DataFrame:
    """Tidy c_{l|n} (eta_y, eta_z, seed, step, n, token, kind, P, c) at the given steps (all if None)."""
    pb = tr.problem
    kind = pb.token_kind
    K, M = pb.P.shape
    parts = []
    for s in snaps:
        if steps is not None and s.step not in steps:
            continue
        c = s.arrays["c"]  # (R, K, M_ctx)
        for r in range(c.shape[0]):
            ey, ez = tr.replica_lr[r]
            parts.append(
                pd.DataFrame(
                    {
                        "eta_y": ey,
                        "eta_z": ez,
                        "seed": tr.replica_seed[r],
                        "step": s.step,
                        "n": np.repeat(np.arange(K), M),
                        "token": np.tile(np.arange(M), K),
                        "kind": [KIND_NAMES[int(k)] for k in kind.ravel()],
                        "P": pb.P.ravel(),
                        "c": c[r].ravel(),
                    }
                )
            )
    return pd.concat(parts, ignore_index=True)


def heatmap_rows(snaps: Sequence[Snapshot]) -> tuple[list[Snapshot], list[str]]:
    """The snapshots of the paper's rows: iterations 0, 2, 4, 6, 8, 10 and the final one."""
    by_step = {s.step: s for s in snaps}
    rows = [by_step[k] for k in HEATMAP_STEPS if k in by_step] + [snaps[-1]]
    return rows, [f"Iter {s.step}" for s in rows[:-1]] + [f"Final ({snaps[-1].step})"]


def c_heatmaps(
    panels: Sequence[tuple[str, list[Snapshot], int]], classes: Sequence[int], tokens: int, title: str, token_axis: str
) -> go.Figure:
    """Grid of c_n heat maps: one column per panel (label, snapshots, replica), one row per class
    n; y = iteration, x = token id 0..tokens−1 (the paper's Figs. 4 and 5)."""
    fig = make_subplots(
        rows=len(classes),
        cols=len(panels),
        shared_xaxes=True,
        vertical_spacing=0.08,
        horizontal_spacing=0.09,
        subplot_titles=[html_subscripts(f"{lab}, n = {n + 1}") for n in classes for lab, _, _ in panels],
    )
    for j, (_, snaps, r) in enumerate(panels):
        rows, labels = heatmap_rows(snaps)
        for i, n in enumerate(classes):
            z = np.stack([s.arrays["c"][r, n, :tokens] for s in rows])
            fig.add_trace(
                go.Heatmap(
                    z=z,
                    x=list(range(tokens)),
                    y=labels,
                    coloraxis="coloraxis",
                    hovertemplate="token %{x}<br>%{y}<br>c = %{z:.4f}<extra></extra>",
                ),
                row=i + 1,
                col=j + 1,
            )
            fig.update_yaxes(autorange="reversed", row=i + 1, col=j + 1)
    fig.update_xaxes(title_text=token_axis, row=len(classes))
    fig.update_layout(
        title=html_subscripts(title),
        coloraxis={"colorscale": "Viridis", "colorbar": {"title": "c(l|n)"}},
        height=260 * len(classes) + 120,
    )
    return fig


# ----------------------------------------------------------------- the real-text items
CorpusLoader = Callable[[TextDataConfig], EncodedCorpus]
ItemMap = Callable[[Callable[[Any], Any], Iterable[Any]], Iterator[Any]]  # ``map``, or a cluster's task map
QUARTERS = (0.0, 0.25, 0.5, 1.0)  # Fig. 7's columns: iterations 0, ¼, ½ and the end


def need_loader(name: str, loader: CorpusLoader | None) -> CorpusLoader:
    if loader is None:
        raise ValueError(
            f"item {name!r} trains on real text and needs corpus_loader (the paper layer reads no files): "
            "pass scansnap.service.corpora.encoded_corpus"
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
