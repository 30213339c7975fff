"""Words of an artifact, shared by the phrase rules (SE301, SE302) and SE501.

Each has its own notion of a word for the general case (the phrase rules keep
apostrophes inside words and drop HTML; SE501 splits on anything but letters
and digits); for a plain ASCII text without apostrophes both are the runs of
ASCII letters and digits, lowercased, and that split is made once here.
"""

from __future__ import annotations

from functools import lru_cache

_ASCII_LOWER_WORDS = str.maketrans(
    {**{chr(c): " " for c in range(128) if not chr(c).isalnum()},
     **{chr(c): chr(c).lower() for c in range(ord("A"), ord("Z") + 1)}}
)
"""Every ASCII character that is not a letter or digit, as a space; capital
letters lowercased."""


@lru_cache(maxsize=256)
def plain_ascii_words(text: str) -> tuple[str, ...] | None:
    """The lowercased runs of ASCII letters and digits of ``text``, from one
    ``str.translate`` and one ``str.split``; ``None`` unless ``text`` is ASCII
    without apostrophes. Cached by content: the phrase rules and SE501 split
    the same artifacts one rule after the other (the parallel CLI's chunks are
    at most ~250 probes; 256 word lists are ~3 MB)."""
    if not text.isascii() or "'" in text:
        return None
    return tuple(text.translate(_ASCII_LOWER_WORDS).split())
