"""Safe under any input (AppTest): links that ask for absurd sizes, widget maxima, run names that
look like Markdown, a damaged run store, a delete that the disk refuses, operator-key guessing."""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from scansnap.kinds.synthetic.science.config import MAX_SEEDS, MAX_TABLE_CELLS, MAX_VOCAB, RunConfig
from scansnap.paper.presets import get_preset
from scansnap.service import access
from scansnap.service.health import store_health
from scansnap.service.jobs import get_manager
from scansnap.service.run_kinds import create_run
from scansnap.service.store import DB_NAME, RunStore, StoreError
from scansnap.ui import page_data, session, url_state
from scansnap.ui.text import WORD_JOINER, plain, quoted_words
from tests.apphelp import APP, run_app
from tests.guards import GUARD_S

GENERIC = "This app has encountered an error"


def _texts(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


# ------------------------------------------------------------------------------ sizes a link can ask for
def _spy_builds(monkeypatch) -> list:
    """Every P(l|n) the page builds, by its size K × M_ctx."""
    built: list[int] = []
    real = page_data.build_problem
    monkeypatch.setattr(page_data, "build_problem", lambda cfg: built.append(cfg.table_cells) or real(cfg))
    return built


def test_a_huge_vocabulary_link_is_refused_before_anything_is_built(data_dir, monkeypatch):
    built = _spy_builds(monkeypatch)
    at = run_app({"data.num_last": "40", "data.num_distinct_per_next": "200000"})
    # num_last = 40 alone is fine (40 classes × 410 tokens) and is previewed; the 200,000 is not applied
    assert not at.exception and max(built) == 40 * (10 + 10 * 40)
    assert f"at most {MAX_VOCAB:,} are allowed" in _texts(at.warning)
    assert at.session_state["lab.cfg"]["data"]["num_distinct_per_next"] == 10  # the preset's value is kept


def test_a_large_but_allowed_problem_is_not_previewed(data_dir, monkeypatch):
    """K = 1000 classes × 8,010 tokens = 8.01 M entries: allowed (≤ 10 M), but past the preview's 1 M.
    (The distinct count comes first: with the preset's 10 per class, 1000 classes would be 10.01 M.)"""
    built = _spy_builds(monkeypatch)
    at = run_app({"data.num_distinct_per_next": "8", "data.num_last": "1000"})
    cells = 1000 * (10 + 8 * 1000)
    assert cells <= MAX_TABLE_CELLS and not at.exception and built == []
    assert f"{cells:,} entries: too many to preview" in _texts(at.info)


def test_number_widgets_carry_the_schemas_bounds(data_dir):
    at = run_app({"lecture": "0"})
    boxes = {n.label: n for n in at.number_input}
    assert boxes["replicas (consecutive seeds)"].max == MAX_SEEDS and boxes["replicas (consecutive seeds)"].min == 1
    assert boxes["batch"].max == 65536 and boxes["steps"].max == 10**7 and boxes["steps"].min == 0


def test_a_replica_count_past_the_maximum_builds_no_list(data_dir, monkeypatch):
    """A client can send any number for a widget: the callback clamps before building the seed list."""
    from scansnap.kinds.synthetic.ui import actions as lab_actions
    from scansnap.ui.knobs import KNOBS

    ss = {"lab.rev": 1, "lab.cfg": get_preset("syn-small").config.to_dict(), "lab.lock": None}
    monkeypatch.setattr(lab_actions, "ss", ss)
    monkeypatch.setattr(session, "ss", ss)
    monkeypatch.setattr(url_state, "ss", ss)
    monkeypatch.setattr(lab_actions, "write_url", lambda: None)
    knob = next(k for k in KNOBS if k.kind == "replicas")
    lab_actions.on_knob(knob, 10**8, key="w1.replicas.count")
    assert len(ss["lab.cfg"]["replicas"]["seeds"]) == MAX_SEEDS


# ------------------------------------------------------------------------------ names are text
def test_a_published_run_name_is_never_markdown(data_dir):
    name = "![x](http://127.0.0.1:9/p.png) [click](http://127.0.0.1:9)"
    store = RunStore(data_dir)
    rid = create_run(store, get_preset("syn-small").config, name=name, status="running")
    store.set_published(rid, True)
    at = run_app()
    labels = [link.proto.label for link in at.sidebar.get("page_link")]
    assert any(rid in lab for lab in labels), labels
    [label] = [lab for lab in labels if rid in lab]
    assert "![x](" not in label and r"\!\[x\]\(" in label  # escaped: shown as typed, no image fetched
    store.set_status(rid, "stopped")


@pytest.mark.parametrize(
    "name",
    [
        "http://evil.example/x",
        "[click](http://x.example) **bold** _it_ `c` <b>b</b>",
        "www.evil.example and me@evil.example, mailto:me@evil.example",
        ":red[red] :smile: :material/home: $x^2$ a\\b \\(c\\)",
    ],
)
def test_plain_text_leaves_markdown_nothing_to_link_or_format(name):
    """What :func:`scansnap.ui.text.plain` gives Markdown shows the name as typed once Markdown undoes the escapes (the
    word joiners are invisible), and leaves none of what GitHub's autolinks and Streamlit's directives and
    emoji find in the text after the escapes are undone: no scheme, www., e-mail address or :name."""
    out = plain(name)
    unescaped = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", out)  # CommonMark's backslash escapes, undone
    assert unescaped.replace(WORD_JOINER, "") == name
    assert re.search(r"(?i)[a-z]+://|www\.|@\w|:[\w/+-]", unescaped) is None, unescaped
    assert re.search(r"(?<!\\)[\[\]()*_`<>$]", out) is None  # every Markdown character is escaped


def test_a_corpus_s_words_are_quoted_and_shown_as_typed():
    """Punctuation tokens read as words, not as the list's own commas; a token that is Markdown (``*``,
    ``[x](y)``) shows as typed; only the first eight are shown."""
    words = [",", "the", ".", "*", "[x](y)", "a", "b", "c", "d"]
    out = quoted_words(np.array(words, dtype=object))
    unescaped = re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", out)
    assert unescaped == "“,”, “the”, “.”, “*”, “[x](y)”, “a”, “b”, “c”"
    assert "\\*" in out and "\\[x\\]\\(y\\)" in out  # escaped for Markdown


# ------------------------------------------------------------------------------ a damaged store
@pytest.fixture
def damaged(tmp_path):
    (tmp_path / DB_NAME).write_bytes(np.random.default_rng(0).bytes(4096))
    old = os.environ.get("SCANSNAP_DATA_DIR")
    os.environ["SCANSNAP_DATA_DIR"] = str(tmp_path)
    yield tmp_path
    os.environ.pop("SCANSNAP_DATA_DIR") if old is None else os.environ.__setitem__("SCANSNAP_DATA_DIR", old)


@pytest.mark.parametrize("page", ["lab", "runs", "compare", "sweep", "reproduce"])
def test_a_damaged_store_is_one_message_on_the_pages_that_need_it(damaged, page):
    at = AppTest.from_file(APP, default_timeout=GUARD_S).run()
    if page != "lab":
        at.switch_page(f"app_pages/{page}.py").run()
    assert not at.exception
    assert [e.value for e in at.error if "is damaged" in e.value] != [], _texts(at.error)
    assert sum("is damaged" in e.value for e in at.error) == 1


def test_the_theory_page_works_without_a_store(damaged):
    at = AppTest.from_file(APP, default_timeout=GUARD_S).run().switch_page("app_pages/theory.py").run()
    assert not at.exception and not at.error and at.title[0].value == "Theory"


def test_store_health_reports_a_damaged_store(tmp_path, damaged):
    ok, why = store_health(damaged)
    assert not ok and "cannot be read" in why
    assert store_health(tmp_path / "nothing-yet")[0]
    RunStore(tmp_path / "fine").close()
    assert store_health(tmp_path / "fine") == (True, f"run store {tmp_path / 'fine' / DB_NAME}: 0 runs, quick_check ok")


# ------------------------------------------------------------------------------ delete when the disk refuses
def test_a_delete_the_disk_refuses_says_why_and_keeps_the_run(data_dir, monkeypatch):
    at = run_app().switch_page("app_pages/runs.py").run()
    owner = at.session_state["owner"]
    rid = create_run(get_manager(data_dir).store, RunConfig(), name="keep me", owner=owner, status="finished")

    def full(self, run_id):
        raise StoreError("disk is full while deleting a run: the transaction was rolled back")

    monkeypatch.setattr(RunStore, "delete", full)
    at.run()
    at.selectbox(key="runs.pick").set_value(rid).run()
    at.checkbox(key="runs.sure").check().run()
    at.button(key="runs.delete").click().run()
    assert not at.exception
    assert "disk is full" in _texts(at.error)
    assert get_manager(data_dir).store.get_run(rid) is not None


# ------------------------------------------------------------------------------ operator-key guessing
KEY = "the-right-key-" + "x" * 20


def test_operator_key_guesses_wait_longer_each_time(data_dir, monkeypatch, operator_gate):
    monkeypatch.setenv("SCANSNAP_OPERATOR_KEY", KEY)
    assert [access.operator_delay(n) for n in (1, 2, 3, 4, 7, 20)] == [1, 2, 4, 8, 60, 60]
    at = run_app().switch_page("app_pages/runs.py").run()
    at.text_input(key="runs.opkey").input("guess-1").run()
    assert "not the operator key" in _texts(at.error)
    operator_gate[0] += 0.5
    at.text_input(key="runs.opkey").input(KEY).run()  # within the second: refused
    assert "Too many wrong keys: try again in 0 s" in _texts(at.error) and not at.session_state["operator"]


def test_fresh_sessions_get_no_extra_operator_key_guesses(data_dir, monkeypatch, operator_gate):
    """The probe's attack: 100 guesses at 3.3 per second, each from a fresh browser session at one address.
    The back-off is the address's as well as the cookie's, so a guess is compared only once the wait of the
    previous wrong one is over: the k-th compared guess comes 1 + 2 + … + 2^(k−2) = 2^(k−1) − 1 s after the
    first, so within T seconds at most ⌊log₂(T + 1)⌋ + 1 are compared; every other one is refused with the
    time left.  After the wait, the right key works (in a real session of the Runs page)."""
    monkeypatch.setenv("SCANSNAP_OPERATOR_KEY", KEY)
    rate, guesses, refused = 3.3, 100, []
    for i in range(guesses):
        operator_gate[0] = 1000.0 + i / rate
        fresh = {"runs.opkey": f"guess-{i}"}  # a new browser session's state
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(session, "ss", fresh)
            mp.setattr(url_state, "ss", fresh)
            session.on_operator_key("runs.opkey")
        assert not fresh.get("operator")
        if "operator_wait" in fresh:
            refused.append(fresh["operator_wait"])
    span = (guesses - 1) / rate
    assert guesses - len(refused) <= math.floor(math.log2(span + 1)) + 1, len(refused)
    assert all(0 < w <= access.OPERATOR_MAX_DELAY_S for w in refused)
    left = access.OPERATOR_GATE.wait_left("a fresh browser", None)
    assert left > 0
    at = run_app().switch_page("app_pages/runs.py").run()  # one more browser while the wait runs: refused
    at.text_input(key="runs.opkey").input(KEY).run()
    assert f"Too many wrong keys: try again in {left:.0f} s" in _texts(at.error)
    assert not any("Operator mode" in s.value for s in at.sidebar.success)
    operator_gate[0] += left  # the wait is over
    later = run_app().switch_page("app_pages/runs.py").run()
    later.text_input(key="runs.opkey").input(KEY).run()
    assert later.session_state["operator"] and "Operator mode" in " ".join(s.value for s in later.sidebar.success)


# ---------------------------------------------------------------- uploads that validated, then broke the trainer
@pytest.mark.parametrize(
    ("doc", "says"),
    [
        ({"snapshots": {"linear_every": 10**30}}, "snapshots.linear_every"),
        ({"data": {"source": "table", "table": [[1e308, 1e308, 1.0]], "psi": [0]}}, "sums to inf"),
    ],
)
def test_uploads_that_once_broke_the_trainer_are_refused_with_the_field(doc, says, data_dir):
    import json

    from scansnap.core.config import ConfigError
    from scansnap.service.facade import get_service

    with pytest.raises(ConfigError, match=says):
        get_service(data_dir).config_from_upload(json.dumps(doc).encode(), "synthetic")
