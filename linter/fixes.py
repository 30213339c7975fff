"""Applying fixes: one applier for ``skill-eval-lint --fix`` and the editor's "fix all".

:func:`select_fixes` takes the first safe fix of each diagnostic (``unsafe``: its first
fix), in the diagnostics' order, whole or not at all: a fix with an edit that conflicts
(:func:`edits_conflict`) with one taken or one of its own is left out, for a later pass
(the CLI re-lints and applies again); a fix identical to one taken resolves its diagnostic too.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Container, Iterable, Sequence
from itertools import combinations
from pathlib import Path
from typing import NamedTuple

from .diagnostics import Diagnostic, Fix, TextEdit
from .textfile import Position

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BOM = b"\xef\xbb\xbf"


class Selected(NamedTuple):
    """The fixes :func:`select_fixes` takes, each with the diagnostics it resolves, and their edits by file."""

    fixes: list[tuple[Fix, list[Diagnostic]]]
    edits: dict[Path, list[TextEdit]]


def edits_conflict(first: TextEdit, second: TextEdit) -> bool:
    """Whether two edits of one file cannot both be made unambiguously (overlapping ranges,
    or two insertions at one place; an insertion at either end of a replaced range is fine)."""
    a, b = first.span, second.span
    if a.path != b.path:
        return False
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one place
    return a.start < b.end and b.start < a.end


def select_fixes(diagnostics: Iterable[Diagnostic], unsafe: bool = False) -> Selected:
    """The first safe fix (``unsafe``: the first fix) of each of
    ``diagnostics`` that can be taken whole (see the module's docstring)."""
    taken: list[tuple[Fix, list[Diagnostic]]] = []
    index: dict[tuple, int] = {}
    edits: dict[Path, list[TextEdit]] = {}
    for diagnostic in diagnostics:
        fix = next((fix for fix in diagnostic.fixes if fix.safe or unsafe), None)
        if fix is None or not fix.edits:
            continue
        own = tuple(fix.edits)
        if own in index:
            taken[index[own]][1].append(diagnostic)
            continue
        if any(edits_conflict(a, b) for a, b in combinations(own, 2)):
            continue
        if any(edits_conflict(edit, other) for edit in own for other in edits.get(edit.span.path, ())):
            continue
        index[own] = len(taken)
        taken.append((fix, [diagnostic]))
        for edit in own:
            edits.setdefault(edit.span.path, []).append(edit)
    return Selected(taken, edits)


def safe_edits(diagnostics: Iterable[Diagnostic]) -> list[TextEdit]:
    """Every edit of :func:`select_fixes` (the editor's "fix all")."""
    return [edit for _path, edits in select_fixes(diagnostics).edits.items() for edit in edits]


def _line_starts(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` offsets of each line of ``text`` without its break (CRLF, CR or LF)."""
    breaks = [match.span() for match in _LINE_BREAK.finditer(text)]
    return list(zip([0, *(end for _start, end in breaks)], [*(start for start, _end in breaks), len(text)]))


def _offset(lines: list[tuple[int, int]], position: Position) -> int:
    """The offset of a 1-based engine position (clamped to its line, as the engine clamps)."""
    line = min(max(position.line, 1), len(lines)) - 1
    start, end = lines[line]
    return min(start + max(position.column, 1) - 1, end)


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` (as on disk: CRLF, CR and LF each end one line, as in the engine; no
    byte-order mark) with ``edits`` made, which must not conflict (:func:`edits_conflict`;
    :class:`ValueError` otherwise). Line breaks in the new text are written as ``text``'s own."""
    lines = _line_starts(text)
    first_break = _LINE_BREAK.search(text)
    newline = first_break.group() if first_break else "\n"  # the file's own: that of its first line
    spans = ((_offset(lines, e.span.start), _offset(lines, e.span.end), e.new_text) for e in edits)
    placed = sorted(spans, key=lambda item: (item[0], item[1]))
    out, cursor, previous = [], 0, None
    for start, end, new_text in placed:
        if start < cursor or (start == end and previous == (start, end)):
            raise ValueError("conflicting edits")
        out.append(text[cursor:start])
        if newline != "\n" and "\n" in new_text:
            new_text = new_text.replace("\r\n", "\n").replace("\n", newline)
        out.append(new_text)
        cursor, previous = end, (start, end)
    out.append(text[cursor:])
    return "".join(out)


class Applied(NamedTuple):
    """What :func:`apply_fixes` did: how many diagnostics its fixes resolve, the files
    written, and those not (unreadable, outside the workspace, no text)."""

    fixed: int
    files: list[Path]
    skipped: list[Path]


class Planned(NamedTuple):
    """What :func:`apply_fixes` would write: per file, ``((root, path), BOM, text before, text
    after)``; each fix taken with the diagnostics it resolves; the files left out."""

    changes: dict[Path, tuple[tuple[Path, Path], bytes, str, str]]
    taken: list[tuple[Fix, list[Diagnostic]]]
    skipped: list[Path]

    def fixed_in(self, files: Container[Path]) -> int:
        """How many diagnostics the fixes resolve whose every file is in ``files``."""
        return sum(len(found) for fix, found in self.taken if all(e.span.path in files for e in fix.edits))

    @property
    def fixed(self) -> int:
        """How many diagnostics the fixes resolve, once every file is written."""
        return self.fixed_in(self.changes)


def apply_fixes(diagnostics: Sequence[Diagnostic], sessions: Sequence = (), unsafe: bool = False) -> Applied:
    """Write the fixes :func:`plan_fixes` plans into their files; only the fixes of files written count."""
    planned = plan_fixes(diagnostics, sessions, unsafe)
    written, skipped = [], list(planned.skipped)
    for path, (real, bom, _before, after) in planned.changes.items():
        try:
            _write(real, bom + after.encode("utf-8"))
        except (OSError, ValueError):  # gone, or a link out of the workspace since it was read: not written
            skipped.append(path)
        else:
            written.append(path)
    return Applied(planned.fixed_in(set(written)), written, skipped)


def plan_fixes(diagnostics: Sequence[Diagnostic], sessions: Sequence = (), unsafe: bool = False) -> Planned:
    """The texts the fixes :func:`select_fixes` takes make, nothing written (``--diff`` prints
    them): a fix is taken only when every file it edits reads (:func:`_read`) and holds its edits."""
    selected = select_fixes(diagnostics, unsafe)
    texts: dict[Path, tuple[tuple[Path, Path], bytes, str]] = {}
    skipped: list[Path] = []
    for path in selected.edits:
        found = _read(path, sessions)
        if found is None:
            skipped.append(path)
        else:
            texts[path] = found
    applicable = [(fix, found) for fix, found in selected.fixes
                  if all(e.span.path in texts and _within(texts[e.span.path][2], e) for e in fix.edits)]
    by_file: dict[Path, list[TextEdit]] = {}
    for fix, _found in applicable:
        for edit in fix.edits:
            by_file.setdefault(edit.span.path, []).append(edit)
    changes = {path: (*texts[path], apply_edits(texts[path][2], edits)) for path, edits in by_file.items()}
    return Planned(changes, applicable, skipped)


def _within(text: str, edit: TextEdit) -> bool:
    """Whether both ends of ``edit`` are positions of ``text`` (a column at most one past its line's end)."""
    lines = _line_starts(text)
    for position in (edit.span.start, edit.span.end):
        if not 1 <= position.line <= len(lines):
            return False
        start, end = lines[position.line - 1]
        if not 1 <= position.column <= end - start + 1:
            return False
    return True


def _read(path: Path, sessions: Sequence) -> tuple[tuple[Path, Path], bytes, str] | None:
    """``((root, path), BOM, text)`` of ``path`` when it is now a regular UTF-8 file within the
    size limit, read afresh below the workspace root of one of ``sessions`` only."""
    from .reader import read_regular_file

    for session in sessions:
        root = session.root
        if path == root or root in path.parents:
            try:
                raw = read_regular_file(path, session.config.max_file_size, root)
                bom = _BOM if raw.startswith(_BOM) else b""
                return (root, path), bom, raw[len(bom):].decode("utf-8")
            except (OSError, ValueError):  # a UnicodeDecodeError is a ValueError
                return None
    return None


def _write(where: tuple[Path, Path], data: bytes) -> None:
    """Write ``data`` over the regular file ``where`` (``(root, path)``) in place (inode, mode and
    links kept), opened below ``root`` only, as :func:`_read` read it."""
    from .reader import _OPEN_FLAGS, SEALED, NotRegularFile, sealed_root, write_all

    root, path = where
    flags = (_OPEN_FLAGS & ~os.O_RDONLY) | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0)
    fd = sealed_root(root).open(str(path), flags) if SEALED else os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        write_all(fd, data)
        os.ftruncate(fd, len(data))
    finally:
        os.close(fd)
