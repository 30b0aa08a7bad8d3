"""The Lab's live tick (scansnap/kinds/synthetic/ui/live.py): what each chart is built from, and what is rebuilt."""

from __future__ import annotations

import json
import logging
import re

import numpy as np
import pandas as pd
import pytest

from scansnap.kinds.synthetic.science.data import build_problem
from scansnap.kinds.synthetic.ui import live as lab_live
from scansnap.paper.history import RunHistory
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.ui.chart_style import LECTURE_FONT

logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" warnings of the caches


def _syn_small_history(rid: str) -> tuple[RunHistory, dict[str, np.ndarray], str]:
    cfg = get_preset("syn-small").config
    pb = build_problem(cfg.data)
    statics = {
        "P": pb.P,
        "token_kind": pb.token_kind,
        "query_of_class_id": pb.query_of_class_id,
        "query_tokens": pb.query_ids,
        "label_ids": pb.label_ids,
    }
    rng = np.random.default_rng(0)
    steps = [0, 1, 2, 5, 10, 20]
    z = [rng.standard_normal((1, pb.Q, pb.M_ctx)) for _ in steps]
    c = [rng.random((1, pb.K, pb.M_ctx)) for _ in steps]
    scal = pd.DataFrame(
        {
            "step": steps,
            "replica": 0,
            "n": pd.array([None] * len(steps), dtype="Int64"),
            "metric": "entropy_distinct",
            "value": np.linspace(2.2, 2.0, len(steps)),
        }
    )
    return RunHistory(rid, steps, z, c, scal), statics, cfg.to_json()


def test_picking_another_n_rebuilds_only_the_charts_that_show_n():
    hist, statics, cfg_json = _syn_small_history("tick-test")
    first = lab_live._tick(hist, statics, cfg_json, "tick-test", (0, 0, 0, None, 15))
    other = lab_live._tick(hist, statics, cfg_json, "tick-test", (0, 1, 1, None, 15))
    again = lab_live._tick(hist, statics, cfg_json, "tick-test", (0, 0, 0, None, 15))
    assert [k for k, _, _ in first.charts] == ["cn", "B", "H", "cnh", "z", "bracket", "loss"]
    for a, b, c in zip(first.charts, other.charts, again.charts, strict=True):
        key = a[0]
        assert c is a  # the same view again: every chart from the cache
        assert (b is a) == (key in ("cnh", "H", "loss")), key  # n and q changed: cn, B, z, bracket rebuilt
    title = json.loads(dict((k, d) for k, d, _ in other.charts)["cn"])["fig"]["layout"]["title"]["text"]
    assert "n=1 " in title
    assert other.verdicts is first.verdicts  # verdicts depend on the replica only


def test_each_chart_shows_the_stored_history_it_is_built_from():
    hist, statics, cfg_json = _syn_small_history("tick-data")
    tick = lab_live._tick(hist, statics, cfg_json, "tick-data", (0, 1, 1, None, 15))
    figs = {k: json.loads(d)["fig"] for k, d, _ in tick.charts}
    heat = figs["cnh"]["data"][0]
    assert np.allclose(heat["z"][1], np.round(hist.c[-1][0, 1], 3), atol=1e-3)  # row n=1 at the last step
    H = figs["H"]["data"][0]
    assert H["x"] == [1, 2, 5, 10, 20]  # step 0 is not on the log axis
    supp = np.flatnonzero(statics["token_kind"][1])
    drawn = {tok for t in figs["cn"]["data"] if t.get("hoverinfo") != "skip" for tok in t.get("customdata") or []}
    drawn.discard(None)
    assert drawn == set(supp.tolist())


def _two_pickers() -> None:
    import streamlit as st

    from scansnap.kinds.synthetic.ui.view import _pick

    st.session_state["few"] = _pick("next token n", 3, 1, "few-key", "n")
    st.session_state["many"] = _pick("query q", 40, 7, "many-key", "q")


def test_a_few_choices_are_buttons_and_many_a_select_box():
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_two_pickers).run()
    assert not at.exception
    assert [b.label for b in at.button_group] == ["next token n"] and at.button_group[0].value == 1
    assert [b.label for b in at.selectbox] == ["query q"] and at.selectbox[0].value == 7
    at.button_group[0].set_value(2).run()
    assert at.session_state["few"] == 2 and at.session_state["many"] == 7


# ----------------------------------------------------------------- one tick, one step
class _MidWrite:
    """The run store read while the worker writes its last snapshot: ``steps`` (and ``snapshot``) already
    see it while ``scalars`` does not yet (``arrays_ahead``), or the other way round.  SQLite writes both
    in one transaction, but a tick reads them in separate queries, so either may be a snapshot ahead."""

    def __init__(self, store, arrays_ahead: bool):
        self.store, self.arrays_ahead = store, arrays_ahead

    def steps(self, rid):
        steps = self.store.steps(rid)
        return steps if self.arrays_ahead else steps[:-1]

    def snapshot(self, rid, step):
        return self.store.snapshot(rid, step)

    def scalars(self, rid, since_step=None):
        rows = self.store.scalars(rid, since_step=since_step)
        return rows[rows["step"] < self.store.steps(rid)[-1]] if self.arrays_ahead else rows


def _step_in(title: str) -> int:
    return int(re.search(r"step (\d+)", title).group(1))


@pytest.fixture(scope="module")
def lecture_run(tmp_path_factory):
    """The lecture preset's first 20 steps, stored (snapshots every 2 steps)."""
    store = RunStore(tmp_path_factory.mktemp("one-step"))
    job = RunJob(get_preset("lecture").config.with_overrides({"optim.steps": 20}), store)
    assert job.run() == "finished"
    yield store, job.run_id, job.cfg.to_json()
    store.close()


@pytest.mark.parametrize("arrays_ahead", [True, False], ids=["arrays-ahead", "scalars-ahead"])
@pytest.mark.parametrize("fs", [15, LECTURE_FONT], ids=["lab", "lecture"])
def test_every_chart_of_a_tick_shows_the_same_step(lecture_run, arrays_ahead, fs):
    """Read while the last snapshot (step 20) is half visible, the tick shows the snapshot before it, the
    latest step with both arrays and scalars, on every chart: the c_n and heatmap titles, and the last point
    of the lines of the c_n, snap, entropy, z, bracket and loss charts (the theory lines stop within 5 %
    past it).  (Scalars ahead of arrays were already cut at the arrays' step; arrays ahead were not: the
    c_n chart and the heatmap said step 20 while the other charts ended at the step before.)"""
    store, rid, cfg_json = lecture_run
    common = store.steps(rid)[-2]
    hist = RunHistory(rid)
    hist.update(_MidWrite(store, arrays_ahead))
    statics = store.statics(rid)
    tick = lab_live._tick(hist, statics, cfg_json, f"{rid}-{arrays_ahead}", (0, 0, 0, None, fs))
    figs = {k: json.loads(d)["fig"] for k, d, _ in tick.charts}
    assert tick.id.endswith(f"@{common}")
    assert _step_in(figs["cn"]["layout"]["title"]["text"]) == common
    assert _step_in(figs["cnh"]["layout"]["title"]["text"]) == common
    for key in ("cn", "B", "H", "z", "bracket", "loss"):
        ends = [max(x for x in t["x"] if x is not None) for t in figs[key]["data"] if t.get("x")]
        assert max(ends) <= common * 1.05 and common in ends, (key, ends)
