"""Shared fixtures: a throw-away run store for the dashboard's AppTest tests."""

from __future__ import annotations

import os
import sys

import pytest

from engine.service.jobs import get_manager
from tests import streams


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


# The files of part 1 whose tests take longest, longest first (measured: `make test` writes every test's
# time to test-artifacts/pytest-part1.xml; these 18 took 20 to 200 s each, 950 of part 1's 1,180 s).
# Part 1 of scripts/test.sh hands whole files to two processes in collection order (xdist's
# --no-loadscope-reorder: by default it hands out the files with the most tests first, and
# tests/e2e/test_chart_layout.py, 4 tests and 200 s, came 66th of 92), so a long file taken late keeps
# one process busy while the other has nothing left: one core idled for the last 60 to 90 s of part 1.
SLOW_FILES = (
    "tests/e2e/test_chart_layout.py",
    "tests/test_cli_text.py",
    "tests/service/test_jobs.py",
    "tests/ui/test_url_fuzz.py",
    "tests/paper/test_presets.py",
    "tests/ui/test_text_page.py",
    "tests/core/test_calibration.py",
    "tests/service/test_scheduling.py",
    "tests/service/test_text_facade.py",
    "tests/e2e/test_names_browser.py",
    "tests/service/test_limits.py",
    "tests/service/test_theory_overlay.py",
    "tests/service/test_reproductions.py",
    "tests/service/test_resume.py",
    "tests/test_architecture.py",
    "tests/ui/test_reproduce_page.py",
    "tests/service/test_budget.py",
    "tests/test_cli.py",
)


def _order(item) -> tuple[bool, int]:
    """The Ray cluster tests last: they join Ray from this process, and Ray's driver keeps threads and
    sockets after ``ray.shutdown()``, which the tests that count this process's file descriptors and
    threads (tests/service/test_jobs.py) would see.  Before them, the slow files first (:data:`SLOW_FILES`);
    the order within a file is kept."""
    path = str(item.path).replace("\\", "/")
    slow = [i for i, name in enumerate(SLOW_FILES) if path.endswith(name)]
    return "tests/cluster/" in path, slow[0] if slow else len(SLOW_FILES)


# Part 2's groups when it runs in streams (tests/streams.py), longest first (seconds alone on a quiet host,
# measured per test in stop 40: 283, 278, 166, 110, 96, 4) so that the streams end close together.
STREAM_ORDER = (
    "e2e/test_browser.py",
    streams.SHARED_GROUP,
    "e2e/test_hall.py",
    "e2e/test_load.py",
    "e2e/test_text_browser.py",
    "e2e/test_live_queue.py",
)


def _stream_order(group: str) -> int:
    return STREAM_ORDER.index(group) if group in STREAM_ORDER else len(STREAM_ORDER)


@pytest.hookimpl(tryfirst=True)  # before xdist's own hook, which reads the groups
def pytest_collection_modifyitems(config, items):
    items.sort(key=_order)
    if os.environ.get(streams.STREAMS_ENV):
        groups = {item: streams.group_of(str(item.path).replace("\\", "/")) for item in items}
        for item, group in groups.items():
            item.add_marker(pytest.mark.xdist_group(group))
        items.sort(key=lambda item: _stream_order(groups[item]))  # stable: each group's own order kept


ALONE_LIST_ENV = "TEST_ALONE_LIST"  # scripts/test.sh, part 1: where it writes the tests marked alone it left out
ALONE_EXPECT_ENV = "TEST_ALONE_EXPECT"  # scripts/test.sh, part 2: that list, which part 2 must run whole
_ALONE_TESTS: set[str] = set()


def pytest_deselected(items):
    """Part 1 (``-m "not alone"``, :data:`ALONE_LIST_ENV` set) writes the tests marked alone that it left
    out, one test id a line, read from their own marks: part 2 collects their files only, not the whole
    suite again (14 s of one core).  Written whole, then renamed: the two xdist processes write the same."""
    out = os.environ.get(ALONE_LIST_ENV)
    if not out:
        return
    _ALONE_TESTS.update(item.nodeid for item in items if item.get_closest_marker("alone"))
    tmp = f"{out}.{os.getpid()}"
    with open(tmp, "w") as f:
        f.write("".join(f"{nodeid}\n" for nodeid in sorted(_ALONE_TESTS)))
    os.replace(tmp, out)


def pytest_collection_finish(session):
    """Part 2 (:data:`ALONE_EXPECT_ENV` set) selected exactly the tests part 1 left out, or stops: a test
    marked alone outside the files it was given would otherwise run in neither part."""
    expect = os.environ.get(ALONE_EXPECT_ENV)
    if not expect:
        return
    with open(expect) as f:
        want = set(f.read().splitlines())
    got = {item.nodeid for item in session.items}
    if got != want:
        missing, extra = sorted(want - got), sorted(got - want)
        raise pytest.UsageError(f"part 2 would not run {missing[:5]} or would run {extra[:5]} (from {expect})")


def pytest_configure(config):
    """Part 2 in streams (tests/streams.py): the controller checks that the streams fit the CPUs this
    process may use (else a usage error, before any test); each xdist worker pins itself to its CPUs."""
    count = os.environ.get(streams.STREAMS_ENV)
    if not count:
        return
    # an xdist worker has its id in workerinput (not in the environment, which a pytest run inside a
    # test inherits from the test's own worker)
    worker, allowed = getattr(config, "workerinput", {}).get("workerid"), os.sched_getaffinity(0)
    try:
        per_stream = streams.cpus_per_stream(os.environ.get(streams.CPUS_ENV))
        if worker is None:
            streams.check_streams(int(count), per_stream, allowed)
        else:
            streams.pin_this_process(streams.stream_cpus(worker, allowed, per_stream, int(count)))
    except ValueError as e:
        raise pytest.UsageError(str(e)) from None
