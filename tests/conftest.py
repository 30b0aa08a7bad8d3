"""Shared fixtures: a throw-away run store for the dashboard's AppTest tests."""

from __future__ import annotations

import os
import sys

import pytest

from engine.service.jobs import get_manager


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
    """``python -m engine reproduce --quick`` run once for the session: (its folder, exit code, what it
    printed); tests/paper/test_reproduce.py checks it, tests/cluster compares the cluster's with it."""
    import contextlib
    import io

    from engine.cli import main

    out, printed = tmp_path_factory.mktemp("quick-reproduction"), io.StringIO()
    with contextlib.redirect_stdout(printed):
        rc = main(["reproduce", "--quick", "--out", str(out)])
    return out, rc, printed.getvalue()


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
    """The server-wide operator-key back-off (engine.service.access.OPERATOR_GATE), fresh for this test and
    on a clock the test sets: ``clock[0]`` is the time in seconds (restored after)."""
    from engine.service import access

    clock = [1000.0]
    monkeypatch.setattr(access.OPERATOR_GATE, "failures", 0)
    monkeypatch.setattr(access.OPERATOR_GATE, "next_try", 0.0)
    monkeypatch.setattr(access.OPERATOR_GATE, "clock", lambda: clock[0])
    return clock


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


SHARED_REPRODUCTION = "quick-reproduction"  # the xdist group of the files that read quick_reproduction


def _group(item: pytest.Item, sharing: set[str]) -> str:
    """The xdist group of ``item`` (``make test`` runs pytest-xdist with ``--dist loadgroup``): its file, so
    that a module's fixtures (a server, a cluster) start once; the files in ``sharing``, which read the
    session's quick reproduction, are one group, so that it is computed once."""
    return SHARED_REPRODUCTION if _file(item) in sharing else _file(item)


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::")[0]


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    sharing = {_file(item) for item in items if "quick_reproduction" in getattr(item, "fixturenames", ())}
    for item in items:
        item.add_marker(pytest.mark.xdist_group(_group(item, sharing)))
