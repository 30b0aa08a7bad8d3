"""The Lab's view in the link (n, q, replica, scrubbed step, charts), a run opened by link showing its
own config and its real speed, the lecture presets, table mode's knobs, the first-visit hint and the
share box's address (issue 14, items 3–4 and 6)."""

from __future__ import annotations

import json

import pytest

from scansnap.kinds.synthetic.ui.chart_list import CHART_KEYS
from scansnap.paper.presets import get_preset
from scansnap.service.jobs import get_manager
from scansnap.ui.knobs import SPEEDS, speed_label
from tests.apphelp import live_figure, open_page, open_share_box
from tests.apphelp import run_app as app
from tests.ui.test_app import figure, start_and_finish, widget


@pytest.fixture(scope="module")
def finished(data_dir):
    """A finished syn-small run of 60 steps, η_Y changed from the preset, started at 50 steps/s."""
    at = app({"preset": "syn-small", "optim.steps": "60", "optim.eta_y": "3.0", "speed": "50"})
    rid = start_and_finish(at, data_dir)
    return rid, at.session_state["lab.cfg"]


def _texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def test_the_link_reopens_n_q_and_the_scrubbed_step(data_dir, finished):
    rid, _ = finished
    steps = get_manager(data_dir).store.steps(rid)
    at = app({"run": rid, "n": "1", "at": str(steps[3])})
    assert not at.exception
    assert at.button_group[0].label.startswith("next token n") and at.button_group[0].value == 1
    assert "n=1 " in figure(at, "cn")["layout"]["title"]["text"]
    scrub = next(s for s in at.select_slider if s.label.startswith("scrub"))
    assert scrub.value == steps[3]
    assert f"step {steps[3]}" in figure(at, "cnh")["layout"]["title"]["text"]
    scrub.set_value(steps[5]).run()
    assert at.query_params["at"] in (str(steps[5]), [str(steps[5])])  # a change goes back into the link
    at.button_group[0].set_value(0).run()
    assert at.query_params["n"] in ("0", ["0"]) and "q" not in at.query_params


def test_view_values_beyond_the_run_or_malformed_are_said_and_not_applied(data_dir, finished):
    rid, _ = finished
    at = app({"run": rid, "n": "7", "at": "abc", "charts": "cn,bogus"})
    assert not at.exception
    warnings = _texts(at.warning)
    assert "n = 7 is beyond this run's 2 next tokens (allowed: 0 to 1): showing 0" in warnings
    assert "at = 'abc' is not a whole number" in warnings and "charts = 'cn,bogus': allowed are cn, B" in warnings
    assert at.button_group[0].value == 0


def test_a_next_token_beyond_the_setup_is_said_without_a_run(data_dir):
    """``/?n=999``: no run on screen, so n is checked against the setup's classes (issue: ignored silently)."""
    K = get_preset("syn-small").config.data.num_classes
    assert K == 2  # syn-small: num_last 2 queries × num_next_per_last 1
    at = app({"preset": "syn-small", "n": "999"})
    assert not at.exception
    assert f"n = 999 is beyond this setup's {K} next tokens (allowed: 0 to {K - 1}): showing 0" in _texts(at.warning)
    assert "n" not in at.session_state["lab.view"] and "n" not in at.query_params  # the view falls back


def test_replica_query_and_step_beyond_the_run_are_said_and_fall_back(data_dir, finished):
    """``/?run=…&replica=9`` on a one-replica run (issue: ignored silently), and q and at past the run."""
    rid, cfg = finished
    R, Q, steps = len(cfg["replicas"]["seeds"]), cfg["data"]["num_last"], cfg["optim"]["steps"]
    assert (R, Q, steps) == (1, 2, 60)  # one seed, syn-small's two queries, the fixture's 60 steps
    at = app({"run": rid, "replica": "9", "q": "5", "at": "500"})
    assert not at.exception
    warnings = _texts(at.warning)
    assert "replica = 9 is beyond this run's 1 replica (allowed: 0): showing 0" in warnings, warnings
    assert "q = 5 is beyond this run's 2 queries (allowed: 0 to 1): showing the next token's own query" in warnings
    assert "at = 500 is beyond this run's 60 steps (allowed: 0 to 60): showing the last stored step" in warnings
    assert at.session_state["lab.view"] == {}
    assert not {"replica", "q", "at"} & set(at.query_params)
    scrub = next(s for s in at.select_slider if s.label.startswith("scrub"))
    assert scrub.value == get_manager(data_dir).store.steps(rid)[-1]


