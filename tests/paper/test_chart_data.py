"""Unit tests of the dashboard's data shaping (scansnap.paper.history, theory_view, sweeps), URL state and
figure builders."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from scansnap.kinds.synthetic.paper.claims import run_claims
from scansnap.kinds.synthetic.paper.observe import observed, token_info
from scansnap.kinds.synthetic.paper.theory_view import Snap, calibrated_overlay
from scansnap.kinds.synthetic.science.config import RunConfig
from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.kinds.synthetic.ui import charts as lab_charts
from scansnap.kinds.synthetic.ui import figures, token_lines
from scansnap.kinds.synthetic.ui.state import LAB
from scansnap.paper.history import RunHistory, decimate, rnd
from scansnap.paper.presets import get_preset, load_presets
from scansnap.paper.sweeps import config_diffs, sweep_config, sweep_settings, sweep_summary
from scansnap.ui import chart_style
from scansnap.ui.url_state import encode


def test_decimate_keeps_ends_and_bounds_count():
    idx = decimate(5000, 150)
    assert idx[0] == 0 and idx[-1] == 4999 and len(idx) <= 150
    assert np.all(np.diff(idx) > 0)
    assert list(decimate(10, 150)) == list(range(10))


def test_rnd_keeps_significant_digits_and_zeros():
    got = rnd([123456.0, 0.000123456, 0.0, -1.23456e-200])
    np.testing.assert_allclose(got, [123500.0, 0.0001235, 0.0, -1.235e-200])


def test_token_info_colours_distinct_by_p_and_common_grey():
    pb = build_problem(get_preset("syn-small").config.data)
    info = token_info(pb.P, pb.token_kind)
    assert (info.kind[:10] == 2).all() and (info.kind[10:] == 1).all()
    assert info.owner[10] == 0 and info.owner[29] == 1
    assert info.rank[19] == 1.0 and info.rank[10] == 0.0  # P grows with the token id within a class
    colors = chart_style.token_colors(info)
    assert colors[0] == chart_style.COMMON_GREY and colors[19] != colors[10] and colors[19] == colors[29]


def test_the_charts_theory_is_solid_only_where_theorem4_applies():
    """theorem4 (T = ∞, Lemma 3, one common token and query, plain SGD, zero init): solid, nothing
    failed, t'_0 < t_0 within the run; syn-small (finite T, momentum, 10 common tokens): indicative,
    with the failed conditions in words; Adam: no curve at all (no theory)."""
    for name, solid in (("theorem4", True), ("syn-small", False)):
        cfg = get_preset(name).config
        pb = build_problem(cfg.data)
        ov = calibrated_overlay(cfg, pb, np.zeros((pb.Q, pb.M_ctx)), 0)
        assert ov["solid"] is solid and (ov["failed"] == ()) is solid
        assert ov["step"][0] == 0 and ov["step"][-1] == cfg.optim.steps and np.all(np.diff(ov["B_theory"]) >= 0)
    assert 0 < ov["t0_prime"] < ov["t0"] or np.isnan(ov["t0"])
    assert any("T = 128" in f for f in ov["failed"]) and any("momentum 0.9" in f for f in ov["failed"])
    adam = get_preset("syn-small-adam-1").config
    pb = build_problem(adam.data)
    assert "step" not in calibrated_overlay(adam, pb, np.zeros((pb.Q, pb.M_ctx)), 0)


def test_config_diffs_names_only_what_differs():
    a = get_preset("syn-small").config.to_dict()
    b = get_preset("syn-small-fast-decoder").config.to_dict()
    da, db = config_diffs([a, b])
    assert "eta_y=1.0" in da and "eta_y=10.0" in db and "batch" not in da


def test_config_diffs_names_every_difference_and_counts_a_long_list():
    """A Compare legend is not cut: every key that differs is named (none hidden behind "…"), and a
    long list (a sweep's 16 (η_Y, η_Z) pairs) says how many values it has instead of spelling them."""
    base = get_preset("syn-small").config
    sweep = sweep_config(base, [0.5, 1.0, 2.0, 3.0], [1.0, 2.0, 5.0, 10.0], [1, 2, 3], steps=20)
    other = base.with_overrides({"optim.batch": 7, "optim.momentum": 0.5, "model.init_std": 0.3, "optim.eta_z": 2.0})
    _, d_sweep, d_other = config_diffs([base.to_dict(), sweep.to_dict(), other.to_dict()])
    for key in ("batch", "momentum", "init_std", "steps", "lr_pairs", "eta_z"):  # six keys differ (> the old 4)
        assert f"{key}=" in d_other, key
    assert "…" not in d_other and "lr_pairs=16 values" in d_sweep and "seeds=[1, 2, 3]" in d_sweep


def test_sweep_config_and_summary():
    cfg = sweep_config(get_preset("syn-medium-1").config, [0.5, 1.0], [1.0, 2.0], [1, 2, 3], steps=5)
    assert cfg.n_replicas == 12 and cfg.lr_pairs[1] == (1.0, 0.5)
    eta_y = np.array([p[0] for p in cfg.lr_pairs for _ in range(3)])
    eta_z = np.array([p[1] for p in cfg.lr_pairs for _ in range(3)])
    final = pd.DataFrame({"replica": np.arange(12), "value": np.arange(12, dtype=float)})
    out = sweep_summary(final, {"eta_y": eta_y, "eta_z": eta_z})
    row = out[(out["eta_z"] == 0.5) & (out["ratio"] == 2.0)].iloc[0]
    assert row["mean"] == pytest.approx(4.0) and row["sem"] == pytest.approx(1 / np.sqrt(3)) and row["count"] == 3


@pytest.mark.parametrize(
    "over", [{}, {"optim.eta_y": 10.0, "replicas.seeds": [7, 8]}, {"data.T": "inf", "snapshots.linear_every": None}]
)
def test_url_round_trip_is_exact(over):
    cfg = get_preset("syn-small").config.with_overrides(over)
    cfg = RunConfig.from_dict({**cfg.to_dict(), "name": "123"})  # a name that looks like JSON stays a string
    params = LAB.config_params("syn-small", cfg.to_dict())
    assert all(isinstance(v, str) for v in params.values())
    preset, back, problems = LAB.parse_params(params)
    assert preset == "syn-small" and not problems and RunConfig.from_dict(back) == cfg


def test_encode_writes_text_as_is_and_the_rest_as_json():
    assert encode("123") == "123" and encode("sgd") == "sgd" and encode(2.5) == "2.5"
    assert json.loads(encode([[0.5, 1.0]])) == [[0.5, 1.0]] and encode(None) == "null"


def test_live_payload_at_default_settings_is_small():
    """The seven live charts at 300 stored snapshots (the default max) stay under 200 KB a tick."""
    pb = build_problem(get_preset("syn-small").config.data)
    info, S = token_info(pb.P, pb.token_kind), 300
    steps = np.arange(S) * 10
    rng = np.random.default_rng(0)
    C, Z, H = rng.random((S, pb.M_ctx)), rng.standard_normal((S, pb.M_ctx)), rng.random(S)
    supp = np.flatnonzero(pb.token_kind[0])
    mf = (steps, C)
    cfg = get_preset("syn-small").config
    ov = calibrated_overlay(cfg, pb, np.zeros((pb.Q, pb.M_ctx)), 0)
    figs = [
        figures.cn_lines(steps, C, 0, info, supp, int(steps[-1]), mf=mf),
        figures.cn_heatmap(C[:2], np.array([0, 1]), 10),
        figures.z_lines(steps, Z, 0, info, supp, mf=(steps, Z)),
        figures.entropy_chart(steps, H, ov, Snap(100, False)),
        figures.snap_chart(steps, H, H, ov, Snap(100, False), 0, indicative=True),
        figures.bracket_chart(steps, H, H, H, 0),
        figures.loss_chart(steps, H, H),
    ]
    assert figures.payload_bytes(figs) <= 200_000


def test_snap_chart_draws_theory_in_its_own_dashes_labelled_on_the_lines_or_not_at_all():
    """theorem4 (the theorem applies): Theorem 4's two curves in the measurement's colours, each with its
    own dash and its name written at its right end; syn-small (it does not): no theory line unless asked
    for, then in greys (R = G = B), named indicative, still each its own dash; the measured snap near the
    right end labels to its left, and a provisional one says so with a dashed line."""
    steps = np.unique(np.round(np.logspace(0, 4, 60)).astype(int))
    series = np.log1p(steps.astype(float))
    for name, solid in (("theorem4", True), ("syn-small", False)):
        cfg = get_preset(name).config.with_overrides({"optim.steps": int(steps[-1])})
        pb = build_problem(cfg.data)
        ov = calibrated_overlay(cfg, pb, np.zeros((pb.Q, pb.M_ctx)), 0)
        measured = {t["line"]["color"] for t in figures.snap_chart(steps, series, series, ov, None, 0)["data"]}
        for indicative in (False, True):
            fig = figures.snap_chart(steps, series, series, ov, Snap(int(steps[-8]), False), 0, indicative=indicative)
            theory = [t for t in fig["data"] if t["name"].startswith("Theorem 4")]
            if not solid and not indicative:
                assert theory == [] and not fig["layout"]["legend"].get("title", {}).get("text")
                continue
            assert len(theory) == 2 and all(("indicative" in t["name"]) is not solid for t in theory)
            assert len({t["line"]["dash"] for t in theory}) == 2  # each line its own dash
            colours = {t["line"]["color"] for t in theory}
            if solid:
                assert colours == measured
            else:
                assert all(len({c[1:3], c[3:5], c[5:7]}) == 1 for c in colours), colours  # #rrggbb with r = g = b
                assert not colours & measured
            on_line = {a["text"] for a in fig["layout"]["annotations"]}
            tail = "" if solid else " (indicative)"
            assert {f"theory: drop{tail}", f"theory: growth{tail}"} <= on_line
            rho0_sq = 1 / ov_rho(cfg)
            assert fig["layout"]["legend"]["title"]["text"] == f"Theorem 4's constant C₀ = ρ₀⁴/K = {rho0_sq**2 / 2:.3g}"
            snap = next(a for a in fig["layout"]["annotations"] if a["text"] == "snap (measured)")
            assert snap["xanchor"] == "right"  # log10(steps[-8]) / 4 > 0.6
    fig = figures.snap_chart(steps, series, series, None, Snap(30, True), 0)
    assert any(a["text"] == "snap so far (provisional)" for a in fig["layout"]["annotations"])
    assert any(sh.get("line", {}).get("dash") == "dash" for sh in fig["layout"]["shapes"])


def ov_rho(cfg: RunConfig) -> float:
    """ρ(0) at zero init with one query and K = 2, from its definition: f_1·f_2 of the normalised
    rows P(·|n) (Eqn. 5), computed here without the calibration module."""
    P = build_problem(cfg.data).P
    f = P / np.linalg.norm(P, axis=1, keepdims=True)
    return float(f[0] @ f[1])


def test_the_snap_caption_says_in_words_why_the_theory_is_off():
    ov = {
        "solid": False,
        "failed": ("T = 128: finite contexts (Assumption 1b)",),
        "failed_plain": ("the theorem assumes infinitely long sequences; this run uses 128 tokens", "…"),
    }
    off = lab_charts._snap_caption(ov, Snap(38, False), indicative=False)
    assert off == (
        "Measured snap at step 38. Theorem 4's curve is off here: the theorem assumes infinitely long "
        "sequences; this run uses 128 tokens."
    )
    on = lab_charts._snap_caption(ov, Snap(38, True), indicative=True)
    assert on.startswith("Snap so far at about step 38 (provisional). Grey: Theorem 4 as an indication only, since")
    assert "No theory" in lab_charts._snap_caption({"solid": False, "failed": ()}, None, False)


def test_caption_wraps_and_grows_the_bottom_margin():
    fig = figures.loss_chart(np.arange(5), np.ones(5), np.ones(5))
    before = dict(fig["layout"]["margin"]), fig["layout"]["height"]
    figures.caption(fig, "word " * 40)
    note = fig["layout"]["annotations"][-1]
    lines = note["text"].split("<br>")
    size = fig["layout"]["xaxis"]["tickfont"]["size"]
    per_line = int(figures.CAPTION_PX / (figures.CAPTION_EM * size))  # the narrowest chart's line
    assert len(lines) == -(-len("word " * 40) // (per_line + 1)) and all(len(x) <= per_line for x in lines)
    assert note["xshift"] == 10 - fig["layout"]["margin"]["l"]  # from the figure's left edge, as the title
    grow = fig["layout"]["margin"]["b"] - before[0]["b"]
    assert grow > 0 and fig["layout"]["height"] - before[1] == grow
    assert fig["layout"]["margin"]["b"] >= -note["yshift"] + 1.35 * size * len(lines)  # the caption fits


def _history(dz_last: np.ndarray, H: np.ndarray, steps: np.ndarray) -> tuple[RunHistory, dict[str, np.ndarray]]:
    """A hand-made one-replica Syn-Small history: z(0) = 0, z(last) = dz_last (Q, M_ctx) rows."""
    pb = build_problem(get_preset("syn-small").config.data)
    statics = {"P": pb.P, "token_kind": pb.token_kind, "query_tokens": pb.query_ids}
    statics["query_of_class_id"] = pb.query_of_class_id
    z = [np.zeros((1, pb.Q, pb.M_ctx))] + [dz_last[None] for _ in steps[1:]]  # moved by step 1, then held
    scal = pd.DataFrame(
        {
            "step": steps,
            "replica": 0,
            "n": pd.array([None] * len(steps), dtype="Int64"),
            "metric": "entropy_distinct",
            "value": H,
        }
    )
    return RunHistory("r", list(map(int, steps)), z, [np.zeros((1, pb.K, pb.M_ctx))] * len(steps), scal), statics


def _verdicts(hist: RunHistory, statics: dict[str, np.ndarray]) -> dict:
    return {x.id: x for x in run_claims(observed(hist, statics, 0))}


def test_lab_verdicts_judge_every_token_and_can_fail():
    pb = build_problem(get_preset("syn-small").config.data)
    steps = np.unique(np.r_[0, np.round(np.geomspace(1, 1000, 60))]).astype(np.int64)  # log-spaced, as stored
    snapped = 2.15 - 0.15 * (1 - np.exp(-steps / 5.0))  # falls, then freezes (the snap)
    good = np.zeros((pb.Q, pb.M_ctx))
    for n in range(pb.K):  # ψ(n) = n in Syn-Small: common tokens fall, distinct rise in order of P
        good[n] = np.where(pb.common_mask[n], -0.5, np.where(pb.distinct_mask[n], pb.P[n] * 10, 0.0))
    v = _verdicts(*_history(good, snapped, steps))
    assert [v[k].status for k in ("thm2b", "thm2a", "thm3")] == ["pass"] * 3, v
    assert v["thm4"].status == "n/a" and "no calibrated Theorem 4 curve" in v["thm4"].reason  # none stored here
    bad = good.copy()
    bad[0, 3] = 0.01  # one common token of class 0 rose
    bad[1, 29] = -0.01  # the top distinct token of class 1 fell
    drifting = 2.15 - 0.45 * np.log1p(steps) / np.log(1001)  # ln t: the same drop every decade, no snap
    v = _verdicts(*_history(bad, drifting, steps))
    assert v["thm2b"].status == "fail" and v["thm2b"].value == pytest.approx(0.01)
    assert v["thm2a"].status == "fail" and v["thm2a"].value == pytest.approx(-0.01)
    assert v["thm3"].status == "fail"


def test_many_token_charts_draw_the_largest_p_tokens_and_stay_small():
    """Theorem 4's setting with 100 distinct tokens (2 classes × 100 + 1 common): the z chart of its query has 201
    tokens; at most MAX_LINES are drawn (largest P first, the common one kept), the legend says
    how many are not, and the chart stays far under the 200 KB tick budget."""
    pb = build_problem(get_preset("theorem4").config.with_overrides({"data.num_distinct_per_next": 100}).data)
    info, S = token_info(pb.P, pb.token_kind), 200
    tokens = np.flatnonzero((pb.token_kind != 0).any(0))
    assert len(tokens) == 201
    shown = token_lines.shown_tokens(tokens, info)
    assert len(shown) == token_lines.MAX_LINES and set(shown) <= set(tokens)
    assert any(info.kind[t] == 2 for t in shown)
    dist = [t for t in tokens if info.kind[t] == 1]
    cut = min(info.p[t] for t in shown if info.kind[t] == 1)
    assert all(info.p[t] <= cut + 1e-12 for t in dist if t not in set(shown))  # nothing larger left out
    steps = np.arange(S) * 100
    Z = np.random.default_rng(0).standard_normal((S, pb.M_ctx))
    fig = figures.z_lines(steps, Z, 0, info, tokens, mf=(steps, Z))
    names = [t.get("name", "") for t in fig["data"]]
    assert f"+{201 - token_lines.MAX_LINES} tokens of smallest P not drawn" in names
    assert figures.payload_bytes([fig]) < 100_000


def _split_lines(trace: dict) -> dict[int, tuple[list, list]]:
    """A merged token trace back into one (x, y) line per token: segments end at a None, and
    each point's customdata names its token."""
    lines: dict[int, tuple[list, list]] = {}
    for x, y, l in zip(trace["x"], trace["y"], trace["customdata"], strict=True):  # noqa: E741
        if x is None:
            assert y is None and l is None
            continue
        xs, ys = lines.setdefault(l, ([], []))
        xs.append(x)
        ys.append(y)
    return lines


def test_token_lines_are_one_trace_per_colour_and_keep_every_token():
    """Syn-Small's z chart (10 common + 20 distinct tokens, P rising with the token id): one trace
    per colour shade plus one for the common tokens; split at their gaps they give back every
    token's line exactly, each token in the shade of its P-rank, the same shade in every chart."""
    pb = build_problem(get_preset("syn-small").config.data)
    info = token_info(pb.P, pb.token_kind)
    steps = np.arange(50) * 3
    Z = np.random.default_rng(1).standard_normal((50, pb.M_ctx))
    tokens = np.flatnonzero((pb.token_kind != 0).any(0))
    fig = figures.z_lines(steps, Z, 0, info, tokens, mf=(steps, Z + 1))
    lines = [t for t in fig["data"] if t.get("hoverinfo") != "skip"]
    theory = [t for t in fig["data"] if t.get("hoverinfo") == "skip"]
    assert len(lines) == chart_style.COLOR_LEVELS + 1 and len(theory) == chart_style.COLOR_LEVELS
    colors = chart_style.token_colors(info)
    seen = {}
    for trace in lines:
        for l, (xs, ys) in _split_lines(trace).items():  # noqa: E741
            assert l not in seen and trace["line"]["color"] == colors[l]
            seen[l] = ys
            assert xs == steps.tolist()
            np.testing.assert_allclose(ys, Z[:, l], rtol=1e-3)  # rounded to 4 significant digits
    assert sorted(seen) == tokens.tolist()
    for trace in theory:
        for l, (_, ys) in _split_lines(trace).items():  # noqa: E741
            assert info.kind[l] == 1 and trace["line"]["dash"] == "dash"
            np.testing.assert_allclose(ys, Z[:, l] + 1, rtol=1e-3)
    shades = {colors[t] for t in tokens if info.kind[t] == 1}
    assert len(shades) == chart_style.COLOR_LEVELS
    assert {colors[t] for t in tokens if info.kind[t] == 2} == {chart_style.COMMON_GREY}
    top = max((t for t in tokens if info.kind[t] == 1), key=lambda t: info.p[t])
    named = {t["name"]: t for t in fig["data"] if t.get("showlegend", True)}
    assert set(named) == {"distinct, highest P(l|n)", "distinct, lowest P(l|n)", "common", "mean-field (T→∞)"}
    assert top in named["distinct, highest P(l|n)"]["customdata"]


def test_z_title_promises_the_mean_field_lines_only_when_they_are_drawn():
    pb = build_problem(get_preset("syn-small").config.data)
    info = token_info(pb.P, pb.token_kind)
    tokens = np.flatnonzero((pb.token_kind != 0).any(0))
    steps = np.arange(5)
    Z = np.zeros((5, pb.M_ctx))
    with_twin = figures.z_lines(steps, Z, 0, info, tokens, mf=(steps, Z))
    alone = figures.z_lines(steps, Z, 0, info, tokens)
    title = lambda fig: fig["layout"]["title"]["text"]
    assert "dashed: T→∞ mean field" in title(with_twin) and "dash" in str(with_twin["data"])
    assert "dashed" not in title(alone)


def test_sweep_settings_rebuild_the_sweep_they_came_from():
    """The Sweep page's form shows a stored sweep's own settings: they rebuild exactly its config."""
    presets = {name: p.config for name, p in load_presets().items()}
    cfg = sweep_config(presets["syn-small"], [0.3, 2.0], [1.0, 5.0, 10.0], [4, 5], 20)
    got = sweep_settings(cfg, presets)
    assert got is not None and got.base == "syn-small"
    assert (got.eta_zs, got.ratios, got.seeds, got.steps) == ([0.3, 2.0], [1.0, 5.0, 10.0], [4, 5], 20)
    assert sweep_config(presets[got.base], got.eta_zs, got.ratios, got.seeds, got.steps) == cfg
    other = cfg.with_overrides({"optim.batch": 7})  # a base that is none of the presets
    assert sweep_settings(other, presets).base is None
    not_a_grid = cfg.with_overrides({"replicas.lr_pairs": [[1.0, 0.5], [3.0, 1.0]]})  # ratios 2 and 3
    assert sweep_settings(not_a_grid, presets) is None and sweep_settings(presets["syn-small"], presets) is None
