"""Shared pieces of the synthetic reproduce items: training with progress, tidy frames, the view the claims
judge, and the c_n heat-map figure used by Figs. 4 and 5."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from scansnap.core.metrics import html_subscripts
from scansnap.kinds.synthetic.paper.claims import Observed
from scansnap.kinds.synthetic.paper.run_theory import replica_curves, replica_t0, unmet_conditions
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.train import Snapshot, Trainer
from scansnap.paper.items.common import collect
from scansnap.paper.items.result import Progress

HEATMAP_STEPS = (0, 2, 4, 6, 8, 10)  # Fig. 4/5 rows, then "Final"
KIND_NAMES = {0: "none", 1: "distinct", 2: "common"}


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
