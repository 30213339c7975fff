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
    """One ``::error``/``::warning``/``::notice`` command per diagnostic."""
    return encodable("\n".join(
        f"::{_LEVEL[d.severity]} file={_escape_property(display_path(d.path))},line={d.start.line},"
        f"col={d.start.column},endLine={d.end.line},endColumn={d.end.column},"
        f"title={_escape_property(d.code + ' ' + d.name)}::{_escape_data(d.code + ' ' + d.message)}"
        for d in diagnostics))
