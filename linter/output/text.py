"""The default, human format: ``path:line:col: CODE [severity] message``."""

from __future__ import annotations

from collections import Counter
from typing import Sequence

from ..diagnostics import Diagnostic
from . import display_path, encodable
from .style import BOLD, PLAIN, SEVERITY_COLOURS, Style


def render(diagnostics: Sequence[Diagnostic], checked: int, fixed: int = 0, style: Style = PLAIN,
           with_summary: bool = True) -> str:
    """One line per diagnostic and per related location, then the summary if ``with_summary``."""
    lines = []
    for d in diagnostics:
        lines.append(header(d, style))
        lines.extend(related_lines(d))
    if with_summary:
        lines.extend(summary(diagnostics, checked, fixed))
    return encodable("\n".join(lines))


def header(d: Diagnostic, style: Style = PLAIN) -> str:
    """``path:line:col: CODE [severity] message``."""
    colour = SEVERITY_COLOURS[d.severity.value]
    return (f"{style(display_path(d.path), BOLD)}:{d.start.line}:{d.start.column}: {style(d.code, BOLD, colour)} "
            f"{style(f'[{d.severity.value}]', colour)} {d.message}")


def related_lines(d: Diagnostic) -> list[str]:
    """An indented ``path:line:col: message`` line per related location."""
    return [
        f"    {display_path(related.span.path)}:{related.span.start.line}:{related.span.start.column}: {related.message}"
        for related in d.related
    ]


def summary(diagnostics: Sequence[Diagnostic], checked: int, fixed: int) -> list[str]:
    """The closing lines: how many problems of which severity, or all passed; how many were fixed."""
    lines = []
    counts = Counter(d.severity.value for d in diagnostics)
    if diagnostics:
        parts = [f"{counts[s]} {s}{'s' if counts[s] != 1 else ''}" for s in ("error", "warning", "info") if counts[s]]
        lines.append(f"Found {len(diagnostics)} problem{'s' if len(diagnostics) != 1 else ''} ({', '.join(parts)}) in {checked} file{'s' if checked != 1 else ''}.")
    else:
        lines.append(f"All checks passed ({checked} file{'s' if checked != 1 else ''}).")
    if fixed:
        lines.append(f"Fixed {fixed} problem{'s' if fixed != 1 else ''}.")
    return lines


def statistics(diagnostics: Sequence[Diagnostic]) -> list[tuple[str, str, int]]:
    """``(code, name, count)`` per code found, the most frequent first (ruff's ``--statistics``)."""
    counts = Counter((d.code, d.name) for d in diagnostics)
    return [(code, name, count) for (code, name), count in sorted(counts.items(), key=lambda item: (-item[1], item[0][0]))]


def render_statistics(diagnostics: Sequence[Diagnostic]) -> str:
    """One line per code: count, code, name."""
    return encodable("\n".join(f"{count:>5}\t{code}\t{name}" for code, name, count in statistics(diagnostics)))
