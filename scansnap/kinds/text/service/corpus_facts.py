"""What the web process knows of a real-text corpus: its sizes, vocabulary and most frequent tokens
(:func:`scansnap.kinds.text.service.corpora.corpus_summary`), measured in a worker process; never its token ids.

Tokenising a corpus takes seconds (the built-in one about 1 s, a WikiText folder minutes) and holds the
interpreter lock while it runs: in the web process it stalled every other session of the server.  One
worker process, started on the first question and kept for the next, reads and encodes a corpus the
dashboard may read (:func:`measured_corpus`, which keeps it encoded there); the web process keeps
only the summaries, per corpus (a WikiText folder's files' stamps included: an edited folder is
measured again).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import threading
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from functools import lru_cache
from pathlib import Path
from typing import Any

from scansnap.kinds.text.science.config import TextDataConfig
from scansnap.kinds.text.service.corpora import corpus_stamp, corpus_summary
from scansnap.kinds.text.service.corpus_access import measured_corpus
from scansnap.service.writers import die_with

_POOL: ProcessPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def corpus_facts(data_dir: str | Path, data: TextDataConfig) -> dict[str, Any]:
    """The summary of ``data``'s corpus (``train_tokens``, ``val_tokens``, ``vocab_size``, ``top_tokens``
    …), measured in the corpus worker; its ConfigError when the corpus cannot be read."""
    return _facts(str(Path(data_dir).resolve()), data, corpus_stamp(data))


@lru_cache(maxsize=32)
def _facts(data_dir: str, data: TextDataConfig, _stamp: tuple) -> dict[str, Any]:
    try:
        return _pool().submit(measure, data_dir, data).result()
    except BrokenProcessPool:  # the worker died (killed, out of memory): one fresh worker, one more try
        _drop_pool()
        return _pool().submit(measure, data_dir, data).result()


def measure(data_dir: str, data: TextDataConfig) -> dict[str, Any]:
    """In the corpus worker: read, encode and summarise the corpus."""
    return corpus_summary(measured_corpus(data_dir, data))


def _pool() -> ProcessPoolExecutor:
    """The corpus worker: a fresh interpreter (``spawn``: it imports no torch, about 1 s to start; the
    training workers' fork server must start with their preload), which dies with this process."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            context = mp.get_context("spawn")
            _POOL = ProcessPoolExecutor(1, mp_context=context, initializer=die_with, initargs=(os.getpid(),))
        return _POOL


def _drop_pool() -> None:
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.shutdown(wait=False, cancel_futures=True)
        _POOL = None
