"""The Sweep page's results in words (scansnap/ui/result_words.py): a grid's metric columns by their registered labels
and units, compact learning-rate ticks that never crowd a log axis, and the time a grid still trains from
its runs' estimates and progress."""

from __future__ import annotations

import itertools
import math

import pytest

from scansnap.core.metrics import METRICS, bare_label, label, unit
from scansnap.paper.items.costs import about
from scansnap.ui.charts_pages import MAX_X_TICKS, MAX_Y_TICKS, grid_chart, sweep_heatmap
from scansnap.ui.result_words import (
    RunProgress,
    column_label,
    grid_left_s,
    log_ticks,
    progress_text,
    run_left_s,
    split_column,
    summary_labels,
    tick_text,
)
from tests.figtext import CODE_NAMES


def test_a_per_layer_column_reads_as_its_label_the_layer_and_the_unit():
    assert split_column("attn_entropy@L2") == ("attn_entropy", 2)
    assert column_label("attn_entropy@L0") == f"{bare_label('attn_entropy')}, layer 0 ({unit('attn_entropy')})"
    assert column_label("attn_entropy@L0") == "attention entropy, layer 0 (nats)"
    assert column_label("val_ppl") == label("val_ppl") == "validation perplexity"
    assert column_label("not_a_metric") == "not_a_metric"  # nothing invented for an unknown column


def test_every_metric_keeps_its_label_and_unit():
    for name in METRICS:
        assert column_label(name) == label(name)  # the unit put back where the label had it
        assert column_label(f"{name}@L1").endswith(f" ({unit(name)})" if unit(name) else "layer 1")


def test_a_summary_reads_in_words():
    cols = ["model.n_layers", "seed", "run", "status", "attn_entropy@L0", "val_ppl"]
    words = summary_labels(cols, ["model.n_layers"], "text")
    assert words["model.n_layers"] == "layers" and words["val_ppl"] == "validation perplexity"
    assert not any(c in w for w in words.values() for c in CODE_NAMES)


@pytest.mark.parametrize(
    ("v", "text"),
    [
        (0.5, "0.5"),
        (1.0, "1"),
        (2.0, "2"),
        (12.5, "12.5"),
        (100.0, "100"),
        (1000.0, "1e3"),
        (2500.0, "2.5e3"),
        (0.001, "1e-3"),
        (0.05, "0.05"),
    ],
)
def test_learning_rate_ticks_are_compact(v, text):
    assert tick_text(v) == text and math.isclose(float(text), v)  # short, and still the number


def test_log_ticks_keep_the_ends_and_space_the_rest():
    values = [0.5, 0.6, 1, 1.2, 2, 2.5, 3, 5, 6, 10, 12, 20, 25, 50, 100]  # η_Y = ratio × η_Z: clustered
    ticks = log_ticks(values, 6)
    assert ticks[0] == 0.5 and ticks[-1] == 100 and len(ticks) <= 6
    gaps = [math.log10(b / a) for a, b in itertools.pairwise(ticks)]
    assert min(gaps) >= math.log10(100 / 0.5) / 5 - 1e-9  # no two closer than a fifth of the axis
    assert log_ticks([1, 2, 4], 8) == [1, 2, 4]  # few, well apart: all kept
    assert log_ticks([1, 1.01], 8) == [1, 1.01]  # two: the axis spans them, both kept


def test_the_heatmap_never_shows_more_ticks_than_it_has_room_for():
    import pandas as pd

    rows = [(ez, r, ez * r, ez + r, 0.0) for ez in (0.1, 0.2, 0.5, 1, 2, 3, 5, 10) for r in (1, 2, 5, 10, 20)]
    summary = pd.DataFrame(rows, columns=["eta_z", "ratio", "eta_y", "mean", "sem"])
    fig = sweep_heatmap(summary).to_plotly_json()["layout"]
    assert len(fig["xaxis"]["tickvals"]) <= MAX_X_TICKS and len(fig["yaxis"]["tickvals"]) <= MAX_Y_TICKS
    assert fig["yaxis"]["ticktext"] == [tick_text(v) for v in fig["yaxis"]["tickvals"]]


def test_a_grid_chart_names_its_axes_and_legend_in_words():
    import pandas as pd

    rows = [(pe, k, 1, 2.0 - k) for pe in ("none", "learned") for k in (1, 2)]
    summary = pd.DataFrame(rows, columns=["model.positional", "model.n_layers", "seed", "attn_entropy@L0"])
    fig = grid_chart(summary, ["model.n_layers", "model.positional"], "attn_entropy@L0", kind="text").to_plotly_json()
    assert fig["layout"]["xaxis"]["title"]["text"] == "layers"
    assert fig["layout"]["yaxis"]["title"]["text"] == "attention entropy, layer 0 (nats)"
    assert {t["name"] for t in fig["data"]} == {"positional encoding = none", "positional encoding = learned"}


def test_time_left_of_one_run():
    assert run_left_s(RunProgress(True, None, 100.0, 0.3)) == 0.0  # ended
    assert run_left_s(RunProgress(False, 12.0, 100.0, 0.3)) == 12.0  # its job's own figure
    assert run_left_s(RunProgress(False, None, 100.0, 0.25)) == pytest.approx(100.0 * (1 - 0.25))
    assert run_left_s(RunProgress(False, None, None, 0.0)) is None


def test_time_left_of_a_grid_fills_the_slots_in_order():
    running = [RunProgress(False, 30.0, 60.0, 0.5), RunProgress(False, 10.0, 60.0, 0.8)]
    queued = [RunProgress(False, None, 60.0, 0.0), RunProgress(False, None, 60.0, 0.0)]
    ended = [RunProgress(True, None, 60.0, 1.0)]
    runs = ended + queued + running  # the ones training now take the slots first, whatever the order given
    # two slots: 30 | 10 → the first queued run goes after the 10 (ends at 70), the second after the 30 (at 90)
    assert grid_left_s(runs, 2) == pytest.approx(max(30.0 + 60.0, 10.0 + 60.0))
    assert grid_left_s(runs, 1) == pytest.approx(30.0 + 10.0 + 60.0 + 60.0)  # one slot: one after another
    assert grid_left_s(runs, 10) == pytest.approx(60.0)  # a slot each: the longest
    assert grid_left_s([*runs, RunProgress(False, None, None, 0.0)], 2) is None


def test_the_progress_text_says_runs_ended_and_time_left():
    runs = [RunProgress(True, None, 60.0, 1.0), RunProgress(False, None, 300.0, 0.0)]
    assert progress_text(runs, 1) == f"1 of 2 runs ended · {about(300.0)} left"
    assert progress_text(runs[:1], 1) == "1 of 1 runs ended"
    assert progress_text([RunProgress(False, None, None, 0.0)], 1) == "0 of 1 runs ended · time left unknown"
