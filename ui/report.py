"""Self-contained exports of a stored run: zipped tables and an offline HTML report."""

from __future__ import annotations

import html
import io
import json
import tempfile
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

from engine.core.config import RunConfig
from engine.paper.views import RunHistory, query_row, theory_overlay, token_info, verdicts
from engine.service.export import export_run
from ui import charts


def zipped_export(store: Any, run_id: str, fmt: str) -> bytes:
    """config.json + trajectory.<fmt> + scalars.<fmt> in one zip (built on demand)."""
    buf = io.BytesIO()
    with tempfile.TemporaryDirectory() as tmp, zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in export_run(store, run_id, tmp, fmt):
            zf.write(path, arcname=f"{run_id}/{Path(path).name}")
    return buf.getvalue()


def run_figures(store: Any, run_id: str, n: int = 0, replica: int = 0) -> tuple[list[Any], list, dict]:
    info = store.get_run(run_id)
    cfg = RunConfig.from_json(info["config_json"])
    hist = RunHistory(run_id)
    hist.update(store)
    st_ = store.statics(run_id)
    P, kind = st_["P"], st_["token_kind"]
    tinfo, steps = token_info(P, kind), np.asarray(hist.steps)
    overlay = theory_overlay(cfg, cfg.optim.steps, replica)
    figs = []
    if hist.c and not hist.topk:
        q = query_row(st_, n)
        qs = np.array([query_row(st_, k) for k in range(P.shape[0])])
        figs += [
            charts.cn_lines(steps, hist.c_of(replica, n), n, tinfo, np.flatnonzero(kind[n] != 0), hist.last_step),
            charts.cn_heatmap(hist.c[-1][replica], qs, hist.last_step),
            charts.z_lines(steps, hist.z_of(replica, q), q, tinfo, np.flatnonzero((kind[qs == q] != 0).any(0))),
        ]
    hs, H = hist.metric("entropy_distinct", replica)
    figs.append(charts.entropy_chart(hs, H, overlay))
    bs, B = hist.metric("B_hat", replica)
    figs.append(
        charts.b_chart(
            bs, B, hist.metric("dz_dominant", replica)[1], hist.metric("bracket_lo", replica)[1], overlay, "mean"
        )
    )
    ls, loss = hist.metric("loss", replica)
    figs.append(charts.loss_chart(ls, loss, hist.metric("accuracy", replica)[1]))
    return figs, verdicts(hist, st_, replica), info


def html_report(store: Any, run_id: str) -> str:
    """One HTML file with plotly.js embedded once: opens offline."""
    figs, verdict_list, info = run_figures(store, run_id)
    parts = [go.Figure(f).to_html(include_plotlyjs=(i == 0), full_html=False) for i, f in enumerate(figs)]
    items = "".join(
        f"<li>{'✅' if v.ok else '❌' if v.ok is False else '⏳'} {html.escape(v.label)}: {html.escape(v.detail)}</li>"
        for v in verdict_list
    )
    cfg = html.escape(json.dumps(json.loads(info["config_json"]), indent=2))
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>Scan & Snap run {run_id}</title>"
        "<style>body{font-family:sans-serif;max-width:1100px;margin:auto;font-size:17px}</style></head><body>"
        f"<h1>Scan &amp; Snap lab · run {html.escape(info['name'])} ({run_id})</h1>"
        f"<p>Status {html.escape(info['status'])}, step {info['last_step']}. Paper: "
        "<a href='https://arxiv.org/abs/2305.16380'>arXiv:2305.16380</a></p>"
        f"<h2>Verdicts</h2><ul>{items}</ul><h2>Charts</h2>{''.join(parts)}"
        f"<h2>Config</h2><pre>{cfg}</pre></body></html>"
    )
