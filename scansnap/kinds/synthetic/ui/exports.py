"""Self-contained exports of a stored run: zipped tables, and its HTML report (the same renderer as a
reproduction's, :func:`scansnap.paper.report.render_html`).  No Streamlit here."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from scansnap.kinds.synthetic.paper.claims import run_claims
from scansnap.kinds.synthetic.paper.observe import observed, query_row, token_info
from scansnap.kinds.synthetic.paper.theory_view import run_snap, stored_overlay
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.ui import figures
from scansnap.paper.environment import environment
from scansnap.paper.history import RunHistory
from scansnap.paper.report import Section, render_html
from scansnap.paper.verdicts import tally
from scansnap.ui.chart_style import fit_top, plain_title, set_title
from scansnap.ui.run_list import step_text

MF_NOTE = " (dashed: T→∞ mean field)"  # a token chart's title says this only when it draws the twin


def _twin(
    st_: dict[str, np.ndarray], replica: int, key: str, row: int, last: int
) -> tuple[np.ndarray, np.ndarray] | None:
    """(steps, values) of the mean-field twin's ``mf_<key>`` for one row (class n or query q), up to the
    run's last step (as the Lab draws it); None when the run has no twin for this replica."""
    if "mf_steps" not in st_ or replica >= len(st_["mf_z"]):
        return None
    keep = np.asarray(st_["mf_steps"]) <= max(last, 1)
    return st_["mf_steps"][keep], st_[f"mf_{key}"][replica][keep][:, row]


def twin_note(cfg: RunConfig, st_: dict[str, np.ndarray], replica: int) -> str:
    """What the report's token charts say about the T→∞ mean-field twin of this replica."""
    if cfg.model.kind != "yz":
        return "This run trains the T→∞ mean field itself, so its token charts have no mean-field twin to show."
    if "mf_steps" not in st_ or replica >= len(st_["mf_z"]):
        return (
            "No T→∞ mean-field twin is stored with this run (vocabulary too large, the twin diverged, or an older run)."
        )
    tail = f" up to step {int(st_['mf_steps'][-1])}" if int(st_["mf_steps"][-1]) < cfg.optim.steps else ""
    return f"Dashed lines in the token charts: the run's T→∞ mean-field twin (same seed and learning rates){tail}."


def _titled(fig: dict[str, Any], twin: Any) -> dict[str, Any]:
    """The chart's title promises the dashed mean-field lines exactly when it draws them."""
    text = plain_title(fig).replace(MF_NOTE, "")
    return set_title(fig, text + (MF_NOTE if twin is not None else ""))


def token_figures(hist: RunHistory, st_: dict[str, np.ndarray], n: int, replica: int) -> list[tuple[str, Any]]:
    """c_n and z over time (with the mean-field twin dashed when the run has one) and the c_n heat map."""
    P, kind = st_["P"], st_["token_kind"]
    tinfo, steps, last = token_info(P, kind), np.asarray(hist.steps), hist.last_step
    q = query_row(st_, n)
    qs = np.array([query_row(st_, k) for k in range(P.shape[0])])
    supp, ztok = np.flatnonzero(kind[n] != 0), np.flatnonzero((kind[qs == q] != 0).any(0))
    mf_c, mf_z = _twin(st_, replica, "c", n, last), _twin(st_, replica, "z", q, last)
    return [
        ("c_n over time", _titled(figures.cn_lines(steps, hist.c_of(replica, n), n, tinfo, supp, last, mf=mf_c), mf_c)),
        ("c_n of every next token", figures.cn_heatmap(hist.c[-1][replica], qs, last)),
        ("z_m over time", _titled(figures.z_lines(steps, hist.z_of(replica, q), q, tinfo, ztok, mf=mf_z), mf_z)),
    ]


def run_figures(store: Any, run_id: str, n: int = 0, replica: int = 0) -> list[tuple[str, Any]]:
    """The Lab's charts of one replica of a stored run, as (caption, figure) at its last step."""
    hist = RunHistory(run_id)
    hist.update(store)
    st_ = store.statics(run_id)
    overlay = stored_overlay(st_, replica)
    figs = token_figures(hist, st_, n, replica) if hist.c and not hist.topk else []
    hs, H = hist.metric("entropy_distinct", replica)
    ds, dzc = hist.metric("dz_common", replica)
    snap = run_snap(ds, dzc, hs, H)
    bs, B = hist.metric("B_hat", replica)
    figs.append(
        ("The snap against Theorem 4 calibrated to this run", figures.snap_chart(ds, dzc, B, overlay, snap, "mean"))
    )
    figs.append(("Attention entropy on distinct tokens", figures.entropy_chart(hs, H, overlay, snap)))
    lo, dz = hist.metric("bracket_lo", replica)[1], hist.metric("dz_dominant", replica)[1]
    figs.append(("Theorem 3's bracket", figures.bracket_chart(bs, B, dz, lo, "mean")))
    ls, loss = hist.metric("loss", replica)
    figs.append(("Loss and accuracy", figures.loss_chart(ls, loss, hist.metric("accuracy", replica)[1])))
    return [(name, fit_top(fig)) for name, fig in figs]


def html_report(store: Any, run_id: str) -> str:
    """One HTML file with plotly.js embedded once: opens offline."""
    info = store.get_run(run_id)
    hist = RunHistory(run_id)
    hist.update(store)
    cfg, st_ = RunConfig.from_json(info["config_json"]), store.statics(run_id)
    verdicts = run_claims(observed(hist, st_, 0, cfg))
    section = Section(
        "Charts (replica 0, next token n = 0)",
        run_figures(store, run_id),
        notes=[twin_note(cfg, st_, 0)] if hist.c and not hist.topk else [],  # the token charts are drawn
        configs=json.loads(info["config_json"]),
        status=f"status {info['status']}, step {step_text(info['last_step'])}",
    )
    title = f"Scan & Snap lab · run {info['name']} ({run_id})"
    headline = (
        f"{tally(verdicts).sentence} · paper: Tian, Wang, Chen, Du, Scan and Snap, NeurIPS 2023, arXiv:2305.16380."
    )
    return render_html(title, headline, verdicts, [section], environment(info["device"]))
