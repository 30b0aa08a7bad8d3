"""The Sweep page opened on a stored sweep (``/sweep?run=<id>``): the form shows that sweep's own
settings, not the default 48-replica form (issue), and a run that is no sweep is said."""

from __future__ import annotations

import json

from scansnap.core.metrics import bare_label, html_label, label, unit
from scansnap.paper.findings import sweep_finding
from scansnap.paper.presets import get_preset
from scansnap.paper.sweeps import final_values, per_replica, sweep_config
from scansnap.service.jobs import get_manager
from scansnap.service.run_kinds import create_run
from scansnap.service.runner import RunJob
from tests.apphelp import open_page, shown_text
from tests.guards import GUARD_S
from tests.ui.test_app import widget

PAGE = "app_pages/sweep.py"


def test_a_stored_sweep_opens_with_its_own_settings_in_the_form(data_dir):
    # none of these is the default form's (syn-medium-1; η_Z 0.5, 1, 2, 3; ratios 1, 2, 5, 10; 3 seeds;
    # 100 steps), and η_Z = 0.3 is not even among its choices
    cfg = sweep_config(get_preset("syn-small").config, [0.3, 2.0], [1.0, 20.0], [1, 2], 25)
    rid = create_run(get_manager(data_dir).store, cfg, status="finished")
    at = open_page(PAGE, {"run": rid})
    assert not at.exception
    assert widget(at, "selectbox", "base preset").value == "syn-small"
    assert widget(at, "multiselect", "η_Z values").value == [0.3, 2.0]
    assert widget(at, "multiselect", "η_Y/η_Z ratios").value == [1.0, 20.0]
    assert widget(at, "number_input", "seeds").value == 2
    assert widget(at, "number_input", "steps").value == 25
    assert "4 (η_Y, η_Z) pairs × 2 seeds = 8 replicas" in shown_text(at.caption)
    assert at.session_state["sweep.run"] == rid and at.query_params["run"] in (rid, [rid])


def test_a_sweep_built_on_no_preset_keeps_its_own_base(data_dir):
    base = get_preset("syn-small").config.with_overrides({"optim.batch": 7})  # no preset has batch 7
    rid = create_run(get_manager(data_dir).store, sweep_config(base, [1.0], [2.0], [1], 10), status="finished")
    at = open_page(PAGE, {"run": rid})
    assert not at.exception
    assert widget(at, "selectbox", "base preset").value == "(own)"
    assert f"Sweep {rid} was not built on a preset" in shown_text(at.info)
    at.button(key="sw.start").click().run()  # the form rebuilds it: same config, batch 7 included
    again = at.session_state["sweep.run"]
    assert again != rid and get_manager(data_dir).wait(again, GUARD_S) == "finished"
    stored = get_manager(data_dir).store.get_run(again)["config_json"]
    assert stored == sweep_config(base, [1.0], [2.0], [1], 10).to_json()


def test_a_run_that_is_no_sweep_is_said_and_the_default_form_shown(data_dir):
    rid = create_run(get_manager(data_dir).store, get_preset("syn-small").config, status="finished")
    at = open_page(PAGE, {"run": rid})
    assert f"run '{rid}' is not a sweep (it trains one (η_Y, η_Z) pair): open it in the Lab" in shown_text(at.warning)
    assert "run" not in at.query_params and at.session_state.get("sweep.run") is None
    assert widget(at, "multiselect", "η_Z values").value == [0.5, 1.0, 2.0, 3.0]
    at = open_page(PAGE, {"run": "zzz"})
    assert "run 'zzz' is not in the run store" in shown_text(at.warning)


def test_a_finished_sweep_shows_labels_and_one_sentence_on_what_it_shows(data_dir):
    cfg = sweep_config(get_preset("syn-small").config, [0.5, 2.0], [1.0, 10.0], [1, 2], 20)
    job = RunJob(cfg, get_manager(data_dir).store, name="sweep")
    assert job.run() == "finished"
    at = open_page(PAGE, {"run": job.run_id})
    assert not at.exception
    box = at.selectbox(key="sw.metric")
    assert box.value == "entropy_distinct" and box.options[0] == label("entropy_distinct")  # words, kept as names
    store = get_manager(data_dir).store
    final = final_values(store.scalars(job.run_id, metrics=["entropy_distinct"]), "entropy_distinct")
    said = sweep_finding(
        per_replica(final, store.statics(job.run_id)), bare_label("entropy_distinct"), unit("entropy_distinct")
    )
    assert said and said.startswith("Final attention entropy H(c_n) on distinct tokens ")
    assert said.replace("\\", "") in [m.value.replace("\\", "") for m in at.markdown]  # computed from the store
    (table,) = at.dataframe
    shown = json.loads(table.proto.columns)  # the columns' headers
    assert shown["mean"]["label"] == f"final {label('entropy_distinct')}, mean over seeds"
    assert shown["eta_z"]["label"] == "η_Z" and shown["ratio"]["label"] == "η_Y/η_Z"
    box.set_value("common_mass").run()
    assert not at.exception
    heat = json.loads(at.get("plotly_chart")[1].proto.spec)
    assert heat["data"][0]["marker"]["colorbar"]["title"]["text"] == html_label("common_mass")
