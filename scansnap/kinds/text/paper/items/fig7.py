"""Fig. 7 (real text, original parameterisation): the lowest layer's attention becomes sparse.

Presets ``text-fig7-1layer`` and ``text-fig7-3layer`` (science §5 and §7b: emsize 200, d_hid 200,
1 head, dropout 0.3, sinusoidal PE, post-LN, SGD lr 5 / lr 10 on layer 0's MLP, layers copied from
one, clip 0.5, batch 20 × bptt 35, 1,500 steps, the probe on a training window as the notebook), on
the corpus the service loads (the built-in corpus unless configured otherwise; the paper used
WikiText-2), at the authors' seeds 1–3.  Verdict per model, on the mean over seeds: the lowest
layer's attention entropy H = mean_{b,i} −Σ_{j≤i} a_ij ln a_ij on the probe set, smoothed
(:mod:`scansnap.kinds.text.paper.text_view`), ends at least MIN_DROP nats below iteration 0; each seed's value
(mean ± SD) is in the reason.  Maps: seed 1's probe window, lowest layer, at iterations 0, ¼, ½, end.

``quick=True`` (CPU smoke size): seed 1, vocabulary capped at 2,000 words, batch 10, 100 steps (1 layer)
and 200 steps (3 layers: its lowest layer starts to move only after ~100 steps); the configs are
in :mod:`scansnap.kinds.text.paper.items.configs`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from scansnap.kinds.text.paper.items import ITEMS
from scansnap.kinds.text.paper.items.common import (
    CorpusLoader,
    TrainedText,
    entropy_figure,
    layer_scalars_frame,
    map_grid,
    maps_frame,
    need_loader,
    quarter_snapshots,
    seed_entropy,
    train_texts,
)
from scansnap.kinds.text.paper.items.configs import FIG7_RUNS as RUNS
from scansnap.kinds.text.paper.items.configs import fig7_config as config
from scansnap.kinds.text.paper.items.configs import fig7_work as work
from scansnap.kinds.text.paper.items.configs import text_seeds
from scansnap.kinds.text.paper.text_view import SMOOTH, across_seeds
from scansnap.kinds.text.science.trainer import TextSnapshot
from scansnap.paper import verdicts as vd
from scansnap.paper.items.common import ItemMap
from scansnap.paper.items.result import ItemResult, Progress

NAME = "fig7"
TITLE = ITEMS[NAME].title
MIN_DROP = 0.5  # nats: ≈ 19 % of the uniform level ln(35!)/35 ≈ 2.63
__all__ = ["NAME", "RUNS", "TITLE", "config", "run", "work"]


def drop_verdict(label: str, st: dict[str, Any], seeds: list[list[TextSnapshot]]) -> vd.Verdict:
    """The lowest layer's smoothed entropy, start − end, on the mean over ``seeds`` (runs of one model
    whose statics are ``st``)."""
    steps, H = seed_entropy(seeds)
    spread = across_seeds(steps, H[:, :, 0])
    m = spread.mean
    fall = [d.start - d.end for d in spread.seeds]
    per_seed = ""
    if len(fall) > 1:
        per_seed = f"; per seed {np.mean(fall):.3f} ± {np.std(fall, ddof=1):.3f} (mean ± SD of {len(fall)})"
    q = [s.step for s in quarter_snapshots(seeds[0])]
    at = dict(zip(steps.tolist(), H[:, :, 0].mean(axis=0), strict=True))
    share = [float(np.mean([s[k].scalars["attn_share_frequent"][0].mean() for s in seeds])) for k in (0, -1)]
    return vd.judge(
        NAME,
        f"{label}: the lowest layer's attention entropy ends ≥ {MIN_DROP:g} nats below its start",
        "H_L0(0) − H_L0(end) (nats)",
        m.start - m.end,
        ">=",
        MIN_DROP,
        f"H (mean of {len(seeds)} seed{'s' if len(seeds) > 1 else ''}) at iterations {q}: "
        f"{', '.join(f'{at[k]:.3f}' for k in q)}; smoothed over {SMOOTH} snapshots {m.start:.3f} → {m.end:.3f}"
        f"{per_seed}; uniform causal attention {float(st['uniform_entropy']):.3f}; share on the "
        f"{len(st['frequent_ids'])} most frequent tokens {share[0]:.3f} → {share[1]:.3f} (uniform "
        f"{float(st['uniform_share_frequent']):.3f})",
    )


def corpus_notes(first: TrainedText, stream: str, trained: tuple[int, ...]) -> list[str]:
    """What the report says of the corpus, the probe window and the seeds."""
    corpus = first.corpus
    return [
        f"Corpus: {corpus.name} — {corpus.description}; {corpus.train_tokens:,} training and "
        f"{corpus.val_tokens:,} validation tokens, vocabulary {corpus.vocabulary:,}. The paper's run used "
        "WikiText-2, so the shape of the result is compared, not its numbers.",
        f"Probe: {'training' if stream == 'train' else 'validation'} window {int(first.statics['probe_window_index'])} "
        "(the notebook's offset 100·bptt, clipped to the text), its first stream shown; the entropy is the mean over "
        f"the probe batch. Seeds: {', '.join(map(str, trained))}.",
    ]


def run(
    quick: bool = False,
    progress: Progress | None = None,
    corpus_loader: CorpusLoader | None = None,
    seeds: int | None = None,
    pmap: ItemMap = map,
) -> ItemResult:
    """``seeds``: train seeds 1..seeds (default: the authors' three; one in quick mode); ``pmap``: how
    the (model, seed) runs are trained (in turn here, or each a cluster task)."""
    loader = need_loader(NAME, corpus_loader)
    trained = text_seeds(quick, seeds)
    cfgs = [config(preset, quick, quick_steps, s) for _, preset, quick_steps in RUNS for s in trained]
    runs = train_texts(cfgs, loader, progress, pmap)
    per_model = [runs[i : i + len(trained)] for i in range(0, len(runs), len(trained))]  # in RUNS' order
    results = [
        (label, config(preset, quick, quick_steps), [r.snaps for r in model_runs])
        for (label, preset, quick_steps), model_runs in zip(RUNS, per_model, strict=True)
    ]
    first = runs[0]
    tokens, uniform = first.probe_tokens, float(first.statics["uniform_entropy"])
    verdicts = [
        drop_verdict(label, model_runs[0].statics, seeds)
        for (label, _, seeds), model_runs in zip(results, per_model, strict=True)
    ]
    panels = [(label, seeds[0]) for label, _, seeds in results]
    figures = [
        ("Fig. 7 (rows: 1 and 3 layers; columns: iterations 0, ¼, ½, end; seed 1)", map_grid(panels, tokens, TITLE)),
        (
            "Attention entropy per layer",
            entropy_figure(
                [(label, seeds) for label, _, seeds in results], uniform, "Attention entropy on the probe set"
            ),
        ),
    ]
    scalars = [
        layer_scalars_frame(label, snaps).assign(seed=seed)
        for label, _, seed_runs in results
        for seed, snaps in zip(trained, seed_runs, strict=True)
    ]
    data = {
        "scalars": pd.concat(scalars, ignore_index=True),
        "maps": pd.concat(
            [maps_frame(label, quarter_snapshots(snaps), tokens) for label, snaps in panels], ignore_index=True
        ),
    }
    notes = corpus_notes(first, results[0][1].probe.stream, trained)
    configs = {label: cfg.to_dict() for label, cfg, _ in results}
    return ItemResult(NAME, TITLE, verdicts, data, figures, configs, notes)
