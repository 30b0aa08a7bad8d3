"""Text from users (URLs, uploads, run names) shown as typed: never as Markdown, a link or an image."""

from __future__ import annotations

import re

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+!|~$])")
MAX_SHOWN = 200  # characters of a user-supplied value shown back (a 100 KB URL value is not echoed)


def plain(text: str, limit: int = 2000) -> str:
    """``text`` with Markdown's special characters escaped (so it shows as typed and never as a link,
    an image or formatting), cut to ``limit`` characters."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit] + f"… ({len(s) - limit:,} more characters)"
    return _MARKDOWN.sub(r"\\\1", s)


def shown(value: object) -> str:
    """A user-supplied value for a message: repr, cut to :data:`MAX_SHOWN` characters."""
    s = repr(value)
    return s if len(s) <= MAX_SHOWN else s[: MAX_SHOWN - 3] + "..."
