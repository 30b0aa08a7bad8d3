"""Every "science §N" the code cites resolves to a heading of docs/science.md (``## §N …`` or ``### §N …``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# "science §4.1", and each number of "science §6.1, §6.4", "science §5–§7", "science §2.3–2.5"
CITED = re.compile(r"science (§\d+[a-z]?(?:\.\d+)?(?:\s*(?:,|–|-|and)\s*§?\d+[a-z]?(?:\.\d+)?)*)")
NUMBER = re.compile(r"\d+[a-z]?(?:\.\d+)?")
HEADING = re.compile(r"^#{2,3} §(\d+[a-z]?(?:\.\d+)?) \S", re.MULTILINE)
SOURCES = ("scansnap", "bench", "tests", "scripts")


def cited() -> dict[str, list[str]]:
    """Each cited section, with the files that cite it."""
    out: dict[str, list[str]] = {}
    files = [*(p for d in SOURCES for p in sorted((ROOT / d).rglob("*.py")))]
    for path in files:
        if not path.is_file():
            continue
        for phrase in CITED.findall(path.read_text(encoding="utf-8")):
            for number in NUMBER.findall(phrase):
                out.setdefault(number, []).append(str(path.relative_to(ROOT)))
    return out


def test_every_cited_section_of_the_science_is_a_heading_of_docs_science_md():
    headings = set(HEADING.findall((ROOT / "docs" / "science.md").read_text(encoding="utf-8")))
    refs = cited()
    assert len(refs) > 10  # the code cites it throughout: a pattern that found none would pass vacuously
    missing = {n: files[:3] for n, files in refs.items() if n not in headings}
    assert not missing, f"cited but not a heading of docs/science.md: {missing}"
