"""The Lab's live charts: which there are (in page order), what each depends on, how each is built
from a run's history, and the one sentence under each that says what to see.  No Streamlit here.

The three a lecture needs come first (c_n over time, the snap with its theory, the entropy); the
theory is Theorem 4 calibrated to the run (:mod:`scansnap.kinds.synthetic.paper.theory_view`), each line its own
dash and labelled on it: in the measurement's colours when its conditions hold; otherwise off (grey and named
indicative when the viewer asks for it), with the first failed condition said in words.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from scansnap.kinds.synthetic.paper.observe import query_row, token_info
from scansnap.kinds.synthetic.paper.run_theory import short_condition
from scansnap.kinds.synthetic.paper.theory_view import Snap, run_snap, stored_overlay, twin_agreement
from scansnap.kinds.synthetic.ui import figures
from scansnap.kinds.synthetic.ui.chart_list import TITLES
from scansnap.paper.history import RunHistory
from scansnap.ui.chart_style import LECTURE_FONT, Spec, fit_top, lecture_layout

CAPTIONS = {
    "cn": "Grey common tokens fade; the dark, most likely distinct tokens take the attention.",
    "cnh": "Each row is one next token: its attention concentrates on a few distinct tokens.",
    "z": "Common tokens' logits fall, distinct ones rise in the order of P(l|n).",
    "bracket": "Theorem 3: the winner's logit change Δz stays between f²(0) × the total growth B̂ and B̂ itself.",
    "loss": "The decoder learns first; the attention keeps sharpening after the loss is low.",
}


def _overlay(hist: RunHistory, statics: dict[str, np.ndarray], r: int) -> dict[str, Any] | None:
    """Theorem 4 calibrated to replica r, as its worker stored it (None until then: a moment after the
    first snapshot), drawn only as far as the run has gone."""
    ov = stored_overlay(statics, r)
    if ov is not None and "step" in ov:
        keep = ov["step"] <= max(hist.last_step, 1) * 1.05
        ov = {**ov, **{k: ov[k][keep] for k in ("step", "B_theory", "dz_common_theory")}}
    return ov


def _snap_caption(ov: dict[str, Any] | None, snap: Snap | None, indicative: bool, short: bool = False) -> str:
    """What to see in the snap chart, in one sentence of words: the measured snap, and Theorem 4's curves
    (on the measurement where the theorem applies; else why not, the first failed condition, and whether
    the indicative curves are shown)."""
    seen = (
        "no snap measured yet"
        if snap is None
        else f"snap so far at about step {snap.step} (provisional)"
        if snap.provisional
        else f"measured snap at step {snap.step}"
    )
    if ov is None:
        return f"{seen.capitalize()}. Theorem 4's curve is being computed beside the training."
    if ov.get("solid"):
        if short:
            return f"{seen.capitalize()}. Dashed: Theorem 4, computed from this run's start, not fitted."
        return f"The common token's logit falls fast, then bends (ln t → ln ln t): {seen}. Dashed: Theorem 4."
    plain = ov.get("failed_plain") or tuple(map(short_condition, ov.get("failed", ())))
    if not plain:
        return f"{seen.capitalize()}. No theory covers this optimiser."
    if indicative:
        return f"{seen.capitalize()}. Grey: Theorem 4 as an indication only, since {plain[0]}."
    return f"{seen.capitalize()}. Theorem 4's curve is off here: {plain[0]}."


def twin_flip(hist: RunHistory, statics: dict[str, np.ndarray], r: int) -> str:
    """A sentence when this finite-T replica moves its logits against its T = ∞ twin, else ""."""
    if not hist.z or hist.topk:
        return ""
    found = twin_agreement(np.asarray(hist.steps), [z[r] for z in hist.z], statics, r)
    if found is None or found[1].holds:
        return ""
    step, cond = found
    return f" Unlike its T = ∞ twin (step {step}): {cond.detail}."


class View(NamedTuple):
    """What the live charts show: replica r, next token n, query q, the scrubbed step (None: the last),
    the font size, and whether Theorem 4's curves are drawn where the theorem does not apply."""

    r: int
    n: int
    q: int
    cursor: int | None
    fs: int
    indicative: bool = False


def figure(key: str, hist: RunHistory, statics: dict[str, np.ndarray], view: tuple) -> Spec:
    """Live chart ``key`` for ``view`` (:class:`View`, or the same as a plain tuple)."""
    view = View(*view)
    r, n, _, cursor, fs, _ = view
    if not hist.steps:  # a run that has not stored its first snapshot yet: the chart's frame, same height
        fig = figures.placeholder(TITLES[key], fs, LAST_HEIGHT.get((key, fs)))
        return lecture_layout(fig) if fs >= LECTURE_FONT else fig
    if key in ("cn", "cnh", "z"):
        fig = _token_figure(key, hist, statics, view)
    elif key in ("B", "H"):
        fig = _snap_figure(key, hist, statics, view)
    elif key == "bracket":
        nn = n if len(hist.metric("B_hat", r, n)[0]) else None
        bs, B = hist.metric("B_hat", r, nn)
        lo, dz = hist.metric("bracket_lo", r, nn)[1], hist.metric("dz_dominant", r, nn)[1]
        fig = figures.bracket_chart(bs, B, dz, lo, n if nn is not None else "mean", fs, cursor)
    else:
        ls, loss = hist.metric("loss", r)
        fig = figures.loss_chart(ls, loss, hist.metric("accuracy", r)[1], fs, cursor)
    fig = fit_top(_captioned(key, fig, hist, statics, view))
    LAST_HEIGHT[(key, fs)] = fig["layout"]["height"]
    return fig


