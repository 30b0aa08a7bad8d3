"""A reproduction stored exactly as a worker stores it (``reproduction_run.write``: one item, one verdict,
one figure), optionally with its ``verdicts.json`` damaged afterwards (a field removed or of a wrong
type), for the tests of reading stored reproductions (service and page)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly.graph_objects as go

from scansnap.paper.items.result import ItemResult
from scansnap.paper.verdicts import Verdict, judge
from scansnap.service.reproduction_run import write
from scansnap.service.reproductions import SUBDIR

Damage = Callable[[Any], Any]  # verdicts.json's document → the document to store instead


def store_reproduction(
    data_dir: str | Path, rid: str, damage: Damage | None = None, verdicts: list[Verdict] | None = None
) -> Path:
    """Store reproduction ``rid`` under ``data_dir`` (``verdicts``, default 1 passing); ``damage`` rewrites its
    verdicts.json."""
    verdicts = verdicts or [judge("fig9", "B_n(t0) does not depend on eta_Z", "spread", 0.01, "<", 0.05)]
    fig = go.Figure(go.Scatter(x=[0, 1], y=[0, 1]), layout={"title": {"text": "Fig. 9"}})
    result = ItemResult("fig9", "Fig. 9", verdicts, {}, [("the curve", fig)], {"eta_z": [1, 2]}, wall_s=0.5)
    out = Path(data_dir) / SUBDIR / rid
    write([result], out, quick=False)
    if damage is not None:
        path = out / "verdicts.json"
        path.write_text(json.dumps(damage(json.loads(path.read_text(encoding="utf-8")))), encoding="utf-8")
    return out


def without(*path: str | int) -> Damage:
    """A damage: remove the field at ``path`` (keys and list indices)."""

    def damage(doc: Any) -> Any:
        node = doc
        for k in path[:-1]:
            node = node[k]
        del node[path[-1]]
        return doc

    return damage


def setting(value: Any, *path: str | int) -> Damage:
    """A damage: the field at ``path`` set to ``value`` (e.g. of a wrong type)."""

    def damage(doc: Any) -> Any:
        node = doc
        for k in path[:-1]:
            node = node[k]
        node[path[-1]] = value
        return doc

    return damage
