"""The server's settings (.streamlit/config.toml) that the pages rely on."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = [
    ROOT / "scansnap" / "app.py",
    *sorted(p for p in (ROOT / "scansnap" / "app_pages").glob("*.py") if p.name != "__init__.py"),
    *sorted((ROOT / "scansnap" / "kinds").glob("*/ui/page.py")),
]


def _bare_expressions(path: Path) -> list[int]:
    """Lines of expression statements that Streamlit's magic would have shown (not a call, not a docstring)."""
    return [
        n.lineno
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.Expr)
        and not isinstance(n.value, ast.Call | ast.Await | ast.Yield | ast.YieldFrom)
        and not (isinstance(n.value, ast.Constant) and isinstance(n.value.value, str))
    ]


def test_magic_is_off_and_no_page_relies_on_it():
    """Magic parses each page with ``ast`` on its first visit, which is not thread-safe in CPython 3.11
    (cpython#106905: "AST constructor recursion depth mismatch" under the hall's load); with it off, a
    bare expression in a page would show nothing, so there is none."""
    config = tomllib.loads((ROOT / "scansnap" / ".streamlit" / "config.toml").read_text())
    assert config["runner"]["magicEnabled"] is False
    assert {p.name: _bare_expressions(p) for p in PAGES if _bare_expressions(p)} == {}
