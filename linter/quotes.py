"""Finding a defect's quote in the artifact as fixture-format.md says ("How a quote is
found in the artifact"); matches are offsets of the original text.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple


class NormalizedText(NamedTuple):
    """``text`` normalized, with ``origin[i]`` the original offset where
    ``text[i]`` starts and ``ends[i]`` where it ends (a composed character may
    come from several original ones)."""

    text: str
    origin: tuple[int, ...]
    ends: tuple[int, ...]


def _chunks(text: str):
    """Yield (start, end) of base-plus-combining character runs."""
    start = 0
    for index in range(1, len(text) + 1):
        if index == len(text) or not unicodedata.combining(text[index]):
            yield start, index
            start = index


def normalize_for_quotes(text: str) -> NormalizedText:
    """Collapse whitespace runs to one space and apply NFC, keeping an offset map."""
    chars: list[str] = []
    origin: list[int] = []
    ends: list[int] = []
    in_space = False
    if unicodedata.is_normalized("NFC", text):
        pieces = ((i, i + 1, c) for i, c in enumerate(text))
    else:
        pieces = ((s, e, unicodedata.normalize("NFC", text[s:e])) for s, e in _chunks(text))
    for start, end, piece in pieces:
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
            ends.append(end)
    return NormalizedText("".join(chars), tuple(origin), tuple(ends))


def normalize_quote(quote: str) -> str:
    """A quote in the comparison form (trimmed)."""
    return " ".join(unicodedata.normalize("NFC", quote).split())


class QuoteMatch(NamedTuple):
    """Where a quote occurs: original offsets of each occurrence."""

    quote: str
    occurrences: tuple[tuple[int, int], ...]

    @property
    def found(self) -> bool:
        """Present: found exactly once."""
        return len(self.occurrences) == 1

    @property
    def ambiguous(self) -> bool:
        """Found more than once."""
        return len(self.occurrences) > 1


def find_quote(artifact: str, quote: str) -> QuoteMatch:
    """Every occurrence of ``quote`` in ``artifact``, overlapping ones included.
    An NFC artifact is searched in place: verbatim when that finds every
    occurrence, else for the quote's words joined by ``\\s+`` (:meth:`str.isspace`);
    any other is normalized first (:func:`normalize_for_quotes`)."""
    wanted = normalize_quote(quote)
    occurrences = []
    if not wanted:
        return QuoteMatch(quote, ())
    if unicodedata.is_normalized("NFC", artifact):
        verbatim = _find_all(artifact, wanted)
        # Each verbatim occurrence is one of the whitespace-collapsed text's, and
        # each of those holds the quote's longest word where the artifact does
        # (collapsing moves no other character): when the artifact holds that word
        # no more often than the quote, or else as often collapsed, they are all
        # (no regex to compile: ~0.1 ms a quote; collapsing the artifact's
        # whitespace, ~30 us, only when the word is more frequent).
        if (len(verbatim) == len(_find_all(artifact, max(wanted.split(" "), key=len)))
                or len(verbatim) == len(_find_all(" ".join(artifact.split()), wanted))):
            return QuoteMatch(quote, tuple((start, start + len(wanted)) for start in verbatim))
        pattern = re.compile(r"\s+".join(map(re.escape, wanted.split(" "))))
        match = pattern.search(artifact)
        while match is not None:
            occurrences.append(match.span())
            match = pattern.search(artifact, match.start() + 1)
        return QuoteMatch(quote, tuple(occurrences))
    normalized = normalize_for_quotes(artifact)
    for index in _find_all(normalized.text, wanted):
        occurrences.append((normalized.origin[index], normalized.ends[index + len(wanted) - 1]))
    return QuoteMatch(quote, tuple(occurrences))


def _find_all(text: str, wanted: str) -> list[int]:
    """Where ``wanted`` starts in ``text``, overlapping occurrences included."""
    found = []
    index = text.find(wanted)
    while index != -1:
        found.append(index)
        index = text.find(wanted, index + 1)
    return found
