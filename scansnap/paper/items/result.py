"""What a reproduce item returns (no torch here: the report renderer and the web process read it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pandas as pd
import plotly.graph_objects as go

from scansnap.paper.verdicts import Verdict

Progress = Callable[[int], None]  # called with the number of optimiser steps just done


@dataclass
class ItemResult:
    """One reproduced item: tidy data, figures (caption, figure), verdicts and the exact configs."""

    name: str
    title: str
    verdicts: list[Verdict]
    data: dict[str, pd.DataFrame]
    figures: list[tuple[str, go.Figure]]
    configs: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def passed(self) -> bool:
        """No verdict failed (a claim that does not apply, ``n/a``, does not fail the item)."""
        return all(v.status != "fail" for v in self.verdicts)
