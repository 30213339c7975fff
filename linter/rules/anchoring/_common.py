"""Helpers shared by the anchoring rules (positions in SKILL.md and output-spec.md)."""

from __future__ import annotations

from pathlib import Path

from ...markdown import Heading, Window
from ...textfile import Span


def heading_span(path: Path, heading: Heading) -> Span:
    """The span of ``heading``'s text in the markdown file at ``path``."""
    return Span.at(path, heading.line, heading.column, heading.line, heading.end_column)


def window_lines(window: Window) -> str:
    """``lines A-B`` (or ``line A``) of a window, for messages."""
    if window.start_line == window.end_line:
        return f"line {window.start_line}"
    return f"lines {window.start_line}-{window.end_line}"


def closest(word: str, choices: list[str], limit: int = 3, cutoff: float = 0.75) -> list[str]:
    """Close matches of ``word`` among ``choices``, best first: a case-insensitive
    equal first, then :func:`difflib.get_close_matches` (ratio >= ``cutoff``;
    0.75 keeps ``verdit`` -> ``verdict`` and drops ``severity`` -> ``verdict``)."""
    unique = list(dict.fromkeys(choices))
    exact = [c for c in unique if c.casefold() == word.casefold() and c != word]
    import difflib  # only when a suggestion is made

    close = difflib.get_close_matches(word, unique, n=limit + len(exact), cutoff=cutoff)
    ranked = exact + [c for c in close if c not in exact and c != word]
    return ranked[:limit]


def quoted(words) -> str:
    """``'a', 'b'`` for messages."""
    return ", ".join(repr(w) for w in words)
