"""Engine positions to LSP positions and back, and engine diagnostics to LSP ones.

Engine spans are 1-based lines and 1-based columns counted in Unicode code
points, end exclusive; LSP positions are 0-based with the character counted in
the negotiated encoding (utf-8, utf-16 or utf-32). The conversion uses pygls's
:class:`~pygls.workspace.PositionCodec` over the file's lines as the engine
decoded them (the open buffer's text, when there is one).
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import PositionCodec

from ..linter.diagnostics import Diagnostic, Severity, TextEdit
from ..linter.rules import get_rule
from ..linter.textfile import Position, Span
from ..linter.workspace import absolute

SOURCE = "skill-eval"

SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

LinesOf = Callable[[Path], Sequence[str]]
"""Returns a file's lines (without line breaks) as the engine decoded them."""


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def path_of(uri: str) -> Path | None:
    """The normalized file path of a ``file:`` URI (``None`` for other schemes)."""
    fs_path = to_fs_path(uri)
    if not fs_path or not uri.startswith("file:"):
        return None
    return absolute(fs_path)


class Converter:
    """Position conversion for one negotiated encoding."""

    def __init__(self, codec: PositionCodec, lines_of: LinesOf) -> None:
        self.codec = codec
        self.lines_of = lines_of

    def position(self, path: Path, position: Position, lines: Sequence[str] | None = None) -> types.Position:
        lines = self.lines_of(path) if lines is None else lines
        line = max(position.line - 1, 0)
        character = max(position.column - 1, 0)
        if line >= len(lines):
            return types.Position(line=line, character=character)
        text = lines[line]
        character = min(character, len(text))
        return self.codec.position_to_client_units(lines, types.Position(line=line, character=character))

    def range(self, span: Span) -> types.Range:
        lines = self.lines_of(span.path)
        return types.Range(start=self.position(span.path, span.start, lines), end=self.position(span.path, span.end, lines))

    def location(self, span: Span) -> types.Location:
        return types.Location(uri=uri_of(span.path), range=self.range(span))

    def engine_position(self, path: Path, position: types.Position) -> Position:
        """An LSP position in ``path`` as a 1-based engine position (code points)."""
        lines = self.lines_of(path)
        if position.line >= len(lines):
            return Position(position.line + 1, position.character + 1)
        server = self.codec.position_from_client_units(lines, types.Position(line=position.line, character=position.character))
        return Position(server.line + 1, server.character + 1)

    def text_edit(self, edit: TextEdit) -> types.TextEdit:
        return types.TextEdit(range=self.range(edit.span), new_text=edit.new_text)

    def diagnostic(self, diagnostic: Diagnostic, related_support: bool) -> types.Diagnostic:
        rule = get_rule(diagnostic.code)
        related = None
        if related_support and diagnostic.related:
            related = [
                types.DiagnosticRelatedInformation(location=self.location(item.span), message=item.message)
                for item in diagnostic.related
            ]
        return types.Diagnostic(
            range=self.range(diagnostic.span),
            message=diagnostic.message,
            severity=SEVERITIES.get(diagnostic.severity, types.DiagnosticSeverity.Error),
            code=diagnostic.code,
            code_description=types.CodeDescription(href=rule.doc_url()) if rule is not None else None,
            source=SOURCE,
            related_information=related,
            data={"name": diagnostic.name},
        )


def contains(range_: types.Range, position: types.Position) -> bool:
    """Whether ``position`` lies in ``range_`` (both ends included)."""
    start, end = range_.start, range_.end
    after_start = (position.line, position.character) >= (start.line, start.character)
    before_end = (position.line, position.character) <= (end.line, end.character)
    return after_start and before_end


def overlaps(a: types.Range, b: types.Range) -> bool:
    return (a.start.line, a.start.character) <= (b.end.line, b.end.character) and (
        b.start.line,
        b.start.character,
    ) <= (a.end.line, a.end.character)
