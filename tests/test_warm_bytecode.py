"""scripts/warm_bytecode.py: the install compiles what the lab imports, with bytecode writing on."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from scripts import warm_bytecode


@pytest.mark.parametrize("kind", sorted(warm_bytecode.TOOLS))
def test_every_module_it_names_exists(kind):
    """A module renamed or removed would leave its side uncompiled (the install only warns)."""
    missing = [m for names in warm_bytecode.groups(kind) for m in names if importlib.util.find_spec(m) is None]
    assert not missing, missing


def test_an_unknown_kind_names_the_kinds():
    with pytest.raises(SystemExit, match="one of runtime, cluster, dev"):
        warm_bytecode.groups("gpu")


def test_the_imports_write_bytecode_in_a_shell_that_forbids_it(tmp_path, monkeypatch):
    """This machine's shells set PYTHONDONTWRITEBYTECODE: the imports still leave .pyc files behind."""
    (tmp_path / "warm_probe_a.py").write_text("A = 1\n")
    (tmp_path / "warm_probe_b.py").write_text("B = 2\n")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    monkeypatch.setattr(warm_bytecode, "groups", lambda kind: (("warm_probe_a",), ("warm_probe_b",)))
    assert warm_bytecode.main("runtime") == 0
    tag = sys.implementation.cache_tag
    assert {p.name for p in (tmp_path / "__pycache__").iterdir()} == {
        f"warm_probe_a.{tag}.pyc",
        f"warm_probe_b.{tag}.pyc",
    }


def test_a_module_that_fails_to_import_is_named_and_the_install_goes_on(monkeypatch, capsys):
    monkeypatch.setattr(warm_bytecode, "groups", lambda kind: (("json",), ("no_such_module_here",)))
    assert warm_bytecode.main("runtime") == 0
    err = capsys.readouterr().err
    assert "importing no_such_module_here failed (ModuleNotFoundError" in err and "json" not in err
