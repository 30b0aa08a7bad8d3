"""The Real text page through AppTest: it renders, Start trains a run whose live charts show the
stored numbers, the URL reopens it, bad knobs and over-budget configs block Start with their
message, and the Lab sends a text run's link here.  AppTest never fires run_every timers: the
tests wait for the engine, then rerun the script."""

from __future__ import annotations

import json
import re
from multiprocessing import forkserver

import numpy as np
from streamlit.testing.v1 import AppTest

from scansnap.kinds.text.ui.history import TextHistory
from scansnap.paper.items.costs import about
from scansnap.paper.presets import load_presets
from scansnap.service.facade import get_service
from scansnap.service.jobs import get_manager
from scansnap.service.store import RunStore
from scansnap.ui.chart_style import plain_title
from tests.apphelp import APP, live_figure, open_page
from tests.guards import GUARD_S

PAGE = "kinds/text/ui/page.py"
SMALL = {
    "preset": "text-fig7-1layer",
    "data.vocab_size": "2000",
    "model.d_model": "32",
    "model.d_ff": "32",
    "model.n_layers": "2",
    "optim.batch": "10",
    "optim.steps": "30",
    "probe.val_windows": "2",
    "snapshots.linear_every": "10",
    "snapshots.log_count": "0",
}


def open_text_page(params: dict[str, str] | None = None) -> AppTest:
    """The page opened with these URL parameters (after a first run: its URL path is not its file's name)."""
    return open_page(PAGE, params or {})


def live_figures(at: AppTest) -> dict[str, dict]:
    """The live charts on screen by their title."""
    figs = [live_figure(c) for c in at.get("bidi_component")]
    return {plain_title(f): f for f in figs}


def test_the_page_renders_with_its_controls_and_corpus(data_dir):
    at = open_text_page()
    assert not at.exception
    assert [t.value for t in at.title] == ["Real text"]
    for key in ("text.start", "text.pause", "text.step", "text.stop", "text.reset", "text.seed"):
        assert at.button(key=key) is not None
    assert not at.button(key="text.start").disabled
    captions = " ".join(c.value for c in at.caption)
    assert "World English Bible" in captions and "797,427" in captions  # the built-in corpus, measured
    assert "This run needs" in captions  # the budget estimate before Start
    # the default is the live variant, and the page says how long it takes: the queue's estimate of it
    assert at.session_state["text.preset"] == "text-fig7-1layer-live"
    cfg = load_presets("text")["text-fig7-1layer-live"].config
    seconds = get_service(data_dir).expected_seconds(cfg)
    assert f"Expected time: {about(seconds)} on one training slot (1,500 steps)" in captions
    labels = {w.label for w in at.number_input} | {w.label for w in at.selectbox}
    assert {
        "layers",
        "heads per layer",
        "positional encoding",
        "MLP",
        "sequence length (bptt)",
        "batch (streams)",
        "steps",
        "learning rate: attention",
        "learning rate: MLP",
        "corpus",
        "Preset",
    } <= labels


def test_start_trains_and_the_live_charts_show_the_stored_run(data_dir):
    at = open_text_page(SMALL)
    at.button(key="text.start").click().run()
    assert not at.exception
    rid = at.session_state["text.run"]
    assert get_manager(data_dir).wait(rid, GUARD_S) == "finished", get_manager(data_dir).status(rid).message
    at.run()
    assert not at.exception and at.query_params["run"] == rid
    figs = live_figures(at)
    assert {
        "Attention entropy per layer",
        "Loss and perplexity",
        "layer 0",
        "layer 1",
        "iteration 0",
        "iteration 8",
        "iteration 15",
        "iteration 30",
    } <= set(figs)
    H = figs["Attention entropy per layer"]
    hist = TextHistory(rid)
    hist.update(RunStore(data_dir))
    steps, stored = hist.layer_metric("attn_entropy")
    for k in (0, 1):
        trace = next(t for t in H["data"] if t["name"] == f"layer {k}")
        assert trace["x"] == steps.tolist()
        np.testing.assert_allclose(trace["y"], stored[:, k], rtol=1e-3)  # drawn rounded to 4 digits
    assert H["layout"]["yaxis"]["title"]["text"] == "attention entropy (nats)"  # the registry's label
    words = RunStore(data_dir).statics(rid)["probe_window_tokens"]
    layer0 = figs["layer 0"]["layout"]["yaxis"]
    assert layer0["ticktext"] == [str(w) for w in words[: len(layer0["ticktext"])]]
    text = " ".join(m.value for m in at.markdown)
    # the run finished: each layer's live verdict is decided (measured or not), none says "too early"
    assert "JoMA's sparser-then-denser, read on the curves smoothed over 5 snapshots: layer 0:" in text
    assert "too early" not in text and ("at this budget" in text or "rebounded" in text)
    assert "Step 30: layer 0's attention is" in text and "earlier words" in text  # the story, from the measurements
    assert "Scan & Snap predicts that attention leaves common words" in text  # the groups, with what was measured
    assert re.search(r"Common \(\d+ words\): “[^”]+”, “", text), text  # its words quoted: punctuation reads
    corpus = " ".join(c.value for c in at.caption)
    assert re.search(r"most frequent: “[^”]+” \([\d,]+\), “", corpus), corpus  # the sidebar's corpus, quoted too
    groups = figs["Layer 0: common vs distinct words"]
    assert {t["name"] for t in groups["data"]} >= {"distinct words", "common words"}
    assert any(s.label.startswith("step (scrub") for s in at.select_slider)  # finished: the scrubber is on


