"""Finding a defect's quote in the artifact (fixture-format.md, "How a quote is
found in the artifact").

Whitespace runs compare equal to one space and text is compared in NFC. A quote
found more than once is ambiguous and does not count as found. Matches are
mapped back to offsets of the original text, so diagnostics and the editor
can point at them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache


@dataclass(frozen=True)
class NormalizedText:
    """``text`` normalized, with ``origin[i]`` the original offset of ``text[i]``
    and one extra entry for the end."""

    text: str
    origin: tuple[int, ...]


def _chunks(text: str):
    """Yield (start, end) of base-plus-combining character runs."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            yield start, index
            start = index


@lru_cache(maxsize=2048)
def normalize_for_quotes(text: str) -> NormalizedText:
    """Collapse whitespace runs to one space and apply NFC, keeping an offset map."""
    chars: list[str] = []
    origin: list[int] = []
    in_space = False
    if unicodedata.is_normalized("NFC", text):
        pieces = ((i, i + 1, c) for i, c in enumerate(text))
    else:
        pieces = ((s, e, unicodedata.normalize("NFC", text[s:e])) for s, e in _chunks(text))
    for start, _end, piece in pieces:
        for char in piece:
            if char.isspace():
                if in_space:
                    continue
                in_space = True
                chars.append(" ")
            else:
                in_space = False
                chars.append(char)
            origin.append(start)
    origin.append(len(text))
    return NormalizedText("".join(chars), tuple(origin))


def normalize_quote(quote: str) -> str:
    """A quote in the comparison form (trimmed)."""
    return " ".join(unicodedata.normalize("NFC", quote).split())


@dataclass(frozen=True)
class QuoteMatch:
    """Where a quote occurs: original offsets of each occurrence."""

    quote: str
    occurrences: tuple[tuple[int, int], ...]

    @property
    def found(self) -> bool:
        """Present: found exactly once."""
        return len(self.occurrences) == 1

    @property
    def ambiguous(self) -> bool:
        return len(self.occurrences) > 1


@lru_cache(maxsize=4096)
def _quote_pattern(wanted: str) -> "re.Pattern[str]":
    """A regex matching ``wanted`` with any whitespace run between its words,
    inside a lookahead so that overlapping occurrences are all found."""
    words = wanted.split(" ")
    body = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"(?=({body}))")


def find_quote(artifact: str, quote: str) -> QuoteMatch:
    """Every occurrence of ``quote`` in ``artifact`` (overlapping ones included).

    Fast path (both texts already NFC, the usual case): one regex over the
    original text, so offsets need no mapping. Otherwise the artifact is
    normalized with an offset map (:func:`normalize_for_quotes`).
    """
    wanted = normalize_quote(quote)
    if not wanted:
        return QuoteMatch(quote, ())
    if unicodedata.is_normalized("NFC", artifact):
        pattern = _quote_pattern(wanted)
        return QuoteMatch(quote, tuple((m.start(1), m.end(1)) for m in pattern.finditer(artifact)))
    normalized = normalize_for_quotes(artifact)
    haystack = normalized.text
    occurrences = []
    index = haystack.find(wanted)
    while index != -1:
        end = index + len(wanted)
        occurrences.append((normalized.origin[index], normalized.origin[end - 1] + 1))
        index = haystack.find(wanted, index + 1)
    return QuoteMatch(quote, tuple(occurrences))
