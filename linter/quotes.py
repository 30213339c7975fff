"""Finding a defect's quote in the artifact (fixture-format.md, "How a quote is
found in the artifact").

Whitespace runs compare equal to one space and text is compared in NFC. A quote
found more than once is ambiguous and does not count as found. Matches are
mapped back to offsets of the original text, so diagnostics and the editor
can point at them.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from itertools import accumulate
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
        return len(self.occurrences) > 1


_LONG_RUN = re.compile(r"\s\s+")
"""Whitespace runs that collapsing shortens (two characters or more): a lone
newline or tab becomes one space too, but no offset moves for it."""


class _Collapsed:
    """An NFC text with whitespace runs collapsed to one space (``text``), and
    :meth:`original` to map an offset of it back to the source text."""

    __slots__ = ("source", "text", "_map")

    def __init__(self, source: str, text: str) -> None:
        self.source = source
        self.text = text
        self._map: tuple[tuple[int, ...], tuple[int, ...]] | None = None

    def original(self, offset: int) -> int:
        if self._map is None:
            self._map = _run_map(self.source)
        run_starts, extra = self._map
        index = bisect.bisect_right(run_starts, offset - 1) - 1
        return offset + (extra[index] if index >= 0 else 0)


def _run_map(text: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(run_starts, extra)``: ``run_starts[k]`` is where the k-th whitespace
    run that collapsing shortens starts in the collapsed text, ``extra[k]``
    how many characters the runs up to and including it removed. Built only
    for a quote found in a way the source does not spell verbatim."""
    spans = [match.span() for match in _LONG_RUN.finditer(text)]
    extra = tuple(accumulate([end - start - 1 for start, end in spans]))
    starts = tuple([start - removed + (end - start - 1) for (start, end), removed in zip(spans, extra)])
    return starts, extra


def _collapse(text: str) -> _Collapsed:
    """``text`` with each whitespace run as one space. ``str.split`` and
    ``str.isspace`` share the regex ``\\s`` definition of whitespace, and
    splitting is faster than a regex substitution here (docs/performance.md)."""
    collapsed = " ".join(text.split())
    if text[:1].isspace():
        collapsed = " " + collapsed
    if text[-1:].isspace() and len(text) > 1 and not text.isspace():
        collapsed += " "
    return _Collapsed(text, collapsed)


def _find_all(text: str, wanted: str) -> list[int]:
    """Where ``wanted`` starts in ``text``, overlapping occurrences included."""
    found = []
    index = text.find(wanted)
    while index != -1:
        found.append(index)
        index = text.find(wanted, index + 1)
    return found


def find_quote(artifact: str, quote: str) -> QuoteMatch:
    """Every occurrence of ``quote`` in ``artifact`` (overlapping ones included).

    Fast path (the artifact already NFC, the usual case): whitespace runs are
    collapsed once per artifact with C-speed regex substitution, occurrences
    are found with ``str.find``, and offsets are mapped back by bisection.
    Otherwise the artifact is normalized character by character with an
    offset map (:func:`normalize_for_quotes`).
    """
    wanted = normalize_quote(quote)
    if not wanted:
        return QuoteMatch(quote, ())
    if unicodedata.is_normalized("NFC", artifact):
        collapsed = _collapse(artifact)
        found = _find_all(collapsed.text, wanted)
        verbatim = _find_all(artifact, wanted) if found else []
        if len(verbatim) == len(found):
            # Each verbatim occurrence is one of the collapsed text's (its spaces
            # are single and between non-spaces, so collapsing keeps them):
            # with as many, they are the same, in order, and need no mapping.
            return QuoteMatch(quote, tuple((start, start + len(wanted)) for start in verbatim))
        occurrences = [(collapsed.original(start), collapsed.original(start + len(wanted) - 1) + 1) for start in found]
        return QuoteMatch(quote, tuple(occurrences))
    normalized = normalize_for_quotes(artifact)
    haystack = normalized.text
    occurrences = []
    index = haystack.find(wanted)
    while index != -1:
        end = index + len(wanted)
        occurrences.append((normalized.origin[index], normalized.ends[end - 1]))
        index = haystack.find(wanted, index + 1)
    return QuoteMatch(quote, tuple(occurrences))
