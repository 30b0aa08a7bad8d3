"""``python -m scansnap sweep`` (scansnap/cli_sweep.py, scansnap/service/grid.py): grids over any config
keys × seeds, each cell a stored run with the numbers of the same config trained alone, a summary
table and page; a synthetic rate grid batched as the replicas of one run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from scansnap.cli import EXIT_BAD_INPUT, main
from scansnap.core.config import ConfigError
from scansnap.paper.presets import get_preset
from scansnap.service import grid
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.service.test_run_rows import TEXT_SMALL  # a small text model, seconds to train

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_axes_and_seeds_parse_as_hydra_writes_them():
    assert grid.parse_axis("optim.eta_y=0.1, 1,10") == grid.Axis("optim.eta_y", ("0.1", "1", "10"))
    assert grid.parse_seeds("1-3") == (1, 2, 3) and grid.parse_seeds("1,5,9") == (1, 5, 9)
    for bad in ("eta_y=1,2", "optim.eta_y", "optim.eta_y=1,,2", "optim.eta_y=1,1"):
        with pytest.raises(ConfigError, match="--grid"):
            grid.parse_axis(bad)
    for bad in ("", "a", "3-1", "1,1", "-2"):
        with pytest.raises(ConfigError, match="--seeds"):
            grid.parse_seeds(bad)


def test_cells_are_the_product_first_axis_slowest_then_seeds():
    axes = [grid.parse_axis("model.n_layers=1,2"), grid.parse_axis("model.positional=none,learned")]
    cells = grid.cells(axes, (1, 2))
    assert len(cells) == 8
    assert [(c.values["model.n_layers"], c.values["model.positional"], c.seed) for c in cells[:3]] == [
        ("1", "none", 1),
        ("1", "none", 2),
        ("1", "learned", 1),
    ]
    text = get_preset("text-fig7-1layer-live", "text").config
    cfg = grid.cell_config(text, cells[-1])
    assert (cfg.model.n_layers, cfg.model.positional, cfg.optim.seed) == (2, "learned", 2)
    syn = get_preset("syn-small").config
    assert grid.cell_config(syn, grid.Cell({"optim.batch": "64"}, 7)).replicas.seeds == (7,)
    with pytest.raises(ConfigError, match="names a key twice"):
        grid.cells([axes[0], axes[0]], (1,))


def test_a_synthetic_rate_grid_is_one_run_of_replicas_and_any_other_grid_is_not():
    syn = get_preset("syn-small").config
    rates = grid.cells([grid.parse_axis("optim.eta_y=1,10")], (1, 2))
    batched = grid.as_replicas(syn, rates)
    assert batched.replicas.lr_pairs == ((1.0, 1.0), (10.0, 1.0)) and batched.replicas.seeds == (1, 2)
    assert grid.as_replicas(syn, grid.cells([grid.parse_axis("optim.batch=32,64")], (1,))) is None
    text = get_preset("text-fig7-1layer-live", "text").config
    assert grid.as_replicas(text, grid.cells([grid.parse_axis("optim.lr_attention=1,5")], (1,))) is None


def test_final_metrics_take_the_last_step_averaged_over_classes_and_name_text_layers():
    syn = pd.DataFrame(
        {
            "step": [0, 9, 9, 9],
            "replica": [0, 0, 0, 1],
            "n": [0, 0, 1, 0],
            "metric": ["loss"] * 4,
            "value": [5.0, 1.0, 3.0, 7.0],
        }
    )
    out = grid.final_metrics(syn)
    assert out.set_index("replica")["loss"].to_dict() == {0: 2.0, 1: 7.0}
    text = pd.DataFrame(
        {
            "step": [4, 4, 4, 4],
            "layer": pd.array([0, 1, None, 0], dtype="Int64"),
            "head": pd.array([None, None, None, 0], dtype="Int64"),
            "metric": ["attn_entropy", "attn_entropy", "val_loss", "attn_entropy"],
            "value": [1.0, 2.0, 3.0, 9.0],
        }
    )
    row = grid.final_metrics(text).iloc[0].to_dict()
    assert row == {"attn_entropy@L0": 1.0, "attn_entropy@L1": 2.0, "val_loss": 3.0, "replica": 0}


def _sets(sets: dict[str, object]) -> list[str]:
    return [x for k, v in sets.items() for x in ("--set", f"{k}={v}")]


def test_a_text_grid_stores_each_cell_as_the_same_config_trained_alone(tmp_path, capsys):
    """2 positional encodings × 2 seeds on 2 workers: four stored runs, each the cell's config, whose
    final numbers equal those of that config trained alone in this process (one thread: bit for bit)."""
    data, out = tmp_path / "data", tmp_path / "sweep"
    argv = [
        "--data-dir",
        str(data),
        "sweep",
        "--preset",
        "text-seq-32-live",
        *_sets(TEXT_SMALL),
        "--grid",
        "model.positional=none,learned",
        "--seeds",
        "1-2",
        "--jobs",
        "2",
        "--out",
        str(out),
    ]
    assert main(argv) == 0
    summary = pd.read_parquet(out / "summary.parquet")
    assert len(summary) == 4 and set(summary["status"]) == {"finished"} and summary["run"].nunique() == 4
    assert {"attn_entropy@L0", "val_loss", "attn_share_distinct@L0"} <= set(summary.columns)
    assert (out / "summary.html").read_text().count("<table") == 1 and (out / "summary.csv").exists()
    cell = summary[(summary["model.positional"] == "learned") & (summary["seed"] == 2)].iloc[0]
    cfg = get_preset("text-seq-32-live", "text").config.with_overrides(
        {**TEXT_SMALL, "model.positional": "learned", "optim.seed": 2}
    )
    store = RunStore(data)
    try:
        stored = type(cfg).from_json(store.get_run(cell["run"])["config_json"])
        assert stored.model_dump(exclude={"name"}) == cfg.model_dump(exclude={"name"})
        alone = RunJob(cfg, store, name="alone")
        assert alone.run() == "finished"
        finals = grid.final_metrics(store.scalars(alone.run_id)).iloc[0]
        for metric in ("attn_entropy@L0", "val_loss"):
            assert cell[metric] == finals[metric], metric
    finally:
        store.close()
    assert "4 cells in" in capsys.readouterr().out


def test_a_synthetic_rate_grid_trains_once_and_each_cell_reads_its_replica(tmp_path):
    data = tmp_path / "data"
    common = [
        "--data-dir",
        str(data),
        "sweep",
        "--preset",
        "syn-small",
        "--set",
        "optim.steps=20",
        "--grid",
        "optim.eta_y=1,10",
        "--seeds",
        "1-2",
        "--quiet",
    ]
    assert main([*common, "--out", str(tmp_path / "batched")]) == 0
    batched = pd.read_parquet(tmp_path / "batched" / "summary.parquet")
    assert batched["run"].nunique() == 1 and sorted(batched["replica"]) == [0, 1, 2, 3]
    # a non-rate axis: one run per cell; each cell's numbers are its replica's in the batched run
    assert main([*common, "--grid", "optim.batch=128", "--out", str(tmp_path / "cells")]) == 0
    cells = pd.read_parquet(tmp_path / "cells" / "summary.parquet")
    assert cells["run"].nunique() == 4
    store = RunStore(data)
    try:
        st = store.statics(batched["run"].iloc[0])
        for _, row in batched.iterrows():
            r = int(row["replica"])
            assert (st["eta_y"][r], st["seed"][r]) == (float(row["optim.eta_y"]), row["seed"])
            alone = cells[(cells["optim.eta_y"] == row["optim.eta_y"]) & (cells["seed"] == row["seed"])].iloc[0]
            np.testing.assert_allclose(alone["loss"], row["loss"], rtol=1e-5)  # batched replicas train as alone
    finally:
        store.close()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--preset", "nope", "--grid", "optim.eta_y=1,2"], "unknown preset 'nope'; available: "),
        (["--preset", "syn-small", "--grid", "optim.eta_y"], "expected KEY=V1,V2"),
        (["--preset", "syn-small", "--grid", "optim.eta_y=1,2", "--seeds", "x"], "--seeds 'x'"),
        (["--preset", "syn-small", "--grid", "optim.nope=1,2"], "optim.nope"),
        (["--preset", "syn-small", "--grid", "optim.eta_y=1,2", "--cluster", "http://x"], "is not a Ray address"),
        (["--preset", "syn-small", "--grid", "optim.eta_y=1,2", "--cluster", "ray://h"], "ray://HOST:10001"),
    ],
)
def test_bad_grids_exit_2_with_one_line(tmp_path, capsys, argv, message):
    code = main(["--data-dir", str(tmp_path), "sweep", *argv, "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == EXIT_BAD_INPUT and message in err and err.count("\n") == 1, err
    assert RunStore(tmp_path).list_runs() == []  # nothing stored


def test_a_grid_with_one_cell_over_the_limits_stores_no_run(tmp_path, capsys, monkeypatch):
    from scansnap.kinds.synthetic.service.budget import estimate

    base = get_preset("syn-small").config
    works = [estimate(base.with_overrides({"optim.steps": n})).work for n in (20, 200)]
    monkeypatch.setenv("SCANSNAP_MAX_RUN_WORK", str((works[0] * works[1]) ** 0.5))  # the second cell is over
    argv = [
        "--data-dir",
        str(tmp_path),
        "sweep",
        "--preset",
        "syn-small",
        "--grid",
        "optim.steps=20,200",
        "--out",
        str(tmp_path / "o"),
    ]
    assert main(argv) == EXIT_BAD_INPUT
    assert "SCANSNAP_MAX_RUN_WORK" in capsys.readouterr().err
    store = RunStore(tmp_path)
    try:
        assert store.list_runs(10) == []
    finally:
        store.close()


def test_a_grid_too_large_is_refused_before_its_cells_are_built(monkeypatch):
    """10⁹ cells are counted, not built (building them would take minutes and gigabytes)."""
    built = []
    monkeypatch.setattr(grid, "Cell", lambda *a: built.append(a))
    axes = [grid.Axis(f"optim.k{i}", tuple(str(v) for v in range(10))) for i in range(grid.MAX_AXES)]
    with pytest.raises(ConfigError, match=r"the grid has 1,000,000,000 cells: at most 1,000"):
        grid.cells(axes, tuple(range(10)))
    assert built == []


def test_a_grid_over_the_axes_cap_says_the_cap_first():
    """Nine axes of fine, distinct keys (one cell): the message says how many axes are allowed and how
    many were given, and does not blame the keys."""
    axes = [grid.parse_axis(f"optim.k{i}=1") for i in range(grid.MAX_AXES + 1)]
    with pytest.raises(ConfigError) as e:
        grid.cells(axes, (1,))
    assert str(e.value).startswith(f"the grid has {grid.MAX_AXES + 1} axes: at most {grid.MAX_AXES} are allowed")
    assert "key" not in str(e.value).split(";")[0]
    twice = [*axes[:-1], axes[0]]  # the cap first, before a key named twice
    with pytest.raises(ConfigError, match=rf"^the grid has {grid.MAX_AXES + 1} axes"):
        grid.cells(twice, (1,))
    assert len(grid.cells(axes[: grid.MAX_AXES], (1,))) == 1  # eight are fine


def test_the_cli_says_the_axes_cap(tmp_path, capsys):
    argv = ["--data-dir", str(tmp_path), "sweep", "--preset", "syn-small", "--out", str(tmp_path / "o")]
    for i in range(grid.MAX_AXES + 1):
        argv += ["--grid", f"optim.k{i}=1"]
    assert main(argv) == EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert f"the grid has {grid.MAX_AXES + 1} axes: at most {grid.MAX_AXES} are allowed" in err, err
    assert RunStore(tmp_path).list_runs() == []
