"""End-to-end tests of ``python -m scansnap`` (run, presets, theory, list, export) as a subprocess.

Each command imports torch (~2-3 s), so the commands are started together (in parallel) by a few
module-scoped fixtures and the tests only look at their results.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from scansnap.cli import main
from scansnap.core.schedule import snapshot_steps
from scansnap.kinds.synthetic.science import theory
from scansnap.paper.presets import get_preset, load_presets
from scansnap.service.store import RunStore
from tests.guards import GUARD_S

ROOT = Path(__file__).resolve().parents[1]

# Settings that make the loss/parameters overflow float32 within a few steps: SGD with η = 1e6 and
# weight decay 10 multiplies the (random, non-zero) parameters by (1 − 1e7) every step.
DIVERGE = [
    "--set",
    "model.init=normal",
    "--set",
    "optim.weight_decay=10",
    "--set",
    "optim.eta_y=1e6",
    "--set",
    "optim.eta_z=1e6",
    "--set",
    "optim.steps=20",
]


@dataclass
class Result:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _env(data_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["SCANSNAP_DATA_DIR"] = str(data_dir)
    env["PYTHONPATH"] = str(ROOT)
    env.pop("SCANSNAP_MAX_JOBS", None)
    return env


def _start(args: list[str], data_dir: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "scansnap", *args],
        cwd=ROOT,
        env=_env(data_dir),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _finish(args: list[str], p: subprocess.Popen) -> Result:
    try:
        out, err = p.communicate(timeout=GUARD_S)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        pytest.fail(f"`python -m scansnap {' '.join(args)}` timed out\n{err}")
    return Result(args, p.returncode, out, err)


def _run_all(cmds: dict[str, list[str]], data_dir: Path) -> dict[str, Result]:
    """Start every command at once, then collect them."""
    procs = {k: (a, _start(a, data_dir)) for k, a in cmds.items()}
    return {k: _finish(a, p) for k, (a, p) in procs.items()}


def _cli(args: list[str], data_dir: Path) -> Result:
    return _finish(args, _start(args, data_dir))


# ---------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def procs(tmp_path_factory):
    """Every independent subprocess, started at once: the good run, the diverging run, and the
    commands whose exit code and stderr are checked end to end."""
    base = tmp_path_factory.mktemp("cli")
    dirs = {k: base / k for k in ("good", "diverge", "bad", "empty")}
    cmds = {
        "good": (["run", "--preset", "syn-small", "--set", "optim.steps=20", "--out", str(base / "out")], "good"),
        "diverge": (["run", "--preset", "syn-small", *DIVERGE], "diverge"),
        "unknown-preset": (["run", "--preset", "nope", "--quiet"], "bad"),
        "export-unknown": (["export", "nosuchid", "--out", str(base / "export")], "bad"),
        "debug": (["--debug", "theory", "--M", "1", "--t", "1"], "bad"),
        "presets": (["presets"], "empty"),
        "theory-json": (
            [
                "theory",
                "--M",
                "10000",
                "--K",
                "1",
                "--eta-y",
                "1",
                "--eta-z",
                "1",
                "--C0",
                "1",
                "--t",
                "5",
                "10",
                "50",
                "--json",
            ],
            "empty",
        ),
        "theory-text": (["theory", "--M", "100", "--t", "1", "2"], "empty"),
        "list-empty": (["list"], "empty"),
    }
    started = {k: (a, _start(a, dirs[d])) for k, (a, d) in cmds.items()}
    res = {k: _finish(a, p) for k, (a, p) in started.items()}
    return {"base": base, "dirs": dirs, "out": base / "out", "res": res}


@pytest.fixture
def in_process(tmp_path, monkeypatch, capsys):
    """``scansnap.cli.main(argv)`` in this process (no torch start-up): returns (exit code, stdout, stderr)."""
    monkeypatch.setenv("SCANSNAP_DATA_DIR", str(tmp_path / "data"))

    def run(argv: list[str]) -> tuple[int, str, str]:
        code = main(argv)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


# ---------------------------------------------------------------------------- presets, theory
def test_presets_lists_every_preset(procs):
    r = procs["res"]["presets"]
    assert r.returncode == 0, r.stderr
    listed = [line.split()[0] for line in r.stdout.splitlines() if line and not line[0].isspace() and line[0] != "#"]
    assert listed == [*load_presets(), *load_presets("text")]
    for p in load_presets().values():
        assert p.title in r.stdout


def test_theory_json(procs):
    r = procs["res"]["theory-json"]
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    t = [5.0, 10.0, 50.0]
    assert out["t"] == t
    np.testing.assert_allclose(
        out["B_n"], theory.B_exact(np.array(t), M=10000, K=1, eta_y=1, eta_z=1, C0=1), rtol=1e-12
    )
    assert out["t0_prime"] == pytest.approx(np.log(10000), rel=1e-12)
    assert out["t0"] == pytest.approx(2 * np.log(10000), rel=1e-12)
    assert (out["M"], out["K"], out["eta_y"], out["eta_z"], out["C0"]) == (10000, 1, 1.0, 1.0, 1.0)


def test_theory_text(procs):
    r = procs["res"]["theory-text"]
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("t'_0 = ")
    assert len(r.stdout.strip().splitlines()) == 3


# ---------------------------------------------------------------------------- run / list / export
def _run_id(res: Result) -> str:
    m = re.search(r"^run ([0-9a-z]+)\s", res.stdout, re.M)
    assert m, f"no run id in the summary:\n{res.stdout}"
    return m.group(1)


def test_run_summary(procs):
    r = procs["res"]["good"]
    assert r.returncode == 0, r.stderr
    rid = _run_id(r)
    store = RunStore(procs["dirs"]["good"])
    [stored] = store.list_runs()
    assert stored["id"] == rid
    assert stored["status"] == "finished" and stored["last_step"] == 20
    assert "status=finished" in r.stdout
    assert "steps 20" in r.stdout
    assert "M=34 tokens" in r.stdout
    assert re.search(r"^loss\s+\S+\s+\S+$", r.stdout, re.M)
    for f in ("config.json", "verdicts.json", "trajectory.parquet", "scalars.parquet"):
        assert f"wrote {procs['out'] / f}" in r.stdout
    store.close()


def test_run_writes_config(procs):
    cfg = json.loads((procs["out"] / "config.json").read_text())
    expected = get_preset("syn-small").config.with_overrides({"optim.steps": 20})
    assert cfg == expected.to_dict()
    stored = RunStore(procs["dirs"]["good"]).list_runs()[0]
    assert json.loads(stored["config_json"]) == expected.to_dict()


def test_run_writes_trajectory(procs):
    df = pd.read_parquet(procs["out"] / "trajectory.parquet")
    assert list(df.columns) == ["step", "replica", "m", "n", "l", "kind", "P", "z", "c"]
    assert df["step"].dtype == np.int64
    for col in ("replica", "m", "n", "l"):
        assert df[col].dtype == np.int32, col
    assert isinstance(df["kind"].dtype, pd.CategoricalDtype)
    assert set(df["kind"].cat.categories) == {"distinct", "common"}
    assert df["P"].dtype == np.float64 and df["z"].dtype == np.float32 and df["c"].dtype == np.float32
    cfg = get_preset("syn-small").config
    expected_steps = snapshot_steps(20, cfg.snapshots).tolist()
    assert expected_steps == list(range(0, 21, 2))
    assert sorted(df["step"].unique().tolist()) == expected_steps
    # Syn-Small: 2 classes × (10 common + 10 distinct) tokens per snapshot, one replica
    assert len(df) == len(expected_steps) * 2 * 20
    assert (df["replica"] == 0).all()
    assert df.groupby(["step", "n"])["c"].sum().to_numpy() == pytest.approx(1.0, abs=1e-4)
    assert (df[df["step"] == 0]["z"] == 0).all(), "zero init"


def test_run_writes_scalars(procs):
    df = pd.read_parquet(procs["out"] / "scalars.parquet")
    assert list(df.columns) == ["step", "replica", "n", "metric", "value"]
    assert df["step"].dtype == np.int64 and df["replica"].dtype == np.int32
    assert str(df["n"].dtype) == "Int64" and str(df["metric"].dtype).startswith("string")
    assert df["value"].dtype == np.float64
    assert sorted(df["step"].unique().tolist()) == list(range(0, 21, 2))
    assert {"loss", "accuracy", "entropy_distinct", "common_mass", "B_hat"} <= set(df["metric"].unique())
    loss = df[(df["metric"] == "loss") & df["n"].isna()].set_index("step")["value"]
    assert loss[20] < loss[0]


def test_list_and_export_csv(procs, tmp_path):
    data = procs["dirs"]["good"]
    rid = _run_id(procs["res"]["good"])
    out = tmp_path / "csv"
    r_list, r_exp = _run_all(
        {"list": ["list"], "export": ["export", rid, "--format", "csv", "--out", str(out)]}, data
    ).values()
    assert r_list.returncode == 0, r_list.stderr
    [line] = [ln for ln in r_list.stdout.splitlines() if rid in ln]
    assert "finished" in line and "step 20" in line and "syn-small" in line

    assert r_exp.returncode == 0, r_exp.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "config.json",
        "run.json",
        "scalars.csv",
        "trajectory.csv",
        "verdicts.json",
    ]
    traj = pd.read_csv(out / "trajectory.csv")
    assert list(traj.columns) == ["step", "replica", "m", "n", "l", "kind", "P", "z", "c"]
    assert len(traj) == len(pd.read_parquet(procs["out"] / "trajectory.parquet"))
    assert sorted(traj["step"].unique().tolist()) == list(range(0, 21, 2))
    scal = pd.read_csv(out / "scalars.csv")
    assert list(scal.columns) == ["step", "replica", "n", "metric", "value"]
    assert json.loads((out / "config.json").read_text()) == json.loads((procs["out"] / "config.json").read_text())


def test_empty_list(procs):
    r = procs["res"]["list-empty"]
    assert r.returncode == 0 and "no runs stored yet" in r.stdout


def test_run_from_config_file(in_process, tmp_path):
    cfg_file = tmp_path / "cfg.json"
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 4, "name": "from-file"})
    cfg_file.write_text(cfg.to_json())
    code, out, err = in_process(["run", "--config", str(cfg_file), "--quiet", "--set", "optim.eta_y=2"])
    assert code == 0, err
    assert out == ""  # --quiet
    [stored] = RunStore(tmp_path / "data").list_runs()
    assert stored["name"] == "from-file" and stored["status"] == "finished" and stored["last_step"] == 4
    assert json.loads(stored["config_json"]) == cfg.with_overrides({"optim.eta_y": 2}).to_dict()


# ---------------------------------------------------------------------------- bad input
def _one_error_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("unknown-preset", "unknown preset 'nope'; available: "),
        ("export-unknown", "no stored run 'nosuchid'"),
    ],
)
def test_bad_input_subprocess_exits_2_with_one_line(procs, case, expected):
    r = procs["res"][case]
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert expected in _one_error_line(r.stderr)


def test_unknown_preset_names_available_presets(procs):
    err = procs["res"]["unknown-preset"].stderr
    for name in load_presets():
        assert name in err
    assert not (procs["base"] / "export").exists()
    assert RunStore(procs["dirs"]["bad"]).list_runs() == []


BAD = {
    "bad-value": (
        ["run", "--preset", "syn-small", "--set", "optim.eta_y=-1"],
        "optim.eta_y = -1: Input should be greater than 0",
    ),
    "unknown-key": (["run", "--preset", "syn-small", "--set", "nokey=1"], "unknown key 'nokey'"),
    "set-without-equals": (["run", "--preset", "syn-small", "--set", "optim.eta_y"], "--set expects key=value"),
    "config-and-preset": (
        ["run", "--preset", "syn-small", "--config", "{cfg}"],
        "give exactly one of --config FILE or --preset NAME",
    ),
    "neither": (["run"], "give exactly one of --config FILE or --preset NAME"),
    "missing-file": (["run", "--config", "{missing}"], "does not exist"),
    "invalid-json": (["run", "--config", "{badjson}"], "config is not valid JSON"),
    "json-list": (["run", "--config", "{listjson}"], "config JSON must be an object"),
    "invalid-config": (["run", "--config", "{badcfg}"], "optim.batch = 0"),
    "theory-bad-M": (["theory", "--M", "1", "--t", "1"], "--M must be ≥ 2"),
    "theory-negative-t": (["theory", "--M", "10", "--t", "-1"], "--t values must be ≥ 0"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_exits_2_with_one_line(in_process, tmp_path, case):
    files = {
        "cfg": tmp_path / "cfg.json",
        "missing": tmp_path / "missing.json",
        "badjson": tmp_path / "bad.json",
        "listjson": tmp_path / "list.json",
        "badcfg": tmp_path / "badcfg.json",
    }
    files["cfg"].write_text(json.dumps({}))
    files["badjson"].write_text("{not json")
    files["listjson"].write_text("[1, 2]")
    files["badcfg"].write_text(json.dumps({"optim": {"batch": 0}}))
    args, expected = BAD[case]
    code, _, err = in_process([a.format(**{k: str(v) for k, v in files.items()}) for a in args])
    assert code == 2, err
    assert expected in _one_error_line(err)
    data = tmp_path / "data"
    assert not data.exists() or RunStore(data).list_runs() == [], "bad input must not create a run"


def test_debug_shows_traceback(procs):
    r = procs["res"]["debug"]
    assert r.returncode != 0
    assert "Traceback (most recent call last)" in r.stderr
    assert "BadInputError: --M must be ≥ 2" in r.stderr


# ---------------------------------------------------------------------------- divergence
def _diverged_step(msg: str) -> int:
    m = re.search(r"diverged after step (\d+)", msg)
    assert m, msg
    return int(m.group(1))


def test_diverging_run_exits_3_and_is_stored(procs):
    r = procs["res"]["diverge"]
    assert r.returncode == 3, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    rid = _run_id(r)
    store = RunStore(procs["dirs"]["diverge"])
    run = store.get_run(rid)
    assert run["status"] == "diverged"
    last_good = _diverged_step(run["message"])
    assert "status=diverged" in r.stdout and "lower the learning rates" in r.stdout
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 20})
    schedule = snapshot_steps(20, cfg.snapshots).tolist()
    kept = store.steps(rid)
    assert 0 < last_good < 20
    assert kept == [s for s in schedule if s <= last_good], "the snapshots before the divergence are kept"
    assert len(kept) >= 2
    assert run["last_step"] == kept[-1]
    for s in kept:
        assert np.isfinite(store.snapshot(rid, s)["z"]).all()
    store.close()


def test_diverged_summary_labels_the_last_snapshot(procs):
    """The summary table's right column shows the metrics of the last stored snapshot: its header must
    name that step, not the step at which training blew up."""
    r = procs["res"]["diverge"]
    rid = _run_id(r)
    last = RunStore(procs["dirs"]["diverge"]).get_run(rid)["last_step"]
    [header] = [ln for ln in r.stdout.splitlines() if ln.startswith("metric")]
    assert re.findall(r"step (\d+)", header) == ["0", str(last)], header


def test_the_readmes_divergence_example_is_the_run_tested_to_diverge():
    """docs/explore.md's example of a diverging run is this module's DIVERGE, which test_diverging_run_exits_3
    runs (issue 50: the README's η = 10⁴ did not diverge)."""
    readme = " ".join((ROOT / "docs" / "explore.md").read_text(encoding="utf-8").split())
    assert "python -m scansnap run --preset syn-small " + " ".join(DIVERGE) in readme


def test_lab_hands_its_options_to_streamlit_run_of_the_packaged_server(monkeypatch, tmp_path):
    """``scansnap --data-dir D lab --server.port P`` becomes ``python -m streamlit run <package>/server.py
    --server.port P`` in this process (execv), with SCANSNAP_DATA_DIR=D."""
    import scansnap.cli as cli

    called = []
    monkeypatch.setattr(cli.os, "execv", lambda path, argv: called.append((path, argv)))
    monkeypatch.delenv("SCANSNAP_DATA_DIR", raising=False)
    main(["--data-dir", str(tmp_path), "lab", "--server.port", "8765", "--server.headless=true"])
    ((path, argv),) = called
    server = Path(cli.__file__).with_name("server.py")
    assert server.is_file()
    assert path == sys.executable
    assert argv == [
        sys.executable,
        "-m",
        "streamlit",
        "run",
        str(server),
        "--server.port",
        "8765",
        "--server.headless=true",
    ]
    assert os.environ["SCANSNAP_DATA_DIR"] == str(tmp_path)


def test_options_only_lab_passes_on_are_refused_elsewhere(capsys):
    with pytest.raises(SystemExit) as e:
        main(["presets", "--server.port", "8765"])
    assert e.value.code == 2 and "unrecognized arguments: --server.port 8765" in capsys.readouterr().err
