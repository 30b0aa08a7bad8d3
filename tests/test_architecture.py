"""Architecture contracts: the layering and forbidden imports are import-linter's (pyproject.toml,
run by CI as ``lint-imports``); here, the property import-linter cannot see: at run time the web
process never loads torch (workers do), on any page; and functions stay short: none over 50 lines,
outside tests and bench (a module is sized by its job, not by a count of lines)."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "scansnap"
PAGES = sorted(
    str(p.relative_to(PKG))
    for p in [*(PKG / "app_pages").glob("*.py"), *(PKG / "kinds").glob("*/ui/page.py")]
    if p.name != "__init__.py"
)
PROBE = """
import importlib, json, pathlib, sys
from streamlit.testing.v1 import AppTest
from tests.guards import GUARD_S
for p in sorted(pathlib.Path("scansnap/ui").rglob("*.py")):
    importlib.import_module(".".join(p.with_suffix("").parts).removesuffix(".__init__"))
at = AppTest.from_file("scansnap/app.py", default_timeout=GUARD_S).run()
errors = [str(e.value) for e in at.exception]
for page in json.loads(sys.argv[1]):
    at.switch_page(page).run()
    errors += [f"{page}: {e.value}" for e in at.exception]
print(json.dumps({"torch": sorted(m for m in sys.modules if m == "torch" or m.startswith("torch.")),
                  "errors": errors}))
"""


def test_lint_imports_keeps_every_contract():
    lint = Path(sys.executable).with_name("lint-imports")  # installed next to this interpreter
    out = subprocess.run([str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 broken" in out.stdout


def _contracts() -> dict[str, dict]:
    with open(ROOT / "pyproject.toml", "rb") as f:
        return {c["name"]: c for c in tomllib.load(f)["tool"]["importlinter"]["contracts"]}


def test_the_contracts_that_cannot_be_skipped_are_there():
    """Forbidden contracts (a layers contract lets a module skip a layer): ui and the pages enter
    scansnap.service by the facade only, pages import no scansnap.core, core and paper import no service;
    and no import cycle anywhere, imports inside functions included (grimp reads those too)."""
    kinds = {c["type"] for c in _contracts().values()}
    assert {"forbidden", "acyclic_siblings"} <= kinds
    forbidden = [c for c in _contracts().values() if c["type"] == "forbidden"]
    door = next(c for c in forbidden if c["forbidden_modules"] == ["scansnap.service", "scansnap.kinds.*.service"])
    assert set(door["source_modules"]) == {"scansnap.ui", "scansnap.app_pages", "scansnap.kinds.*.ui"}
    assert {i.split(" -> ")[1] for i in door["ignore_imports"]} == {"scansnap.service.facade"}
    assert any(
        "scansnap.app_pages" in c["source_modules"] and "scansnap.core" in c["forbidden_modules"] for c in forbidden
    )
    assert any(
        {"scansnap.core", "scansnap.paper"} <= set(c["source_modules"]) and "scansnap.service" in c["forbidden_modules"]
        for c in forbidden
    )
    cycles = next(c for c in _contracts().values() if c["type"] == "acyclic_siblings")
    assert set(cycles["ancestors"]) >= {"scansnap", "scansnap.ui"}
    by_type = {c["type"]: c for c in _contracts().values() if c["type"] in ("independence", "protected")}
    assert by_type["independence"]["modules"] == ["scansnap.kinds.*"]  # every kind's package
    assert by_type["protected"]["protected_modules"] == ["scansnap.kinds"]
    inside = [c for c in _contracts().values() if c["type"] == "layers" and c.get("containers") == ["scansnap.kinds.*"]]
    assert inside and inside[0]["layers"] == ["(ui)", "(service)", "(paper)", "(science)"]


def _service_attributes(path: Path) -> list[str]:
    """``service().store`` / ``service().jobs`` read in a module: the facade's insides, not its door."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        call = node.value if isinstance(node, ast.Attribute) and node.attr in ("store", "jobs") else None
        if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "service":
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} service().{node.attr}")
    return found


def test_pages_read_runs_through_the_facade_not_its_store_or_job_manager():
    assert _service_attributes(ROOT / "tests" / "oracles" / "facade_bypass.py")  # the rule can fail
    web = [PKG / "ui", PKG / "app_pages", *(PKG / "kinds").glob("*/ui")]
    ui = [p for d in web for p in d.rglob("*.py")] + [PKG / "app.py"]
    assert not [x for p in ui for x in _service_attributes(p)]


def test_the_web_process_never_loads_torch(tmp_path):
    """Every ui module imported, then every page rendered (AppTest) in a fresh interpreter."""
    env = {**os.environ, "SCANSNAP_DATA_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(PAGES)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-3000:]
    found = json.loads(out.stdout.strip().splitlines()[-1])
    assert found["errors"] == [], found["errors"]
    assert found["torch"] == [], "the web process imported torch"
    assert len(PAGES) == 7


MAX_FUNCTION_LINES = 50
SOURCES = sorted(PKG.rglob("*.py"))


def _too_long(path: Path, root: Path = ROOT) -> list[str]:
    """Each function (or method) over :data:`MAX_FUNCTION_LINES`, counted from its ``def`` to its last line."""
    src = path.read_text()
    name = str(path.relative_to(root))
    found = []
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{name}:{node.lineno} {node.name}() {length} lines")
    return found


def test_no_function_over_50_lines(tmp_path):
    assert len(SOURCES) > 100  # the rooms were found
    long = tmp_path / "long.py"  # the rule can fail: a 51-line function breaks it
    long.write_text("def f():\n" + "    x = 1\n" * 49 + "    return x\n")
    assert _too_long(long, tmp_path) == ["long.py:1 f() 51 lines"]
    offenders = [x for p in SOURCES for x in _too_long(p)]
    assert not offenders, offenders
