"""Compare, Sweep, Theory and the per-run report show registered labels (never code names or raw
LaTeX); log-scaled metrics get a log axis; the report draws the T→∞ mean-field twin exactly when
its chart titles say so."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from scansnap.core.metrics import html_label, label, metric_names
from scansnap.kinds.synthetic.ui.exports import MF_NOTE, html_report, run_figures
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from scansnap.ui import charts_pages
from scansnap.ui.chart_style import plain_title
from tests.apphelp import run_app
from tests.figtext import figure_texts, unreadable

MF_NAME = "mean-field (T→∞)"  # the twin's legend entry (scansnap.kinds.synthetic.ui.token_lines)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _series() -> list[tuple[str, np.ndarray, np.ndarray]]:
    steps = np.arange(0, 101, dtype=float)
    return [("run a", steps, np.exp(-steps / 10)), ("run b", steps, np.where(steps < 50, np.exp(-steps / 5), 0.0))]


def test_compare_draws_a_loss_on_a_log_axis_with_its_label():
    fig = charts_pages.overlay(_series(), "loss", logx=False).to_plotly_json()
    y = fig["layout"]["yaxis"]
    assert y["type"] == "log" and y["title"]["text"] == "population loss (T→∞, nats) (log)"
    assert all(v > 0 for t in fig["data"] for v in t["y"])  # a 0 (or NaN) has no place on a log axis
    assert len(fig["data"][1]["y"]) == 50 and len(fig["data"][0]["y"]) == 101
    assert not unreadable(figure_texts(fig))


def test_compare_draws_a_bounded_metric_linear_with_its_label():
    fig = charts_pages.overlay(_series(), "entropy_distinct", logx=True).to_plotly_json()
    assert fig["layout"]["yaxis"].get("type") in (None, "linear")
    assert fig["layout"]["xaxis"]["type"] == "log"
    assert fig["layout"]["yaxis"]["title"]["text"] == html_label("entropy_distinct")
    assert not unreadable(figure_texts(fig))


_PLOTLY_ENTITY = re.compile(r"&(#\d+|#x[\da-fA-F]+|[a-z]+);")
_PLOTLY_NAMED = {"mu": "μ", "amp": "&", "lt": "<", "gt": ">", "nbsp": "\xa0", "times": "×", "plusmn": "±", "deg": "°"}


def _plotly_shows(name: str) -> str:
    """What plotly.js draws for a trace name (svg_text_utils.convertToTspans): it splits the name at its
    tags (none may be left here but the legend's ``<br>``) and decodes only its own entities (``&quot;``
    is not one: it is drawn as it is)."""
    lines = name.split("<br>")
    assert not any(c in line for line in lines for c in "<>"), name  # no tag plotly would draw (<b>, <a>)

    def decode(m: re.Match) -> str:
        e = m.group(1)
        code = int(e[2:], 16) if e.startswith("#x") else int(e[1:]) if e.startswith("#") else None
        return chr(code) if code is not None else _PLOTLY_NAMED.get(e, m.group(0))

    return " ".join(_PLOTLY_ENTITY.sub(decode, line) for line in lines)


@pytest.mark.parametrize(
    "name", ['a "quoted" run', "<b>x</b>", "run_1", "it's a & b &amp; &mu; &quot; <br> done", "a<sub>n</sub> > 0"]
)
def test_compare_legend_shows_a_run_name_as_typed(name):
    """A run's name is text: the legend draws it as typed (quotes as quotes, never ``&quot;``), and a
    tag or an entity in it is drawn as typed too, never as formatting (``<b>x</b>`` is not bold)."""
    steps = np.arange(0, 11, dtype=float)
    fig = charts_pages.overlay([(name, steps, steps + 1), ("other", steps, steps + 2)], "loss", logx=False)
    trace = fig.to_plotly_json()["data"][0]["name"]
    assert "&quot;" not in trace and _plotly_shows(trace) == name


def _summary() -> pd.DataFrame:
    rows = [(ez, r, ez * r, 0.5 + 0.1 * r, 0.01) for ez in (0.5, 1.0) for r in (1.0, 2.0, 5.0)]
    return pd.DataFrame(rows, columns=["eta_z", "ratio", "eta_y", "mean", "sem"])


@pytest.mark.parametrize("metric", ["entropy_distinct", "loss"])
def test_sweep_charts_show_labels_and_log_scale_a_loss(metric):
    lines = charts_pages.sweep_lines(_summary(), metric).to_plotly_json()
    heat = charts_pages.sweep_heatmap(_summary(), metric).to_plotly_json()
    assert (lines["layout"]["yaxis"].get("type") == "log") == (metric == "loss")
    assert html_label(metric) in lines["layout"]["yaxis"]["title"]["text"]
    assert heat["data"][0]["marker"]["colorbar"]["title"]["text"] == html_label(metric)
    assert not unreadable(figure_texts(lines) + figure_texts(heat))


def test_theory_page_charts_are_readable():
    t = np.geomspace(1e-2, 1e4, 50)
    th = {"t": t, "B_n": np.log1p(t), "B_scan": np.log1p(t), "B_snap": np.log1p(t), "t0_prime": 5.0, "t0": 10.0}
    sim = {"iteration": np.arange(10), "entropy": np.linspace(2, 1, 10)}
    for mode in charts_pages.AXES:
        assert not unreadable(figure_texts(charts_pages.theorem4(th, mode, 100.0, 1.0, 1.0)))
    assert not unreadable(figure_texts(charts_pages.joma(sim, sim)))


def _stored_run(tmp_path, preset: str, steps: int) -> tuple[RunStore, str]:
    store = RunStore(tmp_path / preset)
    job = RunJob(get_preset(preset).config.with_overrides({"optim.steps": steps}), store, name=preset)
    job.run()
    return store, job.run_id


def _token_charts(figs: list) -> dict[str, dict]:
    return {cap: fig for cap, fig in figs if cap in ("c_n over time", "z_m over time")}


def test_run_report_draws_the_mean_field_twin_its_titles_promise(tmp_path):
    store, rid = _stored_run(tmp_path, "syn-small", 12)
    assert store.statics(rid)["mf_steps"].max() == 12  # the runner stored the twin
    store.truncate_after(rid, 6, status="stopped")  # a run stopped at step 6: its twin still goes to 12
    figs = run_figures(store, rid)
    tokens = _token_charts(figs)
    assert len(tokens) == 2
    for fig in tokens.values():
        twin = [t for t in fig["data"] if t.get("name") == MF_NAME]
        assert twin and all(t["line"]["dash"] for t in twin)
        assert max(x for t in twin for x in t["x"] if x is not None) <= 6  # clipped to the run's last step
        assert plain_title(fig).endswith(MF_NOTE)
    assert not unreadable([s for _, f in figs for s in figure_texts(f)])
    page = html_report(store, rid)
    assert "T→∞ mean-field twin" in page and page.count(json.dumps(MF_NAME)) >= 2  # as plotly embeds it
    store.close()


def test_run_report_of_a_mean_field_run_promises_no_twin(tmp_path):
    store, rid = _stored_run(tmp_path, "theorem4", 6)  # the run is the T→∞ mean field: no twin
    assert "mf_steps" not in store.statics(rid)
    tokens = _token_charts(run_figures(store, rid))
    assert len(tokens) == 2
    for fig in tokens.values():
        assert not [t for t in fig["data"] if t.get("name") == MF_NAME]
        assert "mean field" not in fig["layout"]["title"]["text"]
    assert "trains the T→∞ mean field itself" in html_report(store, rid)
    store.close()


def test_compare_page_offers_labels_and_draws_loss_on_a_log_axis(data_dir):
    store = RunStore(data_dir)
    for name in ("syn-small", "syn-small-fast-decoder"):
        RunJob(get_preset(name).config.with_overrides({"optim.steps": 8}), store, name=name).run()
    at = run_app()
    at.switch_page("app_pages/compare.py").run()
    box = next(s for s in at.selectbox if s.label == "metric")
    assert list(box.options) == [label(n) for n in metric_names("synthetic")]  # shown as labels, kept as names
    box.set_value("loss").run()
    assert not at.exception
    fig = json.loads(at.get("plotly_chart")[0].proto.spec)
    assert fig["layout"]["yaxis"]["type"] == "log" and len(fig["data"]) == 2
    assert sorted(t["name"] for t in fig["data"]) == ["η_Y = 1", "η_Y = 10"]  # what differs, in knob symbols
    assert not unreadable(figure_texts(fig))
