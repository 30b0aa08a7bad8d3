"""Text from users (URLs, uploads, run names) shown as typed: never as Markdown, a link or an image."""

from __future__ import annotations

import re
from collections.abc import Iterable

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()<>#+!|~$])")
# Where Markdown would start a link or a directive that no escape stops (GitHub's autolinks of http://…,
# www.… and e-mail addresses, Streamlit's :color[…], :emoji: and :material/…: shortcodes): after a colon
# followed by a letter, digit or slash, after an @ and between "www" and its dot.
_AUTOLINK = re.compile(r"(?<=:)(?=[\w/+-])|(?<=@)|(?<=\bwww)(?=\.)", re.IGNORECASE)
WORD_JOINER = "\u2060"  # invisible, and no word or link character
MAX_SHOWN = 200  # characters of a user-supplied value shown back (a 100 KB URL value is not echoed)


def plain(text: str, limit: int = 2000) -> str:
    """``text`` for any Markdown that Streamlit renders (bodies and widget labels) so that it shows as typed:
    Markdown's special characters escaped, and an invisible word joiner where a link, an e-mail address, a
    colour directive or an emoji would otherwise start (those are found in the text after the escapes are
    undone: no escape stops them).  Never a link, an image or formatting; cut to ``limit`` characters."""
    s = str(text)
    if len(s) > limit:
        s = s[:limit] + f"… ({len(s) - limit:,} more characters)"
    return _AUTOLINK.sub(WORD_JOINER, _MARKDOWN.sub(r"\\\1", s))


def quoted_words(words: Iterable[object], n: int = 8) -> str:
    """The first ``n`` of ``words`` in curly quotes, comma-separated and :func:`plain`: a corpus's tokens
    include punctuation, and ``,, the, ., to`` reads as a typo where ``“,”, “the”, “.”, “to”`` does not."""
    return plain(", ".join(f"“{w}”" for w in list(words)[:n]))


def code(text: str, limit: int = 200) -> str:
    """``text`` as one Markdown code span, shown literally (inside one no escape is undone, so none is added):
    on one line, cut to ``limit`` characters, fenced by more backticks than it holds in a row."""
    s = " ".join(str(text)[:limit].split())
    fence = "`" * (1 + max((len(m) for m in re.findall(r"`+", s)), default=0))
    pad = " " if s[:1] == "`" or s[-1:] == "`" else ""
    return f"{fence}{pad}{s}{pad}{fence}"


def shown(value: object) -> str:
    """A user-supplied value for a message: repr, cut to :data:`MAX_SHOWN` characters."""
    s = repr(value)
    return s if len(s) <= MAX_SHOWN else s[: MAX_SHOWN - 3] + "..."
