"""A third kind of run that lives in this folder only (``service.py``, ``ui.py``, its registry line in
``conftest.py``, its metric in ``science.py``): it trains in process and through the job manager's worker,
stores, resumes, exports, compares and shows on the Runs page, while no file outside this folder names it."""

from __future__ import annotations

import io
import json
import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from scansnap.paper.presets import get_preset
from scansnap.service.facade import get_service
from scansnap.service.jobs import get_manager
from scansnap.service.run_kinds import create_run, kind_of, run_seconds, stored_config
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.apphelp import open_page, run_app, shown_text
from tests.guards import GUARD_S
from tests.kinds.toy import science
from tests.kinds.toy import service as toy

FOLDER = Path(__file__).resolve().parent
ROOT = FOLDER.parents[2]
NAMES = re.compile(r"kinds[./]toy\b|\bToy[A-Z]\w*|[\"']toy[\"']")  # its package, its classes, its store name


def test_no_file_outside_its_folder_names_the_toy_kind():
    """Read from the tree: every tracked file outside this folder (code, docs, configs) is free of the
    toy's package path, class names and store name; the pattern finds them in this folder."""
    tracked = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    inside = [p for p in tracked if (ROOT / p).resolve().is_relative_to(FOLDER)]
    assert {"service.py", "ui.py", "science.py", "conftest.py"} <= {Path(p).name for p in inside}
    assert all(NAMES.search((ROOT / p).read_text()) for p in inside if p.endswith(("service.py", "conftest.py")))
    outside = [p for p in tracked if p not in inside and (ROOT / p).is_file()]
    named = [p for p in outside if NAMES.search((ROOT / p).read_text(errors="replace"))]
    assert named == [], f"files outside {FOLDER.relative_to(ROOT)} name the toy kind: {named}"


def test_a_toy_kind_is_found_by_its_config_and_its_store_name(tmp_path):
    cfg = toy.ToyConfig(rate=0.25, optim={"steps": 10})
    assert kind_of(cfg).name == "toy" and run_seconds(tmp_path, cfg) == pytest.approx(0.01)
    with RunStore(tmp_path) as store:
        rid = create_run(store, cfg, "t")
        info = store.get_run(rid)
        assert info["kind"] == "toy" and stored_config(info) == cfg


def test_the_command_line_trains_a_toy_config_file_and_offers_the_toys_own_command(tmp_path, capsys):
    """``scansnap run --config F`` finds the kind by the file's sections (``rate`` is the toy's alone) and prints
    what every run's summary holds; the kind's ``commands`` add ``toy-half-life`` to ``scansnap``."""
    from scansnap.cli import main

    (tmp_path / "toy.json").write_text(json.dumps({"rate": 0.5, "optim": {"steps": 10}}))
    assert main(["--data-dir", str(tmp_path / "data"), "run", "--config", str(tmp_path / "toy.json")]) == 0
    said = capsys.readouterr().out
    assert "status=finished" in said and "steps 10" in said
    [info] = RunStore(tmp_path / "data").list_runs()
    assert info["kind"] == "toy" and info["last_step"] == 10
    assert main(["toy-half-life", "--rate", "0.5"]) == 0
    assert capsys.readouterr().out == "1.0000 steps\n"  # (1 − 0.5)^1 = 1/2


def test_a_toy_kind_trains_in_process_and_resumes_from_its_checkpoint(tmp_path):
    """RunJob, the one runner, drives the toy's trainer; a resume restores its checkpoint."""
    cfg = toy.ToyConfig(rate=0.5, optim={"steps": 20})
    with RunStore(tmp_path) as store:
        job = RunJob(cfg, store, name="toy")
        assert job.run() == "finished"
        assert store.steps(job.run_id) == [0, 5, 10, 15, 20]
        again = RunJob.resume(store, job.run_id)  # from the last checkpoint (none: a finished run keeps none)
        assert again.trainer.step_count == 0 and store.steps(job.run_id) == []
        assert again.run() == "finished" and store.steps(job.run_id) == [0, 5, 10, 15, 20]


def test_a_toy_kind_trains_through_the_job_manager_in_a_worker_and_shows_on_the_runs_page(data_dir):
    """Submitted like any run: the manager creates it by its kind, a worker process imports the kind's
    module (and registers the KIND it holds) and trains it; the store holds its snapshots, scalars and
    statics; the facade exports it with the kind's writer; the Runs page lists it by its view (no page
    opens it) and shows no error."""
    m = get_manager(data_dir)
    rid = m.submit(toy.ToyConfig(rate=0.5, optim={"steps": 20}), name="toy")
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


def test_toy_runs_compare_on_their_metric_and_beside_a_synthetic_run_on_none(data_dir):
    """The Compare page lists the toy's metric (its science's METRICS) and shows it first, one line per
    run, x_t = (1 − r)^t, each named by the setting that differs (its rate); chosen with a synthetic run,
    it says the two kinds share no metric and draws nothing."""
    m = get_manager(data_dir)
    fast, slow = (m.submit(toy.ToyConfig(rate=r, optim={"steps": 20}), name=f"toy {r}") for r in (0.5, 0.25))
    assert m.wait(fast, timeout=GUARD_S) == "finished" and m.wait(slow, timeout=GUARD_S) == "finished"
    at = open_page("app_pages/compare.py", {"runs": f"{fast},{slow}"})
    assert not at.exception and not at.warning and not at.error, shown_text(at.warning)
    box = at.selectbox(key="cmp.metric.toy")
    assert box.value == "x" and list(box.options) == [science.METRICS[0].label]
    [fig] = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    lines = {t["name"]: t for t in fig["data"]}
    assert set(lines) == {"rate = 0.5", "rate = 0.25"}
    for rate in (0.5, 0.25):
        line = lines[f"rate = {rate}"]
        y = (1 - rate) ** np.asarray(line["x"], float)
        np.testing.assert_allclose(line["y"], y, rtol=5e-4)  # a chart sends 4 significant digits
    assert "Toy runs: x, one line each." in shown_text(at.caption)

    job = RunJob(get_preset("syn-small").config.with_overrides({"optim.steps": 4}), m.store, name="syn")
    assert job.run() == "finished"
    at = open_page("app_pages/compare.py", {"runs": f"{fast},{job.run_id}"})
    assert not at.exception and not at.error
    assert "share none" in shown_text(at.info) and not at.get("plotly_chart")
