"""The one sentence under a sweep's or a grid's results says what the numbers show, whichever way they go
(scansnap/paper/findings.py): a value that rises, falls or stays flat along each axis (flat: within 5 % of
the largest value or two standard errors over seeds), a categorical axis by its highest and lowest value."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from scansnap.paper.findings import (
    REL_TOL,
    SWEEP_AXES,
    GridAxis,
    fmt,
    grid_finding,
    sweep_finding,
    tolerance,
    trend,
)

ETA_Z, RATIOS, SEEDS = (0.5, 1.0, 2.0, 4.0), (1.0, 2.0, 5.0), (1, 2, 3)


def sweep(value, noise: float = 0.0) -> pd.DataFrame:
    """A sweep's per-replica table: ``value(eta_z, ratio)`` at every cell and seed (± ``noise`` by seed)."""
    rows = [
        (ez, r, value(ez, r) + noise * (s - 2)) for ez, r, s in itertools.product(ETA_Z, RATIOS, SEEDS)
    ]  # seeds −1, 0, +1 × noise: their mean is the cell's value
    return pd.DataFrame(rows, columns=["eta_z", "ratio", "value"])


def ends(value, axis: str) -> tuple[str, str]:
    """The first and last values along an axis, averaged over the other (what the sentence quotes)."""
    if axis == "eta_z":
        return fmt(np.mean([value(ETA_Z[0], r) for r in RATIOS])), fmt(np.mean([value(ETA_Z[-1], r) for r in RATIOS]))
    return fmt(np.mean([value(ez, RATIOS[0]) for ez in ETA_Z])), fmt(np.mean([value(ez, RATIOS[-1]) for ez in ETA_Z]))


@pytest.mark.parametrize(
    ("values", "expected"),
    [([1, 2, 3], "rises"), ([3, 2, 1], "falls"), ([1, 1.01, 0.99], "flat"), ([1, 3, 1], "mixed"), ([2], "flat")],
)
def test_trend_along_one_axis(values, expected):
    assert trend(values, tol=0.05) == expected


def test_a_small_wobble_within_the_tolerance_keeps_a_rise():
    assert trend([1.0, 2.0, 1.99, 3.0], tol=0.05) == "rises"  # the 0.01 dip is within the tolerance
    assert trend([1.0, 2.0, 1.5, 3.0], tol=0.05) == "mixed"


def test_a_value_falling_with_eta_z_and_flat_in_the_ratio_says_so():
    def value(ez, r):
        return 2.5 - 0.5 * ez

    first, last = ends(value, "eta_z")
    said = sweep_finding(sweep(value), "attention entropy", "nats")
    assert (
        said
        == f"Final attention entropy falls as η_Z grows (from {first} to {last} nats) and barely depends on η_Y/η_Z."
    )


def test_a_value_rising_with_the_ratio_comes_first_when_it_spreads_more():
    def value(ez, r):
        return 1.0 + 0.3 * r + 0.02 * ez  # ratio: a spread of 1.2; η_Z: 0.07, under 5 % of the largest value

    first, last = ends(value, "ratio")
    said = sweep_finding(sweep(value), "attention entropy", "nats")
    assert said.startswith(f"Final attention entropy rises as η_Y/η_Z grows (from {first} to {last} nats)")
    assert said.endswith("and barely depends on η_Z.")


def test_a_flat_grid_says_it_barely_depends_on_either_axis():
    said = sweep_finding(sweep(lambda ez, r: 1.0 + 0.001 * ez), "attention on common tokens")
    assert said.startswith("Final attention on common tokens barely depends on η_Z or η_Y/η_Z: it stays")


