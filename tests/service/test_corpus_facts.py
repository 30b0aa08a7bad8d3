"""A real-text corpus is read and tokenised in the corpus worker, never in the web process: the web
process gets its summary (sizes, vocabulary, most frequent tokens) and refusals as ConfigError."""

from __future__ import annotations

import os
import signal

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextDataConfig, TextRunConfig
from scansnap.kinds.text.service import corpora, corpus_facts
from scansnap.kinds.text.service.corpus_access import save_upload
from scansnap.kinds.text.service.runs import check_text_run
from scansnap.service.run_kinds import create_run
from scansnap.service.store import RunStore
from tests.service.test_corpora import prose


@pytest.fixture
def web_process_never_tokenises(monkeypatch):
    """encode_corpus fails in this process (a monkeypatch does not reach the worker, a fresh interpreter)."""
    corpus_facts._facts.cache_clear()
    monkeypatch.setattr(corpora, "encode_corpus", lambda *a, **k: pytest.fail("tokenised in the web process"))
    yield
    corpus_facts._facts.cache_clear()


def _upload(data_dir, n_words: int, name: str) -> TextDataConfig:
    return TextDataConfig(source="upload", upload_name=save_upload(data_dir, name, prose(n_words).encode()))


@pytest.mark.usefixtures("web_process_never_tokenises")
def test_the_summary_is_the_corpus_summary_measured_in_the_worker(tmp_path, monkeypatch):
    data = _upload(tmp_path, 6000, "story.txt")
    got = corpus_facts.corpus_facts(tmp_path, data)
    monkeypatch.undo()  # now tokenise here, independently, to compare
    want = corpora.corpus_summary(
        corpora.encoded_corpus(data, (tmp_path / "uploads/text" / data.upload_name).read_bytes())
    )
    assert got == want and got["train_tokens"] + got["val_tokens"] == 6000  # prose(6000): 6,000 words


@pytest.mark.usefixtures("web_process_never_tokenises")
def test_a_text_run_is_checked_and_queued_without_tokenising_here(tmp_path):
    """The checks before a run is queued (windows, memory, work: :func:`check_text_run`) and its row."""
    cfg = TextRunConfig()  # the built-in corpus
    assert check_text_run(tmp_path, cfg).total_mb > 0
    with RunStore(tmp_path) as store:
        assert store.get_run(create_run(store, cfg))["status"] == "queued"


@pytest.mark.usefixtures("web_process_never_tokenises")
def test_a_refusal_reaches_the_web_process_with_its_message(tmp_path):
    missing = TextDataConfig(source="upload", upload_name="0123456789abcdef-gone.txt")
    with pytest.raises(ConfigError, match="is not on this server"):
        corpus_facts.corpus_facts(tmp_path, missing)


@pytest.mark.usefixtures("web_process_never_tokenises")
def test_a_killed_corpus_worker_is_replaced(tmp_path):
    first = corpus_facts.corpus_facts(tmp_path, _upload(tmp_path, 6000, "one.txt"))
    (pid,) = corpus_facts._pool()._processes
    os.kill(pid, signal.SIGKILL)
    second = corpus_facts.corpus_facts(tmp_path, _upload(tmp_path, 7000, "two.txt"))
    assert second["vocab_size"] == first["vocab_size"] and second["train_tokens"] > first["train_tokens"]
    assert corpus_facts._pool()._processes.keys() != {pid}
