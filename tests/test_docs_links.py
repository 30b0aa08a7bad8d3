"""The README, a front door of at most 150 lines, and every page of docs/: each relative link names a file of the
repository, and each page of docs/ is linked from the README (the front door reaches all of them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)\s]*)?\)")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def test_every_relative_link_of_the_readme_and_the_docs_names_a_file():
    broken = []
    for page in PAGES:
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if not re.match(r"[a-z]+:", target) and not (page.parent / target).exists():
                broken.append(f"{page.relative_to(ROOT)} → {target}")
    assert len(PAGES) > 5 and not broken, broken


def test_the_readme_links_every_page_of_docs():
    linked = {Path(t).name for t in LINK.findall((ROOT / "README.md").read_text(encoding="utf-8"))}
    assert not [p.name for p in PAGES[1:] if p.name not in linked]


def test_the_readme_is_a_front_door_of_at_most_150_lines():
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 150