LAST_HEIGHT: dict[tuple[str, int], int] = {}  # chart, font → its last height: the placeholder's (no jump)


def _captioned(key: str, fig: Spec, hist: RunHistory, statics: dict[str, np.ndarray], view: View) -> Spec:
    """The chart with its one sentence under it, laid out for a projector in lecture mode."""
    r, n, _, cursor, fs, _ = view
    lecture = fs >= LECTURE_FONT
    if key == "z":
        fig = figures.caption(fig, CAPTIONS[key] + twin_flip(hist, statics, r))
    elif key == "cn" and lecture:  # no room for a legend in a third of a projector: the caption says it
        fig["layout"]["showlegend"] = False
        twin = any(t.get("legendgroup") == "mf" for t in fig["data"])
        fig = figures.caption(fig, CAPTIONS[key] + (" Dashed: the T → ∞ twin." if twin else ""))
    elif key in CAPTIONS:
        fig = figures.caption(fig, CAPTIONS[key])
    return lecture_layout(fig, _lecture_title(key, n, hist.last_step, cursor)) if lecture else fig


def _lecture_title(key: str, n: int, last: int, cursor: int | None) -> str | None:
    """The story's charts' titles on one line of a third of a projector (the others keep theirs)."""
    return {
        "cn": f"Attention c(l | n) · n = {n} · step {last}",
        "B": f"The snap: drop −Δz, growth B̂, n = {n}",
        "cnh": f"Attention c_n · step {last if cursor is None else cursor}",
    }.get(key)


def _snap_figure(key: str, hist: RunHistory, statics: dict[str, np.ndarray], view: View) -> Spec:
    r, n, _, cursor, fs, indicative = view
    ov = _overlay(hist, statics, r)
    ds, dzc = hist.metric("dz_common", r)
    hs, H = hist.metric("entropy_distinct", r)
    snap = run_snap(ds, dzc, hs, H)
    if key == "H":
        fig = figures.entropy_chart(hs, H, ov, snap, fs, cursor)
        return figures.caption(fig, "Shaded by what was measured: blue while it scans, orange once it has snapped.")
    nn = n if len(hist.metric("dz_common", r, n)[0]) else None
    ds, dzc = hist.metric("dz_common", r, nn)
    B = hist.metric("B_hat", r, nn)[1]
    fig = figures.snap_chart(ds, dzc, B, ov, snap, n if nn is not None else "mean", fs, cursor, indicative)
    if fs < LECTURE_FONT:
        return figures.caption(fig, _snap_caption(ov, snap, indicative) + twin_flip(hist, statics, r))
    for trace in fig["data"]:  # a third of a projector: short names, C₀ in the caption
        trace["name"] = LECTURE_NAMES.get(trace["name"], trace["name"])
    fig["layout"]["legend"].pop("title", None)
    return figures.caption(fig, _snap_caption(ov, snap, indicative, short=True))


LECTURE_NAMES = {  # the measured lines' names on a projector (the theory lines are labelled on the lines)
    "the common token's drop −Δz, measured": "common token's drop −Δz",
    "total growth B̂, measured": "total growth B̂",
}


def _token_figure(key: str, hist: RunHistory, statics: dict[str, np.ndarray], view: View) -> Spec:
    r, n, q, cursor, fs, _ = view
    steps, step = np.asarray(hist.steps), hist.last_step
    kind, query_of = statics["token_kind"], statics["query_of_class_id"]
    if key == "cnh":
        at = hist.steps.index(cursor) if cursor is not None else -1
        return figures.cn_heatmap(hist.c[at][r], class_query(statics), hist.steps[at], fs)
    info = token_info(statics["P"], kind)
    mf = _clip(twin(statics, r) if len(hist.steps) > 1 else None, step)
    if key == "cn":
        line = (mf["steps"], mf["c"][:, n]) if mf else None
        return figures.cn_lines(steps, hist.c_of(r, n), n, info, np.flatnonzero(kind[n] != 0), step, fs, line, cursor)
    ztok = np.flatnonzero((kind[query_of == statics["query_tokens"][q]] != 0).any(0))
    line = (mf["steps"], mf["z"][:, q]) if mf else None
    return figures.z_lines(steps, hist.z_of(r, q), q, info, ztok, fs, line, cursor)


def twin(statics: dict[str, np.ndarray], r: int) -> dict[str, np.ndarray] | None:
    """Replica r's mean-field twin (steps, z, c) from the run's statics, if the worker stored one."""
    if "mf_steps" not in statics or r >= len(statics["mf_z"]):
        return None
    return {"steps": statics["mf_steps"], "z": statics["mf_z"][r], "c": statics["mf_c"][r]}


def _clip(mf: dict[str, np.ndarray] | None, last: int) -> dict[str, np.ndarray] | None:
    if mf is None:
        return None
    keep = mf["steps"] <= max(last, 1)
    return {k: v[keep] for k, v in mf.items()}


def class_query(statics: dict[str, np.ndarray]) -> np.ndarray:
    """Query index q of each class n (for grouping heatmap rows)."""
    return np.array([query_row(statics, n) for n in range(statics["P"].shape[0])])
