"""Applying fixes to files on disk (``skill-eval-lint --fix``).

Edits are made on the decoded text and written back with the file's own
byte-order mark and line endings, so a fix never rewrites a whole file's
newlines.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Iterable

from .diagnostics import Diagnostic, TextEdit
from .textfile import TextDocument, decode_text


def apply_edits(text: str, edits: Iterable[TextEdit]) -> str:
    """``text`` with non-overlapping ``edits`` applied (overlapping ones skipped)."""
    document = TextDocument(Path("<text>"), text)
    spans = sorted(
        ((document.offset(e.span.start), document.offset(e.span.end), e.new_text) for e in edits),
        key=lambda item: item[0],
    )
    out, cursor = [], 0
    for start, end, new_text in spans:
        if start < cursor:
            continue
        out.append(text[cursor:start])
        out.append(new_text)
        cursor = end
    out.append(text[cursor:])
    return "".join(out)


def apply_safe_fixes(diagnostics: Iterable[Diagnostic]) -> tuple[int, list[Diagnostic]]:
    """Apply the first safe fix of each diagnostic; return how many were applied
    and the diagnostics that remain."""
    by_path: dict[Path, list[TextEdit]] = defaultdict(list)
    fixed_ids = set()
    remaining = []
    for diagnostic in diagnostics:
        safe = next((fix for fix in diagnostic.fixes if fix.safe), None)
        if safe is None:
            remaining.append(diagnostic)
            continue
        for edit in safe.edits:
            by_path[edit.span.path].append(edit)
        fixed_ids.add(id(diagnostic))
    for path, edits in by_path.items():
        raw = path.read_bytes()
        text = decode_text(raw)
        new_text = apply_edits(text, edits)
        if raw.count(b"\r\n") and raw.count(b"\r\n") == raw.count(b"\n"):
            new_text = new_text.replace("\n", "\r\n")
        data = new_text.encode("utf-8")
        if raw.startswith(b"\xef\xbb\xbf"):
            data = b"\xef\xbb\xbf" + data
        path.write_bytes(data)
    return len(fixed_ids), remaining
