"""``--output-format github``: GitHub Actions workflow commands (annotations)."""

from __future__ import annotations

from typing import Sequence

from ..diagnostics import Diagnostic, Severity
from . import display_path, encodable

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def render(diagnostics: Sequence[Diagnostic]) -> str:
    lines = []
    for d in diagnostics:
        props = ",".join(
            [
                f"file={_escape_property(display_path(d.path))}",
                f"line={d.start.line}",
                f"col={d.start.column}",
                f"endLine={d.end.line}",
                f"endColumn={d.end.column}",
                f"title={_escape_property(d.code + ' ' + d.name)}",
            ]
        )
        lines.append(f"::{_LEVEL[d.severity]} {props}::{_escape_data(d.code + ' ' + d.message)}")
    return encodable("\n".join(lines))
