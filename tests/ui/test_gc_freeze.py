"""scansnap/ui/gc_freeze.py: after a script run that imported modules, the garbage is collected and the rest frozen."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
import types
import weakref
from pathlib import Path

import pytest

from scansnap.ui import gc_freeze
from scansnap.ui.gc_freeze import freeze_imports
from tests.guards import GUARD_S

ROOT = Path(__file__).resolve().parents[2]


class Node:
    """An object that can sit in a reference cycle."""

    other: object = None


@pytest.fixture
def unfrozen(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(gc_freeze, "_modules_frozen", 0)  # as in a fresh server process
    monkeypatch.setattr(gc_freeze, "_enabled", True)  # as after server.py's gc_freeze.start()
    gc.unfreeze()
    yield
    gc.unfreeze()  # the rest of the suite runs with the collector as it was


def new_import(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setitem(sys.modules, name, types.ModuleType(name))


def test_new_imports_freeze_what_lives_and_collect_the_garbage_first(unfrozen, monkeypatch):
    cycle = Node()
    cycle.other = cycle  # garbage only the collector frees
    garbage = weakref.ref(cycle)
    alive = Node()
    del cycle
    new_import(monkeypatch, "scansnap_test_imported_a")
    assert freeze_imports()
    assert garbage() is None  # collected, not frozen with the rest
    assert gc.get_freeze_count() > 0
    assert not any(o is alive for o in gc.get_objects())  # frozen objects leave the collector's passes


def test_no_new_import_no_freeze(unfrozen, monkeypatch):
    new_import(monkeypatch, "scansnap_test_imported_b")
    assert freeze_imports()
    frozen = gc.get_freeze_count()
    later = Node()
    assert not freeze_imports()
    assert gc.get_freeze_count() <= frozen  # none added (frozen objects a refcount frees leave it)
    assert any(o is later for o in gc.get_objects())  # still in the collector's passes
    new_import(monkeypatch, "scansnap_test_imported_c")
    assert freeze_imports()
    assert not any(o is later for o in gc.get_objects())  # frozen now


def test_a_process_that_did_not_start_it_never_freezes(monkeypatch):
    """AppTest's and the CLI's processes: pages run there too, and nothing of theirs is frozen."""
    monkeypatch.setattr(gc_freeze, "_enabled", False)
    monkeypatch.setattr(gc_freeze, "_modules_frozen", 0)
    frozen = gc.get_freeze_count()
    new_import(monkeypatch, "scansnap_test_imported_d")
    assert not freeze_imports()
    assert gc.get_freeze_count() <= frozen  # none added (frozen objects a refcount frees leave it)


def test_the_server_freezes_once_its_imports_are_done(tmp_path):
    """server.py (what ``make run`` and the Docker image serve) starts the freezing: loading it in a fresh
    interpreter leaves the imports' objects frozen."""
    code = "import gc, runpy; runpy.run_path('scansnap/server.py'); print(gc.get_freeze_count())"
    env = {**os.environ, "SCANSNAP_PREWARM": "0", "SCANSNAP_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=GUARD_S
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert int(out.stdout.split()[-1]) > 10_000  # Streamlit and Starlette alone are tens of thousands of objects
