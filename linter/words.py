"""Words of an artifact, shared by the phrase rules (SE301, SE302) and SE501.

Each has its own notion of a word for the general case (the phrase rules keep
apostrophes inside words and drop HTML; SE501 splits on anything but letters
and digits); for a plain ASCII text without apostrophes both are the runs of
ASCII letters and digits, lowercased, and that split is made once here.
"""

from __future__ import annotations

from collections import OrderedDict

_ASCII_LOWER_WORDS = str.maketrans(
    {**{chr(c): " " for c in range(128) if not chr(c).isalnum()},
     **{chr(c): chr(c).lower() for c in range(ord("A"), ord("Z") + 1)}}
)
"""Every ASCII character that is not a letter or digit, as a space; capital
letters lowercased."""

_RECENT: OrderedDict[str, tuple[str, ...]] = OrderedDict()
"""The word lists of the last :data:`RECENT_TEXTS` texts split with
``remember=True``, oldest first."""

RECENT_TEXTS = 256
"""How many word lists :data:`_RECENT` keeps: a chunk of the parallel CLI is
at most ~250 probes (256 lists take little memory: docs/performance.md)."""

RECENT_CHARS = 2_000_000
"""How many characters of text :data:`_RECENT`'s word lists may come from in
all (a word list takes several times the memory of its text, and 256 large
artifacts' lists kept a lot: docs/performance.md); a longer text is split
each time it is asked."""

_recent_chars = [0]


def plain_ascii_words(text: str, remember: bool = True) -> tuple[str, ...] | None:
    """The lowercased runs of ASCII letters and digits of ``text``, from one
    ``str.translate`` and one ``str.split``; ``None`` unless ``text`` is ASCII
    without apostrophes.

    The phrase rules split with ``remember=True`` and SE501 asks after them
    with ``remember=False``: it reuses their split of the same artifact but
    adds none of its own (the language server computes SE501's facts for
    every probe of the workspace, and a cache it filled would stay resident)."""
    words = _RECENT.get(text)
    if words is not None:
        return words
    if not text.isascii() or "'" in text:
        return None
    words = tuple(text.translate(_ASCII_LOWER_WORDS).split())
    if remember and len(text) <= RECENT_CHARS:
        _recent_chars[0] += len(text)
        while _RECENT and (len(_RECENT) >= RECENT_TEXTS or _recent_chars[0] > RECENT_CHARS):
            try:
                oldest, _words = _RECENT.popitem(last=False)
            except KeyError:
                break  # another thread emptied it
            _recent_chars[0] -= len(oldest)
        _RECENT[text] = words
    return words
