"""The Sweep page's "Any knob" tab (scansnap/ui/grid_view.py): a grid over any config key × seeds, one stored
run per cell, its final metrics side by side, reopened by its link; the open questions fill the form
in one click; a bad axis or seed list is said, and nothing starts."""

from __future__ import annotations

import json

from scansnap.core.metrics import bare_label, label, unit
from scansnap.paper.findings import GridAxis, grid_finding
from scansnap.paper.items.costs import about
from scansnap.paper.presets import get_preset
from scansnap.service.facade import get_service
from scansnap.service.jobs import get_manager
from scansnap.ui import grid_form
from scansnap.ui.result_words import RunProgress, grid_left_s
from scansnap.ui.settings_words import setting_label
from tests.apphelp import open_page, shown_text
from tests.guards import GUARD_S

PAGE = "app_pages/sweep.py"


def test_a_grid_over_a_data_knob_trains_one_run_per_cell_and_reopens_by_its_link(data_dir):
    at = open_page(PAGE, {})
    at.selectbox(key="gr.base").set_value("syn-small")
    at.text_area(key="gr.axes").set_value("data.num_distinct_per_next=5,10\noptim.steps=8,12")
    at.text_input(key="gr.seeds").set_value("1").run()
    assert not at.exception and "4 runs (2 × 2 cells × seeds 1), about 5 s of training" in shown_text(at.caption)
    at.button(key="gr.start").click().run()
    ids = at.session_state["grid.runs"]
    assert len(ids) == 4 and at.query_params["grid"] in (",".join(ids), [",".join(ids)])
    for rid in ids:
        assert get_manager(data_dir).wait(rid, GUARD_S) == "finished"
    again = open_page(PAGE, {"grid": ",".join(ids), "axes": "data.num_distinct_per_next,optim.steps"})
    assert not again.exception
    (table,) = [d.value for d in again.dataframe if "run" in d.value.columns]
    assert sorted(table["run"]) == sorted(ids) and set(table["status"]) == {"finished"}
    assert sorted(zip(table["data.num_distinct_per_next"], table["optim.steps"], strict=True)) == [
        (5, 8),
        (5, 12),
        (10, 8),
        (10, 12),
    ]
    store = get_manager(data_dir).store
    for _, row in table.iterrows():  # each row's metric is its run's own final value
        final = store.scalars(row["run"], metrics=["entropy_distinct"])
        assert row["entropy_distinct"] == final[final["step"] == final["step"].max()]["value"].mean()
    assert "4 of 4 runs ended" in " ".join(p.proto.text for p in again.get("progress"))
    # in words: the metric picker, the table's headers, and one sentence computed from the table
    box = again.selectbox(key="gr.metric")
    assert box.value == "entropy_distinct" and label("entropy_distinct") in box.options
    headers = {c: v.get("label") for c, v in json.loads(again.dataframe[0].proto.columns).items()}
    assert headers["data.num_distinct_per_next"] == setting_label("data.num_distinct_per_next", "synthetic")
    assert headers["entropy_distinct"] == label("entropy_distinct") and headers["optim.steps"] == "steps"
    axes = [GridAxis(k, setting_label(k, "synthetic")) for k in ("data.num_distinct_per_next", "optim.steps")]
    said = grid_finding(table, axes, "entropy_distinct", bare_label("entropy_distinct"), unit("entropy_distinct"))
    assert said and said.startswith("Final attention entropy H(c_n) on distinct tokens ")
    assert said.replace("\\", "") in [m.value.replace("\\", "") for m in again.markdown]


def test_an_open_question_fills_the_form_and_a_bad_axis_is_said(data_dir):
    at = open_page(PAGE, {})
    at.button(key="gr.q.Positional encoding × depth").click().run()
    assert at.session_state["gr.base"] == "text-fig7-1layer-live"
    assert "9 runs (3 × 3 cells" in shown_text(at.caption)
    at.text_area(key="gr.axes").set_value("optim.nope=1,2").run()
    assert "optim.nope" in shown_text(at.error) and at.button(key="gr.start").disabled
    at.text_area(key="gr.axes").set_value("model.n_layers=1,2").run()
    at.text_input(key="gr.seeds").set_value("x").run()
    assert "--seeds 'x'" in shown_text(at.error) and at.button(key="gr.start").disabled
    at.text_input(key="gr.seeds").set_value("1-60").run()
    assert "the dashboard trains at most 48" in shown_text(at.error)


def test_a_link_with_a_bad_grid_is_said_and_left_out(data_dir):
    at = open_page(PAGE, {"grid": "abc,../x", "axes": "a b"})
    assert not at.exception
    warnings = shown_text(at.warning)
    assert "not run ids" in warnings and "not dotted config keys" in warnings
    assert not at.session_state.get("grid.runs")


def test_more_axes_than_the_cap_are_said_as_the_cap_not_as_bad_keys(data_dir):
    """Nine good dotted keys: the form's error and the link's warning say the cap (8 axes) and how many
    were given; neither blames the keys."""
    from scansnap.service.grid import MAX_AXES

    assert grid_form.MAX_URL_AXES == MAX_AXES  # the link holds every axis a grid may have
    keys = [f"optim.k{i}" for i in range(MAX_AXES + 1)]
    at = open_page(PAGE, {"grid": "", "axes": ",".join(keys)})
    assert not at.exception
    warnings = shown_text(at.warning)
    assert f"names {MAX_AXES + 1} axes: at most {MAX_AXES} are allowed" in warnings, warnings
    assert "not dotted config keys" not in warnings
    at.selectbox(key="gr.base").set_value("syn-small")
    at.text_area(key="gr.axes").set_value("\n".join(f"{k}=1" for k in keys)).run()
    error = shown_text(at.error)
    assert f"the grid has {MAX_AXES + 1} axes: at most {MAX_AXES} are allowed" in error, error
    assert at.button(key="gr.start").disabled


def test_a_grid_still_training_says_how_long_it_has_left(data_dir):
    """Two runs created paused (they hold nothing and stay at step 0): the bar says none ended and the time
    left, from each run's whole-run estimate on this server's slots."""
    m = get_manager(data_dir)
    service = get_service(data_dir)
    cfgs = [
        get_preset("syn-small").config.with_overrides({"optim.steps": 40, "data.num_distinct_per_next": k})
        for k in (5, 10)
    ]
    ids = [m.submit(cfg, name=f"paused {i}", owner="session-grid", paused=True) for i, cfg in enumerate(cfgs)]
    try:
        at = open_page(PAGE, {"grid": ",".join(ids), "axes": "data.num_distinct_per_next"})
        assert not at.exception
        runs = [RunProgress(False, None, service.expected_seconds(cfg), 0.0) for cfg in cfgs]  # step 0 of each
        left = grid_left_s(runs, service.schedule().slots)
        slots, estimates = service.schedule().slots, [r.estimate_s for r in runs]
        assert left == (sum(estimates) if slots == 1 else max(estimates))  # one after the other, or side by side
        (bar,) = at.get("progress")
        assert bar.proto.text == f"0 of 2 runs ended · {about(left)} left"
    finally:
        for rid in ids:
            m.stop(rid)
