"""Part 2 of scripts/test.sh (the tests marked ``alone``) in side-by-side *streams* on a machine with the
cores for it: each stream is one pytest-xdist process pinned to CPUs of its own (``TEST_STREAM_CPUS``
each, default 2: the two-core server the hall's bounds are stated for), so a stream has its CPUs as a
server would, and the tests' bounds on time mean what they mean when the tests run one at a time.

A stream takes whole groups (xdist's ``--dist loadgroup``): a test file is a group, except the files that
share the session's quick reproduction (tests/conftest.py), which are one group, so it is computed once.
Every process a test starts (servers, Chromium, Ray nodes, training workers) inherits its stream's CPUs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable

STREAMS_ENV = "TEST_ALONE_STREAMS"  # set by scripts/test.sh: how many streams part 2 runs in
CPUS_ENV = "TEST_STREAM_CPUS"  # CPUs per stream (default 2)
SHARED_REPRODUCTION = ("tests/paper/test_reproduce.py", "tests/cluster/")  # use quick_reproduction
SHARED_GROUP = "quick-reproduction"


def check_streams(streams: int, per_stream: int, allowed: Iterable[int]) -> None:
    """A ValueError, before any stream starts, when ``streams`` streams of ``per_stream`` CPUs do not fit."""
    for k in range(streams):
        stream_cpus(f"gw{k}", allowed, per_stream, streams)


def cpus_per_stream(value: str | None) -> int:
    """``TEST_STREAM_CPUS`` read: a whole number of CPUs, 1 or more (unset: 2)."""
    if value is None or value == "":
        return 2
    if not value.isdigit() or int(value) < 1:
        raise ValueError(f"{CPUS_ENV}={value!r}: allowed a whole number of CPUs per stream, 1 or more (default 2)")
    return int(value)


def stream_cpus(worker: str, allowed: Iterable[int], per_stream: int, streams: int) -> set[int]:
    """The CPUs of xdist worker ``worker`` ("gw<k>") of ``streams``: the (k mod streams)-th ``per_stream``
    of the ``allowed`` CPUs in ascending order (xdist names a worker that replaces a crashed one gw<streams>,
    ...); a ValueError saying what is missing when there are not that many."""
    if not worker.startswith("gw") or not worker[2:].isdigit():
        raise ValueError(f"{worker!r} is not a pytest-xdist worker id (gw0, gw1, ...)")
    if per_stream < 1 or streams < 1:
        raise ValueError(f"{streams} streams of {per_stream} CPUs: allowed 1 or more of each")
    k, cpus = int(worker[2:]) % streams, sorted(allowed)
    mine = cpus[k * per_stream : (k + 1) * per_stream]
    if len(mine) < per_stream:
        first, last = k * per_stream + 1, (k + 1) * per_stream
        which = f"CPU {first}" if first == last else f"CPUs {first}-{last}"
        raise ValueError(
            f"stream {k + 1} needs {which} of {per_stream} per stream, but this process may use {len(cpus)} "
            f"({cpus}): run fewer streams (TEST_WORKERS) or fewer {CPUS_ENV}"
        )
    return set(mine)


def group_of(path: str) -> str:
    """The stream group of a test file's path (posix): the shared reproduction's group or the file itself."""
    return SHARED_GROUP if any(part in path for part in SHARED_REPRODUCTION) else path.rsplit("tests/", 1)[-1]


def pin_this_process(cpus: set[int]) -> None:
    """Pin every thread of this process to ``cpus`` (Linux sets affinity per thread: xdist's own threads
    are already running); processes started afterwards inherit it."""
    for tid in os.listdir("/proc/self/task"):
        with contextlib.suppress(ProcessLookupError):  # a thread that has ended since
            os.sched_setaffinity(int(tid), cpus)
