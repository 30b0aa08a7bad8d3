"""Chunks of replicas trained side by side: one Python thread per core, one torch thread each (issue 16).

With intra-op threading, every torch operation ends at a barrier where the threads wait for each other; the
step's many small per-chunk operations then run at the pace of the slowest core, and a busy neighbour
program on one core stalls them all.  Chunks hold disjoint replicas, so they can run in parallel *lanes*
instead: a lane is a thread with its own workspace that runs its share of the chunks with torch limited
to one thread (torch releases the GIL inside its kernels).  A chunk's arithmetic is the same whichever
lane runs it, so results do not depend on the number of lanes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import TypeVar

import torch

from engine.core.fused import Workspace

C = TypeVar("C")


class Lanes:
    """``map(fn, chunks)`` calls ``fn(share, workspace)`` for up to ``torch.get_num_threads()`` shares of the
    chunks (round-robin), each in its own lane; returns when all are done, re-raising the first error."""

    def __init__(self) -> None:
        self.workspaces: list[Workspace] = [Workspace()]
        self.pool: ThreadPoolExecutor | None = None

    def map(self, fn: Callable[[list[C], Workspace], None], chunks: Sequence[C]) -> None:
        threads = torch.get_num_threads()
        n = min(threads, len(chunks))
        while len(self.workspaces) < n:
            self.workspaces.append(Workspace())
        if n <= 1:
            _one_thread(fn, list(chunks), self.workspaces[0])
            torch.set_num_threads(threads)
            return
        self.pool = self.pool or ThreadPoolExecutor(max_workers=threads, thread_name_prefix="lane")
        futures = [self.pool.submit(_one_thread, fn, list(chunks[i::n]), self.workspaces[i]) for i in range(n)]
        wait(futures)
        torch.set_num_threads(threads)  # the lanes set MKL's (process-wide) thread count to 1
        for f in futures:
            f.result()


def _one_thread(fn: Callable[[list[C], Workspace], None], share: list[C], ws: Workspace) -> None:
    torch.set_num_threads(1)
    fn(share, ws)