def test_charts_in_the_link_pick_the_charts_shown(data_dir, finished):
    rid, _ = finished
    at = app({"run": rid, "charts": "cn,H"})
    shown = [live_figure(c)["layout"]["uirevision"] for c in at.get("bidi_component")]
    assert shown == ["cn", "H"]
    picker = widget(at, "multiselect", "Charts shown")
    assert picker.value == ["cn", "H"]
    picker.set_value(list(CHART_KEYS)).run()  # all of them again: the link names none
    assert "charts" not in at.query_params


def test_an_opened_run_shows_its_own_config_title_and_real_speed(data_dir, finished):
    rid, cfg = finished
    at = app({"run": rid})
    assert at.session_state["lab.cfg"] == cfg and at.session_state["lab.cfg"]["optim"]["eta_y"] == 3.0
    side = _texts(at.sidebar.markdown)
    assert f"Run: syn-small** (`{rid}`)" in side or f"(`{rid}`)" in side
    assert "this run's own config" in _texts(at.sidebar.caption)
    assert widget(at, "selectbox", "Start from a preset").value == "syn-small"


def test_a_viewer_sees_the_runs_real_speed_and_cannot_change_it(data_dir):
    owner = app({"preset": "syn-small", "optim.steps": "100000", "speed": "10"})
    owner.button(key="btn.start").click().run()
    rid = owner.session_state["lab.run"]
    try:
        viewer = app({"run": rid})  # another browser: not the owner
        speed = next(s for s in viewer.select_slider if s.label == "speed (steps/s)")
        assert speed.value == 10 and speed.disabled
        assert speed.options == [speed_label(s) for s in SPEEDS]
    finally:
        owner.button(key="btn.stop").click().run()


def test_speed_reads_slow_to_fast_and_the_lecture_preset_has_its_own():
    """Story time first (its steps start slow), then steps/s slow to fast, then max; the Lecture preset
    plays in story time, and says so in words."""
    assert SPEEDS[0] == "story" and SPEEDS[-1] == "max" and list(SPEEDS[1:-1]) == sorted(SPEEDS[1:-1])
    assert speed_label("story") == "story time (20 s)" and speed_label(5) == "5 steps/s"
    at = app({"preset": "lecture"})
    assert at.session_state["lab.speed"] == "story" and "speed" not in at.query_params
    assert next(s for s in at.select_slider if s.label == "speed (steps/s)").value == "story"
    widget(at, "selectbox", "Preset").set_value("syn-small").run()
    assert at.session_state["lab.speed"] == "max"


def test_table_mode_hides_the_generators_knobs(data_dir):
    at = app({"preset": "syn-small", "data.distinct_weights": "linspace"})
    assert "distinct_min" in [w.label for w in at.sidebar.number_input]
    widget(at, "selectbox", "P(l|n) source").set_value("table").run()
    labels = [w.label for w in at.sidebar.number_input] + [w.label for w in at.sidebar.selectbox]
    for gone in ("distinct_min", "distinct_max", "distinct weights", "global common tokens"):
        assert gone not in labels, gone


def test_the_first_visit_hint_gives_way_after_a_pick(data_dir):
    at = app()
    assert "Pick a preset" in _texts(at.info)
    widget(at, "selectbox", "Preset").set_value("lecture").run()
    hint = _texts(at.info)
    assert "Pick a preset" not in hint and "Press **▶ Start** to train “Lecture: scan, then snap”" in hint


@pytest.mark.parametrize(
    ("page", "key"), [("kinds/synthetic/ui/page.py", "lab-share"), ("kinds/text/ui/page.py", "text-share")]
)
def test_the_share_box_draws_its_link_and_config_only_when_open(data_dir, page, key):
    """Closed (as every page load finds it), the box draws no code box: the browser never loads the syntax
    highlighter for it; opened, it shows the link to this view and the config, as JSON."""
    at = open_page(page, {"optim.steps": "7"})
    assert not at.exception and not at.code
    at = open_share_box(at, key)
    link, config = ([c.value for c in at.code if (c.language == "json") is j] for j in (False, True))
    assert len(link) == 1 and "optim.steps=7" in link[0], link
    assert len(config) == 1 and json.loads(config[0])["optim"]["steps"] == 7, config


def test_the_share_box_uses_the_public_address_when_set(data_dir, monkeypatch):
    monkeypatch.setenv("SCANSNAP_PUBLIC_URL", "http://10.1.2.3:8501/")
    at = app({"preset": "lecture"})
    assert not at.code  # the box is drawn only while open
    links = [c.value for c in open_share_box(at).code if c.language != "json"]
    assert any(v.startswith("http://10.1.2.3:8501?preset=lecture") for v in links), links
    monkeypatch.setenv("SCANSNAP_PUBLIC_URL", "ftp://nowhere")
    at = open_share_box(app({"preset": "lecture"}))
    assert "is not an http(s) address" in _texts(at.warning)
