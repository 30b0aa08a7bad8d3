"""Stored reproductions: ``<data_dir>/reproductions/<id>/`` holds report.html, verdicts.json,
data/*.parquet (:func:`engine.paper.report.write_report`), configs.json ({item: configs}),
figures/index.json ([{item, k, caption}]) and figures/<item>_<k>.json (plotly JSON).

A reproduction is written into ``.tmp-<id>/`` by its worker and renamed into place at the end, so
a stopped, failed or killed one is never listed.  Ids are ``YYYYMMDD-HHMMSS-xxxxxx`` (UTC start
time, 6 hex digits) and every path is built from an id that matched :data:`ID_RE` in full, so no
text from a URL or a widget reaches a path outside ``<data_dir>/reproductions``.  Running one is
the job manager's business (:mod:`engine.service.jobs`, :mod:`engine.service.reproduction_run`).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.paper.items.catalog import ITEMS

ID_RE = re.compile(r"[0-9]{8}-[0-9]{6}-[0-9a-f]{6}")
SUBDIR = "reproductions"
FILES = ("report.html", "verdicts.json")


def check_id(rid: object) -> str:
    """``rid`` if it is a reproduction id (``YYYYMMDD-HHMMSS-xxxxxx``), else ValueError."""
    if not isinstance(rid, str) or not ID_RE.fullmatch(rid):
        raise ValueError(f"{str(rid)[:80]!r} is not a reproduction id (expected YYYYMMDD-HHMMSS-xxxxxx)")
    return rid


def new_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + "-" + secrets.token_hex(3)


@dataclass(frozen=True)
class StoredSummary:
    """One line of the list of stored reproductions."""

    id: str
    created: str
    quick: bool
    items: tuple[str, ...]
    n_verdicts: int
    n_failed: int


@dataclass(frozen=True)
class StoredFigure:
    item: str
    caption: str
    figure: dict[str, Any]  # plotly JSON (data, layout)


@dataclass(frozen=True)
class StoredReproduction:
    id: str
    doc: dict[str, Any]  # verdicts.json
    configs: dict[str, Any]  # item -> exact configs
    figures: list[StoredFigure]


class Reproductions:
    """The stored reproductions of one data directory (read-only but for the worker's writes)."""

    def __init__(self, data_dir: str | Path):
        self.root = Path(data_dir) / SUBDIR

    def path(self, rid: str) -> Path:
        """The directory of a stored reproduction (ValueError unless ``rid`` is an id)."""
        return self.root / check_id(rid)

    def file(self, rid: str, name: str) -> Path:
        """``report.html`` or ``verdicts.json`` of a stored reproduction."""
        if name not in FILES:
            raise ValueError(f"{name!r} is not one of {', '.join(FILES)}")
        return self.path(rid) / name

    def exists(self, rid: str) -> bool:
        return (self.path(rid) / "verdicts.json").is_file()

    def stored(self) -> list[StoredSummary]:
        """Every stored reproduction, newest first (unreadable ones are skipped)."""
        if not self.root.is_dir():
            return []
        out = []
        for p in sorted(
            (p for p in self.root.iterdir() if ID_RE.fullmatch(p.name)), key=lambda p: p.name, reverse=True
        ):
            try:
                doc = json.loads((p / "verdicts.json").read_text(encoding="utf-8"))
                out.append(
                    StoredSummary(
                        p.name,
                        str(doc["created"]),
                        bool(doc["quick"]),
                        tuple(i["name"] for i in doc["items"]),
                        int(doc["n_verdicts"]),
                        int(doc["n_failed"]),
                    )
                )
            except (OSError, ValueError, KeyError, TypeError):
                continue
        return out

    def load(self, rid: str) -> StoredReproduction:
        """A stored reproduction: verdicts doc, configs and figures (KeyError if not stored)."""
        path = self.path(rid)
        if not (path / "verdicts.json").is_file():
            raise KeyError(f"no stored reproduction {rid!r}")
        doc = json.loads((path / "verdicts.json").read_text(encoding="utf-8"))
        configs = json.loads((path / "configs.json").read_text(encoding="utf-8"))
        figures = []
        for e in json.loads((path / "figures" / "index.json").read_text(encoding="utf-8")):
            item, k = str(e["item"]), int(e["k"])
            if item not in ITEMS:  # the file name is built only from a known item and an int
                continue
            fig = json.loads((path / "figures" / f"{item}_{k}.json").read_text(encoding="utf-8"))
            figures.append(StoredFigure(item, str(e["caption"]), fig))
        return StoredReproduction(rid, doc, configs, figures)
