"""Join codes: a hall follows its lecturer's runs by one short code that exists before the first run.

A code names an owner, not a run: ``follow_code(owner)`` is the first 6 letters of the base-32
SHA-256 of the owner id, so the code says nothing about the owner's cookie and stays the same for
every run that browser starts.  A student's page with ``?follow=CODE`` shows the newest published run
of that owner (of the page's kind), and moves to the next one when the lecturer starts it.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections.abc import Iterable
from typing import Any

CODE_LEN = 6
CODE_RE = re.compile(rf"[A-Z2-7]{{{CODE_LEN}}}")  # base 32: capitals and 2–7, no 0/O or 1/I to confuse


def follow_code(owner: str) -> str:
    """The join code of ``owner``'s runs: base32(SHA-256("follow:" + owner))[:6]."""
    digest = hashlib.sha256(f"follow:{owner}".encode()).digest()
    return base64.b32encode(digest).decode()[:CODE_LEN]


def code_problem(code: str) -> str | None:
    """Why ``code`` cannot be a join code (None when it has the form of one; case is ignored)."""
    if CODE_RE.fullmatch(code.strip().upper()):
        return None
    return f"is not a join code: {CODE_LEN} letters and digits 2–7, as the lecturer's screen shows them"


def followed(published: Iterable[dict[str, Any]], code: str, kind: str) -> dict[str, Any] | None:
    """The first run of ``published`` (newest first) of ``kind`` whose owner's join code is ``code``."""
    code = code.strip().upper()
    for run in published:
        if run["kind"] == kind and run["owner"] and follow_code(run["owner"]) == code:
            return run
    return None
