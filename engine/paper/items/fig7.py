"""Fig. 7 (real text, original parameterisation): the lowest layer's attention becomes sparse.

Presets ``text-fig7-1layer`` and ``text-fig7-3layer`` (science §5: emsize 200, d_hid 200, 1 head,
dropout 0.3, sinusoidal PE, post-LN, SGD lr 5 / lr 10 on the MLP, StepLR γ = 0.95 per epoch, clip
0.5, batch 20 × bptt 35, 1,500 steps), on the corpus the service loads (the built-in corpus unless
configured otherwise; the paper used WikiText-2).  Verdict per model: the lowest layer's attention
entropy H = mean_{b,i} −Σ_{j≤i} a_ij ln a_ij on the probe set falls by at least MIN_DROP nats from
iteration 0 to the end.  Maps: the probe window's lowest-layer attention at iterations 0, ¼, ½, end.

``quick=True`` (CPU smoke size): vocabulary capped at 2,000 words, batch 10, 100 steps (1 layer)
and 200 steps (3 layers: its lowest layer starts to move only after ~100 steps); the configs are
in :mod:`engine.paper.items.text_configs`.
"""

from __future__ import annotations

import pandas as pd

from engine.core.text.trainer import TextSnapshot, TextTrainer
from engine.paper import verdicts as vd
from engine.paper.items.catalog import ITEMS
from engine.paper.items.result import ItemResult, Progress
from engine.paper.items.text_common import (
    CorpusLoader,
    entropy_figure,
    layer_entropy,
    map_grid,
    maps_frame,
    need_loader,
    quarter_snapshots,
    scalars_frame,
    train_text,
)
from engine.paper.items.text_configs import FIG7_RUNS as RUNS
from engine.paper.items.text_configs import fig7_config as config
from engine.paper.items.text_configs import fig7_work as work

NAME = "fig7"
TITLE = ITEMS[NAME].title
MIN_DROP = 0.5  # nats: ≈ 19 % of the uniform level ln(35!)/35 ≈ 2.63
__all__ = ["NAME", "RUNS", "TITLE", "config", "run", "work"]


def drop_verdict(label: str, tr: TextTrainer, snaps: list[TextSnapshot]) -> vd.Verdict:
    H = layer_entropy(snaps)[:, 0]
    q = [s.step for s in quarter_snapshots(snaps)]
    at = {s.step: h for s, h in zip(snaps, H, strict=True)}
    share = [float(s.scalars["attn_share_frequent"][0].mean()) for s in (snaps[0], snaps[-1])]
    st = tr.statics()
    return vd.judge(
        NAME,
        f"{label}: the lowest layer's attention entropy ends ≥ {MIN_DROP:g} nats below its start",
        "H_L0(0) − H_L0(end) (nats)",
        float(H[0] - H[-1]),
        ">=",
        MIN_DROP,
        f"H at iterations {q}: {', '.join(f'{at[k]:.3f}' for k in q)}; uniform causal attention "
        f"{float(st['uniform_entropy']):.3f}; share on the {len(st['frequent_ids'])} most frequent tokens "
        f"{share[0]:.3f} → {share[1]:.3f} (uniform {float(st['uniform_share_frequent']):.3f})",
    )


def run(quick: bool = False, progress: Progress | None = None, corpus_loader: CorpusLoader | None = None) -> ItemResult:
    loader = need_loader(NAME, corpus_loader)
    results = []
    for label, preset, quick_steps in RUNS:
        cfg = config(preset, quick, quick_steps)
        tr, snaps = train_text(cfg, loader, progress)
        results.append((label, cfg, tr, snaps))
    tr0 = results[0][2]
    tokens = tr0.corpus.vocab.decode(tr0.statics()["probe_window"])
    uniform = float(tr0.statics()["uniform_entropy"])
    verdicts = [drop_verdict(label, tr, snaps) for label, _, tr, snaps in results]
    panels = [(label, snaps) for label, _, _, snaps in results]
    figures = [
        ("Fig. 7 (rows: 1 and 3 layers; columns: iterations 0, ¼, ½, end)", map_grid(panels, tokens, TITLE)),
        ("Attention entropy per layer", entropy_figure(panels, uniform, "Attention entropy on the probe set")),
    ]
    data = {
        "scalars": pd.concat([scalars_frame(label, snaps) for label, snaps in panels], ignore_index=True),
        "maps": pd.concat(
            [maps_frame(label, quarter_snapshots(snaps), tokens) for label, snaps in panels], ignore_index=True
        ),
    }
    corpus = tr0.corpus
    notes = [
        f"Corpus: {corpus.name} — {corpus.description}; {len(corpus.train_ids):,} training and "
        f"{len(corpus.val_ids):,} validation tokens, vocabulary {len(corpus.vocab):,}. The paper's run used "
        "WikiText-2, so the shape of the result is compared, not its numbers.",
        f"Probe: validation window {int(tr0.statics()['probe_window_index'])} (the notebook's offset 100·bptt, "
        "clipped to the text), its first sequence shown; the entropy is the mean over the probe batch.",
    ]
    configs = {label: cfg.to_dict() for label, cfg, _, _ in results}
    return ItemResult(NAME, TITLE, verdicts, data, figures, configs, notes)
