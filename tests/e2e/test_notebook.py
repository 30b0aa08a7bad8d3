"""examples/quickstart.ipynb runs top to bottom in a fresh kernel (nbclient), its runs stored in a data
folder of the test's own: every cell without an error, and what it shows is what the cell asks for."""

from __future__ import annotations

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

pytestmark = pytest.mark.e2e
ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK = ROOT / "examples" / "quickstart.ipynb"
CELL_GUARD_S = 600  # a hang detector per cell, not a claim


def _text(cell) -> str:
    """What a code cell showed: its text/plain results and printed streams."""
    parts = []
    for out in cell.get("outputs", []):
        parts.append(out.get("text", ""))
        parts.append(out.get("data", {}).get("text/plain", ""))
    return "\n".join(parts)


def test_the_example_notebook_runs_in_a_fresh_kernel(tmp_path, monkeypatch):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(c.get("outputs") for c in nb.cells if c.cell_type == "code"), "commit the notebook without outputs"
    monkeypatch.setenv("SCANSNAP_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    NotebookClient(
        nb, timeout=CELL_GUARD_S, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    shown = {i: _text(c) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    sources = {i: nb.cells[i].source for i in shown}
    first = next(i for i, s in sources.items() if s.endswith("ss.presets()"))
    assert "'lecture'" in shown[first] and "'text-fig7-1layer-live'" in shown[first]
    trained = next(i for i, s in sources.items() if s.startswith("run = ss.train"))
    assert "<scansnap.Run" in shown[trained] and "finished at step 1000" in shown[trained]
    figures = [i for i, s in sources.items() if ".figure(" in s]
    assert len(figures) == 4
    for i in figures:
        kinds = {mime for out in nb.cells[i].outputs for mime in out.get("data", {})}
        assert "application/vnd.plotly.v1+json" in kinds, (sources[i], kinds)
    verdicts = next(i for i, s in sources.items() if "run.verdicts()" in s)
    assert "pass" in shown[verdicts]
    assert "layer 0: " in shown[next(i for i, s in sources.items() if s == "text.verdicts()")]
    assert (tmp_path / "data" / "runs.sqlite").is_file()