def test_a_link_with_the_run_reopens_it_and_the_lab_points_here(data_dir):
    at = open_text_page(SMALL)
    at.button(key="text.start").click().run()
    rid = at.session_state["text.run"]
    get_manager(data_dir).wait(rid, GUARD_S)
    again = open_text_page({"run": rid})
    assert not again.exception and again.session_state["text.run"] == rid
    assert again.session_state["text.cfg"]["optim"]["steps"] == 30  # the run's own config
    lab = AppTest.from_file(APP, default_timeout=GUARD_S)
    lab.query_params["run"] = rid
    lab.run()
    assert any("is a real-text run: open it on the Real text page" in w.value for w in lab.warning)


def test_bad_knobs_and_over_budget_configs_block_start_with_their_message(data_dir, monkeypatch):
    at = open_text_page({**SMALL, "model.n_heads": "3"})  # 32 is not divisible by 3: ignored, said so
    assert any("divisible" in w.value for w in at.warning)
    heads = next(w for w in at.number_input if w.label == "heads per layer")
    heads.set_value(3).run()
    assert any("divisible" in e.value for e in at.error) and at.button(key="text.start").disabled
    forkserver.ensure_running()  # started before the limit: the workers' server copies its environment
    monkeypatch.setenv("SCANSNAP_MAX_RUN_MB", "1")
    at = open_text_page(SMALL)
    assert any("over the limit of 1 MB per run" in e.value for e in at.error)
    assert at.button(key="text.start").disabled


def test_a_viewer_of_someone_elses_live_run_can_start_their_own_as_the_page_says(data_dir):
    """``/text?run=<another browser's run>`` said "Start your own run with ▶ Start" while ▶ Start was
    disabled (issue): a viewer's Start is on, the caption says what it does, and it trains the viewer's
    own run of that config while the owner's run goes on."""
    mgr = get_manager(data_dir)
    owner = open_text_page({**SMALL, "optim.steps": "30000", "speed": "1"})  # 1 step/s: live all along
    owner.button(key="text.start").click().run()
    rid = owner.session_state["text.run"]
    mine = None
    try:
        viewer = open_text_page({"run": rid})  # another browser (AppTest sessions have different owners)
        assert not viewer.exception and mgr.is_live(rid)
        assert viewer.button(key="text.pause").disabled and viewer.button(key="text.stop").disabled
        assert not viewer.button(key="text.start").disabled
        note = " ".join(c.value for c in viewer.caption)
        assert f"Watching run `{rid}`" in note and "▶ Start or ↺ Reset trains your own run of this config" in note
        viewer.button(key="text.start").click().run()
        mine = viewer.session_state["text.run"]
        assert not viewer.error, [e.value for e in viewer.error]
        assert not viewer.exception and mine != rid and viewer.query_params["run"] in (mine, [mine])
        assert mgr.store.get_run(mine)["owner"] == viewer.session_state["owner"]
        assert (
            json.loads(mgr.store.get_run(mine)["config_json"])["model"]
            == json.loads(mgr.store.get_run(rid)["config_json"])["model"]
        )
        assert mgr.is_live(rid)  # the owner's run goes on
    finally:
        for run in (rid, mine):
            if run:
                mgr.stop(run)
                mgr.wait(run, GUARD_S)
