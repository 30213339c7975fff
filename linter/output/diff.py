"""``--diff``: the safe fixes as a unified patch (ruff's ``--diff``, ``patch -p0``)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from . import display_path, encodable


def render(changes: Iterable[tuple[Path, str, str]]) -> str:
    """The unified diff of each ``(path, text before, text after)`` that changed."""
    import difflib

    out: list[str] = []
    for path, before, after in changes:  # an unchanged text makes no hunk
        name = display_path(path)
        out.extend(difflib.unified_diff(_lines(before), _lines(after), fromfile=name, tofile=name))
    return encodable("".join(out))


def _lines(text: str) -> list[str]:
    """``text`` split after each ``\n`` only; a last line without one gets one and ``diff``'s "no newline" marker."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1] + "\n\\ No newline at end of file\n")
    return lines