def test_seeds_that_scatter_more_than_a_trend_make_it_no_trend():
    def value(ez, r):
        return 2.0 + 0.2 * ez  # a rise of 0.2 × (4 − 0.5) = 0.7 over the grid: a quarter of the largest value

    assert "rises as η_Z grows" in sweep_finding(sweep(value), "x")
    noisy = sweep(value, noise=2.0)  # seeds −2, 0, +2 around each cell: standard deviation 2, error 2/√3
    cell_sem = noisy.groupby(["eta_z", "ratio"])["value"].sem().median()
    assert tolerance(np.array([3.0]), np.array([cell_sem])) > 0.7  # two standard errors exceed the whole rise
    assert sweep_finding(noisy, "x").startswith("Final x barely depends on η_Z or η_Y/η_Z")


def test_a_rise_in_some_cells_and_a_fall_in_others_is_said_as_such():
    def value(ez, r):
        return 2.0 + (ez if r > 1.5 else -ez)  # rises with η_Z at the larger ratios, falls at the smallest

    said = sweep_finding(sweep(value), "x")
    assert "rises with η_Z in some cells of the grid and falls in others" in said


def test_a_peak_is_not_a_trend():
    said = sweep_finding(sweep(lambda ez, r: 3.0 - (np.log2(ez) - 0.5) ** 2), "x", "nats")
    assert "changes with η_Z, not steadily (highest at η_Z = " in said


def test_a_categorical_axis_is_said_by_its_highest_and_lowest_value():
    means = {"none": 2.0, "sinusoidal": 1.0, "learned": 1.5}
    rows = [(pe, layers, means[pe] - 0.5 * layers) for pe in means for layers in (1, 2, 3)]
    table = pd.DataFrame(rows, columns=["model.positional", "model.n_layers", "v"])
    axes = [GridAxis("model.positional", "positional encoding"), GridAxis("model.n_layers", "layers")]
    said = grid_finding(table, axes, "v", "attention entropy, layer 0", "nats")
    by_pe = table.groupby("model.positional")["v"].mean()
    by_layers = table.groupby("model.n_layers")["v"].mean()
    assert f"falls as layers grows (from {fmt(by_layers[1])} to {fmt(by_layers[3])} nats)" in said
    assert (
        f"depends on positional encoding (highest at positional encoding = none: {fmt(by_pe['none'])} nats; "
        f"lowest at sinusoidal: {fmt(by_pe['sinusoidal'])} nats)"
    ) in said


def test_numeric_axis_values_are_ordered_as_numbers_not_text():
    table = pd.DataFrame({"k": ["5", "10", "20"], "v": [1.0, 2.0, 3.0]})  # "10" < "5" as text
    assert "rises as K grows (from 1 to 3)" in grid_finding(table, [GridAxis("k", "K")], "v", "x")


def test_too_few_cells_or_values_say_nothing():
    table = pd.DataFrame({"k": [1, 2], "v": [1.0, np.nan]})
    assert grid_finding(table, [GridAxis("k", "K")], "v", "x") is None
    assert grid_finding(table.iloc[:0], [GridAxis("k", "K")], "v", "x") is None
    assert grid_finding(pd.DataFrame({"v": [1.0, 2.0]}), [], "v", "x") is None


def test_the_tolerance_is_a_share_of_the_largest_value():
    assert tolerance(np.array([-4.0, 2.0])) == pytest.approx(REL_TOL * 4.0)
    assert SWEEP_AXES[0].column == "eta_z" and SWEEP_AXES[1].column == "ratio"


def test_axis_values_that_are_lists_or_missing_columns_never_break_the_sentence():
    table = pd.DataFrame({"seeds": [[1], [2], [1], [2]], "k": [1, 1, 2, 2], "v": [1.0, 1.0, 3.0, 3.0]})
    said = grid_finding(table, [GridAxis("k", "K"), GridAxis("seeds", "seeds")], "v", "x")
    assert said == "Final x rises as K grows (from 1 to 3) and barely depends on seeds."
    assert grid_finding(table, [GridAxis("nope", "N")], "v", "x") is None
    assert grid_finding(table, [GridAxis("k", "K")], "nope", "x") is None
