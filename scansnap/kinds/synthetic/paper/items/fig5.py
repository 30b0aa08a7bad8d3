"""Fig. 5 (Syn-Small, Adam): c_n for n = 1 (tokens 0–19) with η_Y = η_Z ∈ {0.1, 0.5, 1}.

Settings are the presets ``syn-small-adam-{0.1,0.5,1}`` (Syn-Small, zero init, Adam, wd 0, batch
128, 100 steps, seed 2), trained as three replicas of one Trainer.  No theory covers Adam; the
paper's reading is qualitative: common tokens are still suppressed, and the subset of distinct
tokens that wins depends on the learning rate ("tunable inductive bias").
"""

from __future__ import annotations

from scansnap.kinds.synthetic.paper.items import ITEMS
from scansnap.kinds.synthetic.paper.items.common import c_frame, c_heatmaps, scalar_series, scalars_frame, train
from scansnap.kinds.synthetic.paper.items.configs import FIG5_ETAS, fig5_config
from scansnap.paper import verdicts as vd
from scansnap.paper.items.result import ItemResult, Progress

NAME = "fig5"
TITLE = ITEMS[NAME].title
ETAS = FIG5_ETAS


def run(quick: bool = False, progress: Progress | None = None) -> ItemResult:
    cfg = fig5_config()
    tr, snaps = train(cfg, progress)
    pb = tr.problem
    share = scalar_series(snaps, "common_mass")  # (steps, R, K)
    c_final = snaps[-1].arrays["c"]  # (R, K, M)
    d0 = pb.distinct_mask[0]
    labels = [f"η = {e:g}" for e in ETAS]
    verdicts = [
        vd.share_falls(NAME, "common tokens are suppressed at every η (Adam)", share),
        vd.top_sets_differ(NAME, c_final[:, 0, d0], labels, k=1),
        vd.argmax_not_always_top(NAME, c_final[:, 0, d0], pb.P[0, d0], labels),
    ]
    fig = c_heatmaps(
        [(lab, snaps, r) for r, lab in enumerate(labels)],
        classes=[0],
        tokens=20,
        title="Fig. 5: Adam, c_n for n = 1 (tokens 0–9 common, 10–19 distinct (seq1))",
        token_axis="Common token | Distinct token (seq1)",
    )
    data = {"c": c_frame(tr, snaps), "scalars": scalars_frame(tr, snaps, ["loss", "common_mass", "entropy_distinct"])}
    return ItemResult(
        NAME,
        TITLE,
        verdicts,
        data,
        [("Fig. 5 (paper layout: one panel per η)", fig)],
        {"syn-small-adam-{0.1,0.5,1} (3 replicas)": cfg.to_dict()},
        [
            "Statistics: the distinct token with the largest c_1 at the final step, compared across η "
            "(≥ 2 different winners passes), and whether some η's winner is not the largest-P token."
        ],
    )
