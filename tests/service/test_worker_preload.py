"""The fork server preloads what every run's start would import: a worker builds a text run's optimizer
(torch.optim's first optimizer imports torch._dynamo, ~2 s) without importing anything."""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection

from scansnap.service.worker import worker_context
from tests.guards import GUARD_S


def _modules_imported_by_a_first_optimizer(out: Connection) -> None:
    import torch

    before = set(sys.modules)
    torch.optim.SGD([torch.nn.Parameter(torch.zeros(2))], lr=1.0)
    out.send(sorted(set(sys.modules) - before))


def test_a_worker_builds_its_first_optimizer_without_importing_anything():
    ctx = worker_context()
    ours, theirs = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_modules_imported_by_a_first_optimizer, args=(theirs,))
    proc.start()
    try:
        assert ours.poll(GUARD_S), "the worker sent nothing"
        imported = ours.recv()
    finally:
        proc.join(GUARD_S)
    assert proc.exitcode == 0
    assert not [m for m in imported if m.startswith("torch")], imported[:20]
