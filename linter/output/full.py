"""``--output-format full``: ruff's ``full`` format, the default on a terminal: each
diagnostic's ``text`` line, the source line with a caret under the span, the fix's title
as ``= help:``, and its related locations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..diagnostics import Diagnostic
from . import encodable
from .style import BLUE, BOLD, PLAIN, SEVERITY_COLOURS, Style
from .text import header, related_lines, summary

NO_SOURCE = frozenset({"SE004", "SE005"})
"""Codes whose file is not to be read again (outside the workspace, or no readable text)."""

TAB_WIDTH = 4


def render(diagnostics: Sequence[Diagnostic], checked: int, fixed: int = 0, style: Style = PLAIN,
           with_summary: bool = True, roots: Sequence[Path] = ()) -> str:
    """The report, source lines read below the nearest of ``roots`` (the workspace roots) only."""
    sources: dict[Path, list[str] | None] = {}
    lines: list[str] = []
    roots = sorted(roots, key=lambda root: len(root.parts), reverse=True)  # the nearest root first
    for d in diagnostics:
        lines.append(header(d, style))
        lines.extend(_snippet(d, sources, style, roots))
        lines.extend(related_lines(d))
        lines.append("")
    if with_summary:
        lines.extend(summary(diagnostics, checked, fixed))
    return encodable("\n".join(lines))


def _snippet(d: Diagnostic, sources: dict, style: Style, roots: Sequence[Path]) -> list[str]:
    if d.code in NO_SOURCE:
        return []
    if d.path not in sources:
        root = next((root for root in roots if root == d.path or root in d.path.parents), None)
        sources[d.path] = None if root is None else _source_lines(d.path, root)
    source = sources[d.path]
    if source is None or not 1 <= d.start.line <= len(source):
        return []
    text = source[d.start.line - 1]
    start = min(max(d.start.column, 1), len(text) + 1) - 1
    end = min(d.end.column - 1, len(text)) if d.end.line == d.start.line else len(text)
    text, start, end = _window(text, start, max(end, start + 1))
    shown, offset, width = _display(text, start, end)
    number = str(d.start.line)
    gutter = " " * len(number)
    bar = style("|", BOLD, BLUE)
    out = [
        f"{gutter} {bar}",
        f"{style(number, BOLD, BLUE)} {bar} {shown}".rstrip(),
        f"{gutter} {bar} {' ' * offset}{style('^' * width + ' ' + d.code, BOLD, SEVERITY_COLOURS[d.severity.value])}",
        f"{gutter} {bar}",
    ]
    fix = next((fix for fix in d.fixes if fix.safe), None) or (d.fixes[0] if d.fixes else None)
    if fix is not None:
        out.append(f"{gutter} {style('=', BOLD, BLUE)} {style('help', BOLD)}: {fix.title}")
    return out


MAX_SHOWN = 160
"""Characters of a source line shown; a longer one is cut around the span, marked with ``…``."""


def _window(text: str, start: int, end: int) -> tuple[str, int, int]:
    """``text`` cut to at most :data:`MAX_SHOWN` characters around ``start:end``, with the new offsets."""
    if len(text) <= MAX_SHOWN:
        return text, start, end
    first = max(0, min(start - MAX_SHOWN // 4, len(text) - MAX_SHOWN))
    last = first + MAX_SHOWN
    head = "…" if first else ""
    tail = "…" if last < len(text) else ""
    cut = head + text[first:last] + tail
    shift = len(head) - first
    return cut, start + shift, min(end, last) + shift


def _source_lines(path: Path, root: Path) -> list[str] | None:
    """``path``'s lines, read below ``root`` only (``None`` if it cannot be)."""
    from ..reader import read_regular_file
    from ..textfile import DEFAULT_MAX_FILE_SIZE, UnreadableFile, decode_text

    try:
        return decode_text(read_regular_file(path, DEFAULT_MAX_FILE_SIZE, root)).split("\n")
    except (OSError, UnreadableFile):
        return None


def _display(text: str, start: int, end: int) -> tuple[str, int, int]:
    """``text`` as shown (tabs expanded, control characters as ``?``) and the display column
    and width of its characters ``start:end`` (wide characters take two columns)."""
    import unicodedata

    shown: list[str] = []
    columns = [0]
    for character in text:
        cell, width = character, 1
        if character == "\t":
            cell = " " * (TAB_WIDTH - columns[-1] % TAB_WIDTH)
            width = len(cell)
        elif unicodedata.category(character) in ("Cc", "Cf", "Cs"):
            cell = "?"
        elif unicodedata.combining(character):
            width = 0
        elif unicodedata.east_asian_width(character) in ("W", "F"):
            width = 2
        columns.append(columns[-1] + width)
        shown.append(cell)
    offset = columns[start]
    width = max(columns[min(end, len(text))] - offset, 1)
    return "".join(shown), offset, width
