"""Shared fixtures: a throw-away run store for the dashboard's AppTest tests."""

from __future__ import annotations

import os
import sys

import pytest

from scansnap.service.jobs import get_manager


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    """A fresh SCANSNAP_DATA_DIR per test module; every worker is stopped and joined afterwards
    (a torch thread alive at interpreter exit aborts the process)."""
    d = str(tmp_path_factory.mktemp("scansnap-data"))
    old = os.environ.get("SCANSNAP_DATA_DIR")
    os.environ["SCANSNAP_DATA_DIR"] = d
    yield d
    get_manager(d).shutdown()
    if old is None:
        os.environ.pop("SCANSNAP_DATA_DIR", None)
    else:
        os.environ["SCANSNAP_DATA_DIR"] = old


@pytest.fixture(scope="session")
def quick_reproduction(tmp_path_factory):
    """``python -m scansnap reproduce --quick`` run once for the whole test run: (its folder, exit code, what it
    printed); tests/paper/test_reproduce.py checks it, tests/cluster compares the cluster's with it.  The
    pytest processes side by side (xdist) share it: the first that asks computes it under a lock, the others
    read what it wrote."""
    import contextlib
    import fcntl
    import io
    import json

    from scansnap.cli import main

    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")  # one id per run, the same in every worker
    root = tmp_path_factory.getbasetemp().parent / f"shared-{run}" if run else tmp_path_factory.getbasetemp()
    root.mkdir(parents=True, exist_ok=True)
    out, done = root / "quick-reproduction", root / "quick-reproduction.json"
    with open(root / "quick-reproduction.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not done.exists():
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                rc = main(["reproduce", "--quick", "--out", str(out)])
            done.write_text(json.dumps({"rc": rc, "printed": printed.getvalue()}))
        result = json.loads(done.read_text())
    return out, result["rc"], result["printed"]


@pytest.fixture
def one_torch_thread():
    """Tiny tensors: one intra-op thread (two spin-wait badly on a shared 2-core machine); restored after."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)


@pytest.fixture
def operator_gate(monkeypatch):
    """The operator-key back-off (scansnap.service.access.OPERATOR_GATE), fresh for this test and
    on a clock the test sets: ``clock[0]`` is the time in seconds (restored after)."""
    from scansnap.service import access

    clock = [1000.0]
    monkeypatch.setattr(access.OPERATOR_GATE, "clock", lambda: clock[0])
    access.OPERATOR_GATE.clear()
    yield clock
    access.OPERATOR_GATE.clear()


@pytest.fixture(autouse=True)
def keep_the_main_module():
    """Put ``sys.modules["__main__"]`` back after each test: an AppTest built from a function runs a
    temporary script as ``__main__`` and leaves it there, and multiprocessing makes every worker started
    later import the parent's main module by path (a toy-kind run after ``tests/ui/test_lab_live.py``
    died with ``NameError: name '__args' is not defined``)."""
    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main
