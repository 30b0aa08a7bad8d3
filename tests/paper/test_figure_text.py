"""One metric-name → label table: every metric the trainers write has a label, and the reproduce
items' figures show labels in plain Unicode/HTML (no raw LaTeX, no code names)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from scansnap.core.metrics import METRICS, html_label, html_subscripts, is_log, label, metric_names
from scansnap.kinds.synthetic.paper.items import fig4, fig5, fig6, fig9, joma, theorems
from scansnap.kinds.synthetic.paper.items.configs import fig6_config, theorems_applies_config, theorems_long_config
from scansnap.kinds.text.science.config import TextRunConfig
from scansnap.kinds.text.science.data import EncodedCorpus
from scansnap.kinds.text.science.tokenizer import Vocabulary
from scansnap.kinds.text.science.trainer import TextTrainer
from scansnap.paper.presets import get_preset
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.figtext import LATEX, figure_texts, unreadable

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_every_metric_a_synthetic_run_stores_is_registered_with_a_label(tmp_path):
    store = RunStore(tmp_path / "db")
    cfg = get_preset("syn-small").config.with_overrides({"optim.steps": 4})
    job = RunJob(cfg, store)
    job.run()
    stored = set(store.scalars(job.run_id)["metric"])
    store.close()
    assert stored == set(metric_names("synthetic"))  # the trainer's scalars and the runner's Theorem 4 curves
    for name in stored:
        assert label(name) != name and not any(s in label(name) for s in LATEX), name


def test_every_metric_the_text_trainer_writes_is_registered_with_a_label():
    rng = np.random.default_rng(0)
    V = 30
    ids = rng.integers(1, V, size=2000)
    vocab = Vocabulary(tuple(["<unk>", *(f"w{i}" for i in range(1, V))]), np.bincount(ids, minlength=V))
    corpus = EncodedCorpus("tiny", vocab, ids[:1500], ids[1500:])
    over = {"model.d_model": 8, "model.d_ff": 8, "model.device": "cpu", "optim.batch": 2, "optim.bptt": 6}
    over |= {"optim.steps": 2, "probe.eval_batch": 2, "probe.val_windows": 2, "probe.frequent_top_n": 3}
    snaps = list(TextTrainer(TextRunConfig().with_overrides(over), corpus).run())
    written = {name for s in snaps for name in s.scalars}
    assert written == set(metric_names("text"))  # what the text kind declares it records: all of it, no more
    for name in written:
        assert label(name) != name and not any(s in label(name) for s in LATEX), name


def test_losses_are_flagged_log_scaled_and_the_rest_linear():
    assert {n for n in METRICS if is_log(n)} == {"loss", "train_loss", "val_loss", "val_ppl"}
    assert not is_log("entropy_distinct") and not is_log("no-such-metric")


def test_html_labels_turn_subscripts_into_sub_tags():
    assert html_label("entropy_distinct") == "attention entropy H(c<sub>n</sub>) on distinct tokens (nats)"
    assert html_label("bracket_lo") == "Thm 3 lower bracket f<sub>nl₀</sub>(0)² × total growth B̂<sub>n</sub>"
    assert html_subscripts("t′₀ = K ln M/η_Y") == "t′₀ = K ln M/η<sub>Y</sub>"
    assert html_label("unknown_name") == "unknown<sub>name</sub>"  # not registered: the name, subscripted


def _check_item(result) -> None:
    assert result.figures, result.name
    for caption, fig in result.figures:
        texts = figure_texts(json.loads(fig.to_json()))
        assert texts, caption
        assert not unreadable(texts), (result.name, caption, unreadable(texts))
    for v in result.verdicts:  # the verdict tables sit next to the figures
        assert not any(s in t for t in (v.claim, v.statistic, v.threshold) for s in LATEX), v.claim


@pytest.mark.parametrize("item", [fig4, fig5, fig9, joma], ids=lambda m: m.NAME)
def test_reproduce_item_figures_show_no_latex_and_no_code_names(item):
    _check_item(item.run(quick=True))


def test_fig6_figure_shows_no_latex_and_no_code_names(monkeypatch):
    small = {"optim.steps": 3, "replicas.seeds": [1, 2]}  # the layout of Fig. 6, a few steps
    monkeypatch.setattr(fig6, "config", lambda q, quick: fig6_config(q, quick).with_overrides(small))
    _check_item(fig6.run(quick=True))


def test_theorems_figures_show_no_latex_and_no_code_names(monkeypatch):
    short = {"optim.steps": 40, "snapshots.log_count": 8, "snapshots.max_count": 12}  # the §6.9 runs, shortened
    monkeypatch.setattr(theorems, "long_config", lambda lay: theorems_long_config(lay).with_overrides(short))
    monkeypatch.setattr(
        theorems, "applies_config", lambda: theorems_applies_config().with_overrides(short)
    )  # no figure
    result = theorems.run(quick=False)
    assert len(result.figures) == 4  # signs, mean field, regimes, long runs
    _check_item(result)
