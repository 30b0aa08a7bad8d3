"""Two reproductions' outputs compared: the same verdicts and data files, every number to the last digit
(the pool's workers, a Ray node's and this process each compute with one torch thread and one BLAS thread,
and nothing in the items reads memory it did not write: scansnap.kinds.synthetic.science.model.solve_gram)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd


def assert_same_reproduction(got: Path, want: Path) -> None:
    """``got``'s verdicts.json and data files equal ``want``'s, bit for bit (wall times and dates aside)."""
    a, b = (json.loads((d / "verdicts.json").read_text()) for d in (want, got))
    assert len(a["verdicts"]) == len(b["verdicts"]) and b["all_passed"] == a["all_passed"]
    for x, y in zip(a["verdicts"], b["verdicts"], strict=True):
        assert x == y, x["claim"]
    assert sorted(a["data_files"]) == sorted(b["data_files"])
    for rel in a["data_files"]:
        pd.testing.assert_frame_equal(pd.read_parquet(got / rel), pd.read_parquet(want / rel), check_exact=True)
