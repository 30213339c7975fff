"""``--diff``: the safe fixes as a unified patch, written nowhere but stdout.

ruff's ``--diff``: one ``---``/``+++`` pair per file, named by its display
path on both sides (apply it with ``patch -p0`` or ``git apply -p0``). Made
by :func:`difflib.unified_diff` (the standard library's, as ruff's comes from
the ``similar`` crate), never by hand.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import display_path, encodable


def render(changes: Iterable[tuple[Path, str, str]]) -> str:
    """The unified diff of each ``(path, text before, text after)``; files
    whose text is unchanged are left out. Each hunk line keeps its newline;
    a last line without one is marked as ``diff`` marks it."""
    import difflib

    out: list[str] = []
    for path, before, after in changes:
        if before == after:
            continue
        name = display_path(path)
        for line in difflib.unified_diff(_lines(before), _lines(after), fromfile=name, tofile=name):
            out.append(line)
    return encodable("".join(out))


def _lines(text: str) -> list[str]:
    """``text`` (``\n`` line breaks only, as the engine decodes it) split
    after each ``\n`` (not ``str.splitlines``, which also breaks at U+2028
    and form feeds); a last line without a newline gets one, followed by
    ``diff``'s "no newline" marker, so that every hunk line is a line."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines
