"""Fig. 4 (Syn-Small, SGD): c_n heat maps for η_Y = η_Z = 1 and η_Y = 10, η_Z = 1.

Settings are the presets ``syn-small`` and ``syn-small-fast-decoder`` (K = 2 classes with their
own query, 10 common + 10 distinct tokens each, T = 128, zero init, SGD momentum 0.9, batch 128,
100 steps, seed 2), trained as two replicas of one Trainer.  c_{l|n} = P(l|n)e^{z_{ψ(n),l}} /
Σ_{l'} P(l'|n)e^{z_{ψ(n),l'}} (science §3).
"""

from __future__ import annotations

import numpy as np

from scansnap.kinds.synthetic.paper.items import ITEMS
from scansnap.kinds.synthetic.paper.items.common import c_frame, c_heatmaps, scalar_series, scalars_frame, train
from scansnap.kinds.synthetic.paper.items.configs import FIG4_PAIRS, fig4_config
from scansnap.paper import verdicts as vd
from scansnap.paper.items.result import ItemResult, Progress

NAME = "fig4"
TITLE = ITEMS[NAME].title
PAIRS = FIG4_PAIRS


def run(quick: bool = False, progress: Progress | None = None) -> ItemResult:
    cfg = fig4_config()
    tr, snaps = train(cfg, progress)
    pb = tr.problem
    steps = np.array([s.step for s in snaps])
    share = scalar_series(snaps, "common_mass")  # (steps, R, K)
    H = snaps[-1].scalars["entropy_distinct"]  # (R, K)
    loss = scalar_series(snaps, "loss")  # (steps, R)
    verdicts = [
        vd.share_falls(NAME, "the common tokens' share of c_n falls (both panels, every class)", share),
        vd.argmax_is_top_prob(NAME, snaps[-1].arrays["c"], pb.P, pb.distinct_mask),
        vd.higher(
            NAME,
            "the final distinct-token entropy H(c_n) is higher (denser) with η_Y = 10 than with η_Y = 1",
            "min over n of H_n(η_Y=10) − H_n(η_Y=1) (nats)",
            H[1],
            H[0],
            margin=0.05,
        ),
        vd.converges_faster(NAME, steps, loss[:, 1], loss[:, 0]),
    ]
    labels = ["η_Y = η_Z = 1", "η_Y = 10, η_Z = 1"]
    fig = c_heatmaps(
        [(lab, snaps, r) for r, lab in enumerate(labels)],
        classes=range(pb.K),
        tokens=pb.M_ctx,
        title="Fig. 4: c_n (rows: iteration; tokens 0–9 common, 10–19 distinct (seq1), 20–29 distinct (seq2))",
        token_axis="Common token | Distinct (seq1) | Distinct (seq2)",
    )
    data = {
        "c": c_frame(tr, snaps),
        "scalars": scalars_frame(tr, snaps, ["loss", "common_mass", "entropy_distinct", "B_hat"]),
    }
    return ItemResult(
        NAME,
        TITLE,
        verdicts,
        data,
        [("Fig. 4 (paper layout: left η_Y = 1, right η_Y = 10)", fig)],
        {"syn-small + syn-small-fast-decoder (2 replicas)": cfg.to_dict()},
        [
            "'Final' is step 100 (the end of the released 100-step command); the paper's plotting "
            "script labels step 48 'Final'.  Both replicas are one Trainer: a replica's data and "
            "init depend only on its seed, so this equals the two presets run separately."
        ],
    )
