"""The text a plotly figure shows (titles, axis and colour-bar titles, legends, annotations, hovers,
category labels), and the two ways it can be unreadable: raw LaTeX (plotly has no MathJax here)
and a metric's code name instead of its registered label."""

from __future__ import annotations

import re
from typing import Any

import plotly.graph_objects as go

from scansnap.core.metrics import METRICS

SHOWN_KEYS = {"text", "name", "hovertemplate", "ticktext", "title", "texttemplate", "x", "y"}
LATEX = ("_{", "\\", "$")
CODE_NAMES = [n for n in METRICS if "_" in n]  # e.g. entropy_distinct, B_hat: never shown as they are


def _walk(node: Any, shown: bool, out: list[str]) -> None:
    if isinstance(node, dict):
        for k, v in node.items():
            if k != "template":  # plotly's theme: colours and fonts, no text of ours
                _walk(v, k in SHOWN_KEYS or (shown and k == "text"), out)
    elif isinstance(node, list | tuple):
        for v in node:
            _walk(v, shown, out)
    elif shown and isinstance(node, str):
        out.append(node)


def figure_texts(fig: Any) -> list[str]:
    """Every string a figure (``go.Figure`` or its dict) displays."""
    spec = fig.to_plotly_json() if isinstance(fig, go.Figure) else fig
    out: list[str] = []
    _walk(spec, False, out)
    return out


def unreadable(texts: list[str]) -> list[str]:
    """The texts with raw LaTeX or a metric's code name (``loss`` or ``accuracy`` alone read as words)."""
    code = re.compile(r"(?<![\w])(" + "|".join(map(re.escape, CODE_NAMES)) + r")(?![\w])")
    return [t for t in texts if any(s in t for s in LATEX) or code.search(t)]
