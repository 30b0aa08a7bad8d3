"""Chunks of replicas trained in order, or side by side in lanes, whichever is faster here (issue 16).

With intra-op threading, every torch operation ends at a barrier where the threads wait for each other; the
step's many small per-chunk operations then run at the pace of the slowest core, and a busy neighbour
program on one core stalls them all (measured on 2 shared cores: 2–5× slower steps).  Chunks hold disjoint
replicas, so they can also run in parallel *lanes*: a lane is a thread with its own workspace that runs its
share of the chunks with torch limited to one thread (torch releases the GIL inside its kernels).  On an
otherwise idle machine the lanes are ~10–25 % slower than the chunks in order with torch's threads, so
:class:`Lanes` times both and keeps the faster, trying the other every ``RETRY`` steps.  With one torch
thread there are no lanes and a replica's arithmetic does not depend on the others, to the bit; with more,
a BLAS may split one product's sum between threads (in order) or not (in a lane), so the choice may change
the last bits, within the float rounding that tests/core/test_train.py bounds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

import torch

from scansnap.kinds.synthetic.science.fused import Workspace

C = TypeVar("C")
RETRY = 16  # every RETRY-th call runs the mode that is currently slower, to notice when the load changes
SMOOTH = 0.3  # weight of the newest timing in each mode's moving average


class Lanes:
    """``map(fn, chunks)`` calls ``fn(share, workspace)``: once with every chunk (in order, torch's threads),
    or for up to ``torch.get_num_threads()`` round-robin shares, each in its own lane; returns when all are
    done, re-raising the first error."""

    def __init__(self) -> None:
        self.workspaces: list[Workspace] = [Workspace()]
        self.pool: ThreadPoolExecutor | None = None
        self.seconds: dict[bool, float] = {}  # lanes? → moving average of a call's time
        self.calls = 0

    def map(self, fn: Callable[[list[C], Workspace], None], chunks: Sequence[C]) -> None:
        n = min(torch.get_num_threads(), len(chunks))
        if n <= 1:
            fn(list(chunks), self.workspaces[0])
            return
        lanes = self.choose()
        t0 = time.perf_counter()
        if lanes:
            self.in_lanes(fn, chunks, n)
        else:
            fn(list(chunks), self.workspaces[0])
        dt = time.perf_counter() - t0
        old = self.seconds.get(lanes)
        self.seconds[lanes] = dt if old is None else (1 - SMOOTH) * old + SMOOTH * dt

    def choose(self) -> bool:
        """Lanes or in order: each tried once, then the faster, the other every RETRY-th call."""
        self.calls += 1
        if False not in self.seconds or True not in self.seconds:
            return False in self.seconds  # first in order, then in lanes
        faster = self.seconds[True] < self.seconds[False]
        return faster if self.calls % RETRY else not faster

    def in_lanes(self, fn: Callable[[list[C], Workspace], None], chunks: Sequence[C], n: int) -> None:
        threads = torch.get_num_threads()
        while len(self.workspaces) < n:
            self.workspaces.append(Workspace())
        self.pool = self.pool or ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lane")
        futures = [self.pool.submit(_one_thread, fn, list(chunks[i::n]), self.workspaces[i]) for i in range(n)]
        wait(futures)
        if torch.get_num_threads() != threads:
            torch.set_num_threads(threads)
        for f in futures:
            f.result()


def _one_thread(fn: Callable[[list[C], Workspace], None], share: list[C], ws: Workspace) -> None:
    """In a lane: torch's thread count is per calling thread (OpenMP), so this sets it once per lane."""
    if torch.get_num_threads() != 1:
        torch.set_num_threads(1)
    fn(share, ws)
