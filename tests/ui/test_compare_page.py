"""The Compare page's link and its runs: unknown run ids and metrics are said, naming what is allowed
(issue: ``/compare?runs=zzz&metric=foo`` was ignored silently), and real-text runs can be picked and
overlaid (their own metrics, one line per layer), next to synthetic runs only on what both record."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from scansnap.core.metrics import label, metric_names
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.service.runs import TEXT, store_rows
from scansnap.paper.presets import get_preset
from scansnap.service.jobs import get_manager
from scansnap.service.runner import RunJob
from tests.apphelp import open_page, shown_text

PAGE = "app_pages/compare.py"
STEPS = (0, 10, 20)


def entropy(layer: int, step: int) -> float:
    """Made-up stored values: easy to recognise on the chart (a per-head row is 100 off)."""
    return 3.0 - 0.01 * step - 0.5 * layer


def stored_text_run(store, name: str, layers: int) -> str:
    """A real-text run in the store as the text runner writes it (trainer rows through ``store_rows``)."""
    cfg = TextRunConfig.from_dict({"model": {"n_layers": layers}})
    rid = store.create_run(name, cfg.to_json(), "cpu", {}, status="finished", kind=TEXT)
    for step in STEPS:
        rows = [(k, None, "attn_entropy", entropy(k, step)) for k in range(layers)]
        rows += [(k, 0, "attn_entropy", entropy(k, step) + 100) for k in range(layers)]  # head 0: not drawn
        rows += [(None, None, "train_loss", 5.0 - 0.1 * step), (None, None, "val_loss", 6.0 - 0.1 * step)]
        store.append_snapshot(rid, step, {}, store_rows(rows))
    return rid


@pytest.fixture(scope="module")
def runs(data_dir):
    store = get_manager(data_dir).store
    job = RunJob(get_preset("syn-small").config.with_overrides({"optim.steps": 8}), store, name="syn")
    job.run()
    return job.run_id, stored_text_run(store, "text-a", 2), stored_text_run(store, "text-b", 1)


def chart(at: AppTest) -> dict:
    [fig] = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    return fig


def test_unknown_runs_and_metrics_in_the_link_are_said(data_dir, runs):
    synthetic, _, _ = runs
    at = open_page(PAGE, {"runs": f"zzz,{synthetic}", "metric": "foo"})
    assert not at.exception
    warnings = shown_text(at.warning)
    assert "runs: 'zzz' is not a stored run with data (allowed: the ids in the runs box:" in warnings, warnings
    assert synthetic in warnings  # the allowed ids are named
    allowed = ", ".join(metric_names("synthetic"))
    assert f"metric = 'foo' is not recorded by the chosen synthetic runs (allowed: {allowed})" in warnings
    assert at.multiselect(key="cmp.runs").value == [synthetic]  # the known id is kept, the other dropped
    assert at.query_params["runs"] in (synthetic, [synthetic])
    at.run()  # the page's own URL: nothing more to say
    assert not at.warning


def test_real_text_runs_overlay_their_metrics_one_line_per_layer(data_dir, runs):
    _, a, b = runs
    at = open_page(PAGE, {"runs": f"{a},{b}", "metric": "attn_entropy"})
    assert not at.exception and not at.warning
    box = next(s for s in at.selectbox if s.label == "metric")
    assert list(box.options) == [label(n) for n in metric_names("text")]
    at.checkbox(key="cmp.logx").uncheck().run()  # a linear step axis keeps step 0
    fig = chart(at)
    lines = {t["name"]: t for t in fig["data"]}
    # each run named by what differs (the two runs differ in their layers only), in words; a line per layer
    assert sorted(lines) == ["layers = 1 · layer 0", "layers = 2 · layer 0", "layers = 2 · layer 1"]
    for name, trace in lines.items():
        k = int(name[-1])
        assert trace["x"] == list(STEPS)
        np.testing.assert_allclose(trace["y"], [entropy(k, s) for s in STEPS], rtol=1e-4)


def test_synthetic_and_text_runs_overlay_only_what_both_record(data_dir, runs):
    synthetic, a, _ = runs
    at = open_page(PAGE, {"runs": f"{synthetic},{a}", "metric": "attn_entropy"})
    box = next(s for s in at.selectbox if s.label == "metric")
    assert list(box.options) == [label("train_loss")]  # the one metric both kinds record
    assert "not recorded by the chosen synthetic and real text runs (allowed: train_loss)" in shown_text(at.warning)
    assert "share only the mini-batch training loss" in shown_text(at.info)
    # one run of each kind: nothing differs within a kind, so each is its kind and its name
    assert sorted(t["name"] for t in chart(at)["data"]) == ["real text: text-a", "synthetic: syn"]
