"""Unit tests of the dashboard's data shaping (engine.paper.history, theory_view, sweeps), URL state and
figure builders."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from engine.core.config import RunConfig
from engine.core.data import build_problem
from engine.paper.claims import run_claims
from engine.paper.history import RunHistory, decimate, observed, rnd, token_info
from engine.paper.presets import get_preset
from engine.paper.sweeps import config_diffs, sweep_config, sweep_summary
from engine.paper.theory_view import theory_overlay, theory_time
from ui import chart_style, charts, token_lines
from ui.knobs import config_params, encode, parse_params


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


def test_theory_time_maps_momentum_and_skips_adam():
    cfg = get_preset("syn-small").config
    # momentum 0.9 warms up: step i moves (1 - 0.9^i)/0.1 gradients, summed over i = 1..k
    want = [sum((1 - 0.9**i) / 0.1 for i in range(1, k + 1)) for k in (1, 10, 1000)]
    np.testing.assert_allclose(theory_time([1, 10, 1000], cfg), want, rtol=1e-12)
    assert theory_time([10], cfg)[0] == pytest.approx(41.39, abs=0.01)  # not 100: the buffer is still filling
    assert theory_time([1], get_preset("syn-small-adam-1").config) is None
    ov = theory_overlay(cfg, 100)
    assert ov["M"] == 34 and ov["K"] == 2
    for key, t in (("t0_prime", 2 * np.log(34)), ("t0", 4 * np.log(34))):  # K ln M/η_Y, 2K ln M/η_Y
        assert theory_time([ov[key]], cfg)[0] == pytest.approx(t, rel=1e-9)  # converted back to code steps
    assert ov["B_n"][0] >= 0 and np.all(np.diff(ov["B_n"]) >= -1e-12)


def test_config_diffs_names_only_what_differs():
    a = get_preset("syn-small").config.to_dict()
    b = get_preset("syn-small-fast-decoder").config.to_dict()
    da, db = config_diffs([a, b])
    assert "eta_y=1.0" in da and "eta_y=10.0" in db and "batch" not in da


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
    params = config_params("syn-small", cfg.to_dict())
    assert all(isinstance(v, str) for v in params.values())
    preset, back, problems = parse_params(params)
    assert preset == "syn-small" and not problems and RunConfig.from_dict(back) == cfg


def test_encode_writes_text_as_is_and_the_rest_as_json():
    assert encode("123") == "123" and encode("sgd") == "sgd" and encode(2.5) == "2.5"
    assert json.loads(encode([[0.5, 1.0]])) == [[0.5, 1.0]] and encode(None) == "null"


def test_live_payload_at_default_settings_is_small():
    """Six live charts at 300 stored snapshots (the default max) stay under 200 KB a tick."""
    pb = build_problem(get_preset("syn-small").config.data)
    info, S = token_info(pb.P, pb.token_kind), 300
    steps = np.arange(S) * 10
    rng = np.random.default_rng(0)
    C, Z, H = rng.random((S, pb.M_ctx)), rng.standard_normal((S, pb.M_ctx)), rng.random(S)
    supp = np.flatnonzero(pb.token_kind[0])
    mf = (steps, C)
    ov = theory_overlay(get_preset("syn-small").config, int(steps[-1]))
    figs = [
        charts.cn_lines(steps, C, 0, info, supp, int(steps[-1]), mf=mf),
        charts.cn_heatmap(C[:2], np.array([0, 1]), 10),
        charts.z_lines(steps, Z, 0, info, supp, mf=(steps, Z)),
        charts.entropy_chart(steps, H, ov),
        charts.b_chart(steps, H, H, H, ov, 0),
        charts.loss_chart(steps, H, H),
    ]
    assert charts.payload_bytes(figs) <= 200_000


def _history(dz_last: np.ndarray, H: np.ndarray, steps: np.ndarray) -> tuple[RunHistory, dict[str, np.ndarray]]:
    """A hand-made one-replica Syn-Small history: z(0) = 0, z(last) = dz_last (Q, M_ctx) rows."""
    pb = build_problem(get_preset("syn-small").config.data)
    statics = {"P": pb.P, "token_kind": pb.token_kind, "psi": pb.query_of_class_id, "query_tokens": pb.query_ids}
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
    steps = np.array([0, 1, 10, 100, 1000])
    snapped = np.array([2.15, 2.15, 2.05, 2.0, 1.999])
    good = np.zeros((pb.Q, pb.M_ctx))
    for n in range(pb.K):  # ψ(n) = n in Syn-Small: common tokens fall, distinct rise in order of P
        good[n] = np.where(pb.common_mask[n], -0.5, np.where(pb.distinct_mask[n], pb.P[n] * 10, 0.0))
    v = _verdicts(*_history(good, snapped, steps))
    assert all(x.status == "pass" for x in v.values()), v
    bad = good.copy()
    bad[0, 3] = 0.01  # one common token of class 0 rose
    bad[1, 29] = -0.01  # the top distinct token of class 1 fell
    drifting = np.array([2.15, 2.15, 2.05, 1.9, 1.7])
    v = _verdicts(*_history(bad, drifting, steps))
    assert v["thm2b"].status == "fail" and v["thm2b"].value == pytest.approx(0.01)
    assert v["thm2a"].status == "fail" and v["thm2a"].value == pytest.approx(-0.01)
    assert v["thm4"].status == "fail" and v["thm3"].status == "fail"


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
    fig = charts.z_lines(steps, Z, 0, info, tokens, mf=(steps, Z))
    names = [t.get("name", "") for t in fig["data"]]
    assert f"+{201 - token_lines.MAX_LINES} tokens of smallest P not drawn" in names
    assert charts.payload_bytes([fig]) < 100_000


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
    fig = charts.z_lines(steps, Z, 0, info, tokens, mf=(steps, Z + 1))
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
