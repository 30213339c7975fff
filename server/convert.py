"""Engine positions to LSP positions and back, and engine diagnostics to LSP ones.

Engine spans are 1-based lines and 1-based columns counted in Unicode code
points, end exclusive; LSP positions are 0-based with the character counted in
the negotiated encoding (utf-8, utf-16 or utf-32). Both count lines alike: the
engine splits its decoded text at LF only, after turning CRLF and CR into LF,
and the LSP breaks lines at LF, CRLF and CR only (never at U+2028, U+2029,
U+0085 or a form feed). The one difference is a byte-order mark at the start
of an open buffer, which the engine drops: the first line's columns then
differ by one. The conversion counts units with
:class:`~.textsync.LspPositionCodec` over the client's lines (the open
buffer's, else the file's as the engine decoded it, which is what an editor
shows).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Sequence

from lsprotocol import types
from pygls.uris import from_fs_path, to_fs_path

from ..linter.diagnostics import Diagnostic, Severity, TextEdit
from ..linter.rules import get_rule
from ..linter.textfile import Position, Span
from ..linter.workspace import absolute
from .textsync import LspPositionCodec

SOURCE = "skill-eval"

SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}

LinesOf = Callable[[Path], Sequence[str]]
"""Returns a file's lines as the client has them, without line breaks."""

BYTE_ORDER_MARK = "\ufeff"


def uri_of(path: Path) -> str:
    """The ``file:`` URI of ``path``. A name that is no UTF-8 text (a byte
    0xFF, kept by Python as a lone surrogate) has its bytes percent-encoded
    (RFC 8089, as :meth:`pathlib.PurePath.as_uri` does), where pygls's
    ``from_fs_path`` raised and stopped the whole start-up scan."""
    try:
        return from_fs_path(str(path)) or path.as_uri()
    except UnicodeError:
        return path.as_uri()


def path_of(uri: str) -> Path | None:
    """The normalized file path of a ``file:`` URI (``None`` for other
    schemes); percent-encoded bytes that are no UTF-8 text name the file
    whose name holds those bytes (:func:`uri_of`)."""
    fs_path = to_fs_path(uri)
    if not fs_path or not uri.startswith("file:"):
        return None
    if "\ufffd" in fs_path and "%" in uri and os.name == "posix":
        from urllib.parse import unquote_to_bytes, urlparse

        parsed = urlparse(uri)
        if parsed.netloc in ("", "localhost"):
            fs_path = os.fsdecode(unquote_to_bytes(parsed.path))
    return absolute(fs_path)


class Converter:
    """Position conversion for one negotiated encoding.

    A converter remembers each file's lines the first time it needs them: make
    one per batch of work (a publish, a request), not one for the server's
    life."""

    def __init__(self, codec: LspPositionCodec, lines_of: LinesOf) -> None:
        self.codec = codec
        self.lines_of = lines_of
        self._lines: dict[Path, Sequence[str]] = {}

    def client_lines(self, path: Path) -> Sequence[str]:
        lines = self._lines.get(path)
        if lines is None:
            lines = self._lines[path] = self.lines_of(path)
        return lines

    def position(self, path: Path, position: Position) -> types.Position:
        """An engine position in ``path`` as an LSP position."""
        lines = self.client_lines(path)
        line = max(position.line - 1, 0)
        character = max(position.column - 1, 0)
        if line >= len(lines):
            return types.Position(line=line, character=character)
        text = lines[line]
        if line == 0 and text.startswith(BYTE_ORDER_MARK):
            character += 1  # the engine dropped the mark the buffer holds
        return types.Position(line=line, character=self.codec.units(text, min(character, len(text))))

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.path, span.start), end=self.position(span.path, span.end))

    def location(self, span: Span) -> types.Location:
        return types.Location(uri=uri_of(span.path), range=self.range(span))

    def engine_position(self, path: Path, position: types.Position) -> Position:
        """An LSP position in ``path`` as a 1-based engine position (code points)."""
        lines = self.client_lines(path)
        if position.line >= len(lines):
            return Position(position.line + 1, position.character + 1)
        text = lines[position.line]
        character = self.codec.code_points(text, position.character)
        if position.line == 0 and text.startswith(BYTE_ORDER_MARK):
            character = max(character - 1, 0)
        return Position(position.line + 1, character + 1)

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
