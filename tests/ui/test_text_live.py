"""The Real text page's live charts (scansnap/kinds/text/ui/live.py): every chart of one tick shows the same step."""

from __future__ import annotations

import json
import logging
from types import SimpleNamespace

import pytest

from scansnap.kinds.text.ui import live as text_live
from scansnap.service.runner import RunJob
from scansnap.service.store import RunStore
from tests.service.test_text_runs import small_cfg

logging.getLogger("streamlit").setLevel(logging.ERROR)  # "no runtime" warnings of the caches
pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def text_run(tmp_path_factory):
    """A small real-text run (40 steps, a snapshot every 5), stored."""
    store = RunStore(tmp_path_factory.mktemp("text-one-step"))
    job = RunJob(small_cfg(), store, name="one-step")
    assert job.run() == "finished"
    yield store, job.run_id
    store.close()


def test_the_line_charts_end_at_the_step_the_tick_read(text_run, monkeypatch):
    """A tick reads the run's last step once (``last``) and draws the attention maps at it; a snapshot the
    worker stored after that read waits for the next tick.  The entropy, groups and loss charts end at
    ``last`` too: they were read again from the store and went one snapshot further than the maps."""
    store, rid = text_run
    last = store.steps(rid)[-2]  # the page read this; the worker has stored one snapshot more since
    monkeypatch.setattr(text_live, "service", lambda: SimpleNamespace(stored=store))
    view = text_live._charts(rid, last, 15, None, False)
    assert [k for k, _, _ in view.charts_with_sizes] == ["H", "groups", "loss"]
    assert view.story.startswith(f"Step {last}: ")
    for key, payload, _ in view.charts_with_sizes:
        traces = [t for t in json.loads(payload)["fig"]["data"] if t.get("x")]
        ends = [max(x for x in t["x"] if x is not None) for t in traces]
        assert ends and max(ends) == last, (key, ends)
