"""Two reproductions' outputs compared: the same verdicts and data files, numbers equal to 1e-9 relative.
Not bit for bit: a few float64 metrics of the ``theorems`` item (B̂, Δz, the entropies of its 2000-step
Theorem 4 run) move in their 16th digit from one process to the next, on one machine, with the same thread
counts, while the trained z stays bit for bit the same; with address-space randomisation off
(``setarch -R``) three runs agreed to the last digit, so the rounding depends on where memory lies."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd


def assert_same_reproduction(got: Path, want: Path) -> None:
    """``got``'s verdicts.json and data files equal ``want``'s (numbers to 1e-9 relative)."""
    a, b = (json.loads((d / "verdicts.json").read_text()) for d in (want, got))
    assert len(a["verdicts"]) == len(b["verdicts"]) and b["all_passed"] == a["all_passed"]
    for x, y in zip(a["verdicts"], b["verdicts"], strict=True):
        value_x, value_y = x.pop("value"), y.pop("value")
        assert x == y
        if isinstance(value_x, float) and isinstance(value_y, float):
            np.testing.assert_allclose(value_y, value_x, rtol=1e-9, err_msg=x["claim"])
        else:
            assert value_x == value_y, x["claim"]
    assert sorted(a["data_files"]) == sorted(b["data_files"])
    for rel in a["data_files"]:
        pd.testing.assert_frame_equal(
            pd.read_parquet(got / rel), pd.read_parquet(want / rel), check_exact=False, rtol=1e-9
        )
