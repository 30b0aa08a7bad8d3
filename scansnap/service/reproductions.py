"""Stored reproductions: ``<data_dir>/reproductions/<id>/`` holds report.html, verdicts.json,
data/*.parquet (:func:`scansnap.paper.report.write_report`), configs.json ({item: configs}),
figures/index.json ([{item, k, caption}]) and figures/<item>_<k>.json (plotly JSON).

A reproduction is written into ``.tmp-<id>/`` by its worker and renamed into place at the end, so
a stopped, failed or killed one is never listed.  Ids are ``YYYYMMDD-HHMMSS-xxxxxx`` (UTC start
time, 6 hex digits) and every path is built from an id that matched :data:`ID_RE` in full, so no
text from a URL or a widget reaches a path outside ``<data_dir>/reproductions``.  Running one is
the job manager's business (:mod:`scansnap.service.jobs`, :mod:`scansnap.service.reproduction_run`).
"""

from __future__ import annotations

import json
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from scansnap.paper.items.catalog import ITEMS
from scansnap.paper.verdicts import Tally

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


class _Doc(BaseModel):
    model_config = ConfigDict(extra="allow")  # what the page does not read is kept as it is


class ItemDoc(_Doc):
    name: str
    title: str
    passed: bool
    wall_s: float
    notes: list[str] = []


class VerdictDoc(_Doc):
    item: str
    claim: str
    statistic: str
    value: float | None
    threshold: str
    passed: bool
    status: Literal["pass", "fail", "n/a"] | None = None  # reports stored before verdicts had a status
    detail: str = ""
    reason: str = ""
    conditions: list[str] = []


class VerdictsDoc(_Doc):
    """What the Reproduce page reads of a stored ``verdicts.json`` (:func:`scansnap.paper.report.summary`)."""

    created: str
    quick: bool
    quick_differences: list[str] = []
    n_verdicts: int
    n_failed: int
    wall_s: float  # n_passed and n_na: counted from ``verdicts`` (reports stored before them lack the two)
    items: list[ItemDoc]
    verdicts: list[VerdictDoc]
    versions: dict[str, str] = {}
    device: str = "not recorded"


def doc_tally(doc: dict[str, Any]) -> Tally:
    """A stored reproduction's pass / fail / n/a counts, from its verdicts (a verdict stored before
    verdicts had a status is a pass or a fail)."""
    return Tally.of(v["status"] or ("pass" if v["passed"] else "fail") for v in doc["verdicts"])


class FigureEntry(BaseModel):
    item: str
    k: int
    caption: str


class DamagedError(ValueError):
    """A stored reproduction whose files are missing, not JSON, or lack fields (the message says which)."""


def problems(e: ValidationError, limit: int = 3) -> str:
    """A pydantic error as a sentence: each wrong field's place and what is wrong (at most ``limit``)."""
    said = []
    for err in e.errors()[:limit]:
        where = "".join(f"[{x}]" if isinstance(x, int) else f".{x}" for x in err["loc"]).lstrip(".")
        if err["type"] == "missing":
            what = "missing"
        elif err["type"] in ("model_type", "dict_type"):
            what = "not a JSON object"
        else:
            what = err["msg"][:1].lower() + err["msg"][1:]
        said.append(f"{where or 'the document'}: {what}")
    more = f" (and {e.error_count() - limit} more)" if e.error_count() > limit else ""
    return "; ".join(said) + more


def read_doc(path: Path) -> dict[str, Any]:
    """A stored ``verdicts.json`` checked against :class:`VerdictsDoc` (defaults filled in), or
    :class:`DamagedError` saying what is wrong with it."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return VerdictsDoc.model_validate(raw).model_dump()
    except OSError as e:
        raise DamagedError(f"{path.name} cannot be read ({e.strerror or e})") from None
    except json.JSONDecodeError as e:
        raise DamagedError(f"{path.name} is not JSON ({e.msg} at line {e.lineno})") from None
    except ValidationError as e:
        raise DamagedError(f"{path.name} does not hold a reproduction's verdicts: {problems(e)}") from None


@dataclass(frozen=True)
class StoredSummary:
    """One line of the list of stored reproductions; ``problem``: why a damaged one cannot be shown."""

    id: str
    created: str
    quick: bool
    items: tuple[str, ...]
    counts: Tally = field(default_factory=lambda: Tally(0, 0, 0))
    problem: str | None = None


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
        """Every stored reproduction, newest first; a damaged one (its ``verdicts.json`` unreadable or
        lacking fields) is listed with its ``problem``, a folder without ``verdicts.json`` is not."""
        if not self.root.is_dir():
            return []
        out = []
        for p in sorted(
            (p for p in self.root.iterdir() if ID_RE.fullmatch(p.name)), key=lambda p: p.name, reverse=True
        ):
            if not (p / "verdicts.json").is_file():
                continue
            try:
                doc = read_doc(p / "verdicts.json")
            except DamagedError as e:
                out.append(StoredSummary(p.name, "", False, (), problem=str(e)))
                continue
            names = tuple(i["name"] for i in doc["items"])
            out.append(StoredSummary(p.name, doc["created"], doc["quick"], names, doc_tally(doc)))
        return out

    def load(self, rid: str) -> StoredReproduction:
        """A stored reproduction: verdicts doc (checked, defaults filled in), configs and figures;
        KeyError if not stored, :class:`DamagedError` saying what is wrong if a file is damaged."""
        path = self.path(rid)
        if not (path / "verdicts.json").is_file():
            raise KeyError(f"no stored reproduction {rid!r}")
        doc = read_doc(path / "verdicts.json")
        configs = _json(path / "configs.json", dict)
        figures = []
        for e in _json(path / "figures" / "index.json", list):
            try:
                entry = FigureEntry.model_validate(e)
            except ValidationError as err:
                raise DamagedError(f"figures/index.json has an entry that is not a figure: {problems(err)}") from None
            if entry.item not in ITEMS:  # the file name is built only from a known item and an int
                continue
            fig = _json(path / "figures" / f"{entry.item}_{entry.k}.json", dict)
            figures.append(StoredFigure(entry.item, entry.caption, fig))
        return StoredReproduction(rid, doc, configs, figures)


def _json(path: Path, kind: type) -> Any:
    """A stored JSON file that must hold a ``kind`` (dict or list), else :class:`DamagedError`."""
    where = f"{path.parent.name}/{path.name}" if path.parent.name == "figures" else path.name
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise DamagedError(f"{where} cannot be read ({e.strerror or e})") from None
    except json.JSONDecodeError as e:
        raise DamagedError(f"{where} is not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(value, kind):
        raise DamagedError(f"{where} holds a {type(value).__name__}, not a JSON {'object' if kind is dict else 'list'}")
    return value
