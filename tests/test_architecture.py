"""Import contracts: engine/ never imports streamlit; the UI (app.py, app_pages/, ui/) never imports torch."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def files(*parts: str) -> list[Path]:
    out: list[Path] = []
    for p in parts:
        q = ROOT / p
        out += sorted(q.rglob("*.py")) if q.is_dir() else [q] if q.exists() else []
    return out


@pytest.mark.parametrize("path", files("engine"), ids=lambda p: str(p.relative_to(ROOT)))
def test_engine_never_imports_streamlit(path):
    assert "streamlit" not in imported_modules(path)


@pytest.mark.parametrize("path", files("app.py", "app_pages", "ui"), ids=lambda p: str(p.relative_to(ROOT)))
def test_ui_never_imports_torch(path):
    assert not {"torch", "numpy.linalg"} & imported_modules(path)


def test_contract_checker_sees_imports(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import os\nfrom streamlit.testing import v1\nimport torch.nn as nn\n")
    assert {"streamlit", "torch", "os"} <= imported_modules(bad)
