"""The Python API (scansnap.api, docs/api.md): presets, train in this process, reopen; a run's tables equal
its export's files, its figures show its stored numbers, its verdicts equal verdicts.json; bad input says
what is allowed; ``import scansnap`` loads no torch."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import scansnap as ss
from scansnap.paper.presets import load_presets
from scansnap.service.export import export_run

ROOT = Path(__file__).resolve().parents[1]
TINY_TEXT = {  # the text preset made tiny (tests/service/test_text_facade.py's sizes)
    "data.vocab_size": 500,
    "model.d_model": 16,
    "model.d_ff": 16,
    "model.device": "cpu",
    "optim.batch": 4,
    "optim.bptt": 8,
    "optim.steps": 60,
    "probe.val_windows": 2,
    "snapshots.linear_every": 10,
    "snapshots.log_count": 0,
}


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("api-data")


@pytest.fixture(scope="module")
def lecture(data_dir):
    return ss.train(
        "lecture", {"optim.steps": 120, "replicas.seeds": [3]}, name="api lecture", data_dir=data_dir, progress=False
    )


@pytest.fixture(scope="module")
def text_run(data_dir):
    return ss.train(ss.config("text-fig7-1layer-live", TINY_TEXT), data_dir=data_dir, progress=False)


def _exported(run: ss.Run, tmp_path: Path) -> Path:
    export_run(run.store, run.id, tmp_path, "parquet")
    return tmp_path


def test_presets_are_every_kinds_shelf_in_order():
    assert ss.presets() == [*load_presets(), *load_presets("text")]
    assert ss.presets("text") == list(load_presets("text"))
    with pytest.raises(ValueError, match="unknown kind of run 'nope'; allowed: synthetic, text"):
        ss.presets("nope")


def test_train_applies_the_overrides_and_stores_the_run_finished(lecture, data_dir):
    assert lecture.status == "finished" and lecture.kind == "synthetic"
    assert lecture.config.optim.steps == 120 and lecture.info["name"] == "api lecture"
    assert lecture.info["last_step"] == 120
    again = ss.open(lecture.id, data_dir=data_dir)
    assert again.info == lecture.info and repr(again).startswith(f"<scansnap.Run {lecture.id} synthetic")


def test_a_synthetic_runs_tables_equal_its_export(lecture, tmp_path):
    out = _exported(lecture, tmp_path)
    assert list(lecture.scalars().columns) == ["step", "replica", "n", "metric", "value"]
    pd.testing.assert_frame_equal(lecture.scalars(), pd.read_parquet(out / "scalars.parquet"))
    pd.testing.assert_frame_equal(lecture.trajectory(), pd.read_parquet(out / "trajectory.parquet"))
    assert lecture.verdicts() == json.loads((out / "verdicts.json").read_text())
    assert {v["id"] for v in lecture.verdicts()} >= {"thm2b"}


def test_a_synthetic_figure_draws_the_stored_numbers(lecture):
    """The Lab's entropy chart: its curve is the stored class-mean entropy_distinct of replica 0 at every stored
    step after step 0 (the chart's step axis is logarithmic)."""
    s = lecture.scalars()
    stored = s[(s.metric == "entropy_distinct") & (s.replica == 0) & s.n.isna()].set_index("step")["value"]
    (curve,) = lecture.figure("entropy").data
    assert list(curve.x) == [step for step in stored.index if step > 0]
    np.testing.assert_allclose(np.asarray(curve.y, float), stored.loc[list(curve.x)].to_numpy(), atol=1e-5)
    assert lecture.figures == ("c_n", "snap", "entropy", "c_n_heatmap", "z", "bracket", "loss")
    for name in lecture.figures:
        assert lecture.figure(name).layout.title.text, name


def test_a_real_text_run_the_same_way(text_run, tmp_path):
    out = _exported(text_run, tmp_path)
    assert text_run.kind == "text" and text_run.status == "finished"
    pd.testing.assert_frame_equal(text_run.scalars(), pd.read_parquet(out / "scalars.parquet"))
    maps = np.load(out / "attn_maps.npz")
    last = int(maps["steps"][-1])
    heat = text_run.figure("attn_map", layer=0)
    assert f"step {last}" in heat.layout.title.text
    z = np.asarray(heat.data[0].z, dtype=float)
    np.testing.assert_allclose(np.nan_to_num(z), maps["attn_map_mean"][-1, 0], atol=1e-3)
    assert [f for f in text_run.figures if text_run.figure(f).data] == list(text_run.figures)
    (layer0,) = text_run.verdicts()
    assert layer0["layer"] == 0 and layer0["drop"] in ("measured", "not measured")
    assert layer0["sentence"].startswith("layer 0: ")


@pytest.mark.parametrize(
    ("call", "error", "words"),
    [
        (lambda: ss.config("nope"), ValueError, "unknown preset 'nope'; available: lecture, theorem4"),
        (lambda: ss.train({"optim": {}}), ValueError, "no run kind takes a dict"),
        (lambda: ss.config("lecture", {"optim.nope": 1}), ValueError, "unknown key 'optim.nope'"),
    ],
)
def test_bad_input_says_what_is_allowed(call, error, words):
    with pytest.raises(error, match=re.escape(words)):
        call()


def test_what_a_run_of_the_wrong_kind_lacks_is_said(lecture, text_run, data_dir):
    with pytest.raises(ValueError, match="a text run has no table 'trajectory'; it has: scalars"):
        text_run.trajectory()
    with pytest.raises(ValueError, match="no chart 'attn_map' for a synthetic run; allowed: c_n, snap"):
        lecture.figure("attn_map")
    with pytest.raises(ValueError, match=re.escape("n = 99 is out of range: this run has n in 0..1")):
        lecture.figure("c_n", n=99)
    with pytest.raises(ValueError, match="step 7 is not stored"):
        text_run.figure("attn_map", step=7)
    with pytest.raises(KeyError, match="no run 'missing'"):
        ss.open("missing", data_dir=data_dir)


def test_importing_scansnap_loads_no_torch_until_a_run_trains():
    code = "import sys, scansnap as ss; ss.presets(); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
