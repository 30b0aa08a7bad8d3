"""The run-kind registry (scansnap/service/run_kinds.py): each kind registered once, found by its config's
class or the store's ``kind`` column; a toy third kind (tests/service/toy_kind.py, registered from the
test suite) trains through the job manager, a worker process and the store with no change elsewhere."""

from __future__ import annotations

import io
import json
import zipfile

import numpy as np
import pytest

from scansnap.core.config import RunConfig
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.paper.presets import get_preset
from scansnap.service.facade import get_service
from scansnap.service.jobs import get_manager
from scansnap.service.kinds import RunKind
from scansnap.service.run_kinds import KINDS, create_run, kind_named, kind_of, register, run_seconds, stored_config
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.apphelp import run_app
from tests.guards import GUARD_S
from tests.service import toy_kind


def test_the_built_in_kinds_are_registered_once_each():
    assert {"synthetic", "text"} <= set(KINDS)
    assert kind_of(get_preset("syn-small").config).name == "synthetic"
    assert kind_named("text").config is TextRunConfig and kind_named("synthetic").config is RunConfig
    with pytest.raises(ValueError, match="registered already"):
        register(RunKind("synthetic2", RunConfig, KINDS["synthetic"].seconds, "x:y", "x:z"))
    with pytest.raises(ValueError, match="no run kind takes a dict"):
        kind_of({"optim": {}})


def test_a_toy_kind_is_found_by_its_config_and_its_store_name(tmp_path):
    cfg = toy_kind.ToyConfig(rate=0.25, optim={"steps": 10})
    assert kind_of(cfg).name == "toy" and run_seconds(tmp_path, cfg) == pytest.approx(0.01)
    with RunStore(tmp_path) as store:
        rid = create_run(store, cfg, "t")
        info = store.get_run(rid)
        assert info["kind"] == "toy" and stored_config(info) == cfg


def test_a_toy_kind_trains_in_process_and_resumes_from_its_checkpoint(tmp_path):
    """RunJob, the one runner, drives the toy's trainer; a resume restores its checkpoint."""
    cfg = toy_kind.ToyConfig(rate=0.5, optim={"steps": 20})
    with RunStore(tmp_path) as store:
        job = RunJob(cfg, store, name="toy")
        assert job.run() == "finished"
        assert store.steps(job.run_id) == [0, 5, 10, 15, 20]
        again = RunJob.resume(store, job.run_id)  # from the last checkpoint (none: a finished run keeps none)
        assert again.trainer.step_count == 0 and store.steps(job.run_id) == []
        assert again.run() == "finished" and store.steps(job.run_id) == [0, 5, 10, 15, 20]


def test_a_toy_kind_trains_through_the_job_manager_in_a_worker_and_shows_on_the_runs_page(data_dir):
    """Submitted like any run: the manager creates it by its kind, a worker process imports the kind's
    module (which registers it there) and trains it; the store holds its snapshots, scalars and statics;
    the facade exports it with the kind's writer; the Runs page lists it (no view registered: nothing
    to open it in) and shows no error."""
    m = get_manager(data_dir)
    rid = m.submit(toy_kind.ToyConfig(rate=0.5, optim={"steps": 20}), name="toy")
    assert m.wait(rid, timeout=GUARD_S) == "finished", m.store.get_run(rid)["message"]
    store = m.store
    info = store.get_run(rid)
    assert info["kind"] == "toy" and info["last_step"] == 20 and info["status"] == "finished"
    assert store.steps(rid) == [0, 5, 10, 15, 20]
    x = store.scalars(rid).sort_values("step")
    np.testing.assert_allclose(x["value"], 0.5 ** x["step"].to_numpy(), rtol=1e-15)  # x_t = (1 − r)^t
    assert float(store.snapshot(rid, 10)["x"][0]) == 0.5**10 and float(store.statics(rid)["x0"][0]) == 1.0

    with zipfile.ZipFile(io.BytesIO(get_service(data_dir).export_zip(rid, "csv"))) as zf:
        assert sorted(zf.namelist()) == [f"{rid}/config.json", f"{rid}/run.json", f"{rid}/x.csv"]
        assert json.loads(zf.read(f"{rid}/config.json"))["rate"] == 0.5

    at = run_app().switch_page("app_pages/runs.py").run()
    at.selectbox(key="runs.pick").set_value(rid).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    table = at.dataframe[0].value
    assert table.set_index("id").loc[rid, "replicas"] == 1
    assert not [b for b in at.button if b.key == "runs.open"]  # no page shows a toy run
