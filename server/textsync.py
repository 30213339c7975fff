"""Text synchronization with the client, exactly as the LSP defines lines.

The LSP counts three line breaks, and only three: ``\\n``, ``\\r\\n`` and
``\\r`` ("To ensure that both client and server split the string into the same
line representation the protocol specifies the following end-of-line
sequences"). pygls 2.x splits a document with :meth:`str.splitlines`, which
also breaks at U+2028, U+2029, U+0085, form feed, vertical tab and
U+001C-U+001E: with one of those in a buffer, every later incremental edit
lands on the wrong line and the server's copy drifts from the editor's. Its
position codec also moves a character past the end of a line to one before
the end (the LSP says: to the end) and counts a lone ``\\r`` as part of the
line.

This module replaces both, keeping pygls's interfaces:

* :func:`split_lines` / :func:`line_starts`: the LSP's lines;
* :class:`LspPositionCodec`: client units (UTF-8, UTF-16, UTF-32) to code
  points and back over one line, clamped as the LSP says;
* :class:`LspTextDocument`: pygls's ``TextDocument`` over those lines, whose
  incremental change is a splice at two offsets;
* :class:`SkillEvalProtocol`: pygls's protocol with the workspace made of
  those documents.

Positions beyond the last line mean the end of the document, and a range
whose start lies after its end is taken the other way round, as in
Microsoft's reference ``vscode-languageserver-textdocument``.
"""

from __future__ import annotations

import re
from typing import Sequence

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.workspace import PositionCodec, TextDocument, Workspace
from pygls.workspace.position_codec import ServerTextPosition

LINE_BREAK = re.compile(r"\r\n|\r|\n")
"""The LSP's end-of-line sequences (``\\r\\n`` first: it is one break)."""

_ASTRAL = re.compile("[\U00010000-\U0010ffff]")
"""Characters that take two UTF-16 code units."""


def split_lines(text: str, keepends: bool = False) -> list[str]:
    """``text``'s lines as the LSP counts them, with their line breaks when
    ``keepends``. A text ending in a line break ends with an empty line (a
    cursor can stand there), and an empty text is one empty line."""
    if keepends:
        lines = []
        start = 0
        for match in LINE_BREAK.finditer(text):
            lines.append(text[start : match.end()])
            start = match.end()
        lines.append(text[start:])
        return lines
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text.split("\n")


def line_starts(text: str) -> list[int]:
    """The offset at which each of ``text``'s lines begins (the first is 0)."""
    return [0, *(match.end() for match in LINE_BREAK.finditer(text))]


def engine_text(buffer: str) -> str:
    """An editor buffer as the engine decodes the same text from disk
    (:func:`skill_eval.linter.textfile.decode_text`): one leading byte-order
    mark dropped, CRLF and CR turned into LF. Lines stay the same lines (the
    engine splits on LF only), so a position differs from the client's only in
    the first line's column when a mark was dropped."""
    if buffer.startswith("\ufeff"):
        buffer = buffer[1:]
    if "\r" in buffer:
        buffer = buffer.replace("\r\n", "\n").replace("\r", "\n")
    return buffer


def _content(line: str) -> str:
    """``line`` without its line break (a line holds at most one, at its end)."""
    return line.rstrip("\r\n")


class LspPositionCodec(PositionCodec):
    """pygls's codec, with the LSP's clamping and line breaks.

    ``lines`` may be given with or without their line breaks; the break is
    never part of a line's characters. A character past the end of its line
    means the end of the line; one inside a character that takes several
    client units (half a surrogate pair, a byte inside a UTF-8 sequence) means
    the end of that character. The position passed in is never modified.
    """

    def code_points(self, line: str, units: int) -> int:
        """How many of ``line``'s characters its first ``units`` client units span."""
        if units <= 0:
            return 0
        encoding = self.encoding
        if encoding == types.PositionEncodingKind.Utf32 or line.isascii():
            return min(units, len(line))
        if encoding == types.PositionEncodingKind.Utf8:
            encoded = line.encode("utf-8", "surrogatepass")
            if units >= len(encoded):
                return len(line)
            while units < len(encoded) and encoded[units] & 0xC0 == 0x80:
                units += 1  # inside a multi-byte sequence: to the character's end
            return len(encoded[:units].decode("utf-8", "surrogatepass"))
        if _ASTRAL.search(line) is None:  # UTF-16 (also any unknown encoding, as pygls)
            return min(units, len(line))
        count = 0
        for index, char in enumerate(line):
            if count >= units:
                return index
            count += 2 if ord(char) > 0xFFFF else 1
        return len(line)

    def units(self, line: str, code_points: int) -> int:
        """How many client units ``line``'s first ``code_points`` characters take."""
        part = line[: max(code_points, 0)]
        encoding = self.encoding
        if encoding == types.PositionEncodingKind.Utf32 or part.isascii():
            return len(part)
        if encoding == types.PositionEncodingKind.Utf8:
            return len(part.encode("utf-8", "surrogatepass"))
        return len(part) + len(_ASTRAL.findall(part))

    def client_num_units(self, string: str) -> int:
        return self.units(string, len(string))

    def position_from_client_units(self, lines: Sequence[str], position: types.Position) -> ServerTextPosition:
        if not lines:
            return ServerTextPosition(0, 0)
        if position.line >= len(lines):
            return ServerTextPosition(len(lines) - 1, len(_content(lines[-1])))
        line = _content(lines[position.line])
        return ServerTextPosition(position.line, self.code_points(line, position.character))

    def position_to_client_units(self, lines: Sequence[str], position) -> types.Position:
        if position.line >= len(lines):
            return types.Position(line=len(lines), character=0)
        line = _content(lines[position.line])
        return types.Position(line=position.line, character=self.units(line, min(position.character, len(line))))


class LspTextDocument(TextDocument):
    """pygls's text document over the LSP's lines.

    :attr:`lines` keep their line breaks, as pygls's do, so the inherited
    helpers (``offset_at_position``, ``word_at_position``, ...) work on them
    unchanged."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        if not isinstance(self._position_codec, LspPositionCodec):
            self._position_codec = LspPositionCodec(self._position_codec.encoding)

    @property
    def lines(self) -> Sequence[str]:
        return tuple(split_lines(self.source, keepends=True))

    def offset_at(self, position: types.Position, starts: list[int] | None = None) -> int:
        """The offset in :attr:`source` of a client position (clamped as the LSP says)."""
        source = self.source
        starts = line_starts(source) if starts is None else starts
        if position.line >= len(starts):
            return len(source)
        start = starts[position.line]
        end = starts[position.line + 1] if position.line + 1 < len(starts) else len(source)
        line = _content(source[start:end])
        return start + self._position_codec.code_points(line, position.character)

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        source = self.source
        starts = line_starts(source)
        start = self.offset_at(change.range.start, starts)
        end = self.offset_at(change.range.end, starts)
        if end < start:
            start, end = end, start
        self._source = source[:start] + change.text + source[end:]


class LspWorkspace(Workspace):
    """pygls's workspace whose documents are :class:`LspTextDocument`."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._position_codec = LspPositionCodec(encoding=self._position_encoding)

    def _create_text_document(self, doc_uri, source=None, version=None, language_id=None) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )


class SkillEvalProtocol(LanguageServerProtocol):
    """pygls's language-server protocol with an :class:`LspWorkspace`."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):
        result = yield from super().lsp_initialize(params)
        # pygls made its workspace; no document can be open before `initialize`
        # is answered, so one of ours with the same folders and encoding replaces it.
        made = self.workspace
        self._workspace = LspWorkspace(
            made.root_uri,
            self._server._text_document_sync_kind,
            list(made.folders.values()),
            made.position_encoding,
        )
        return result

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):
        """pygls's ``didChange``, for a document the client opened. One it
        never opened (a client out of step) raised a ``KeyError`` inside
        pygls, logged as an internal error: a change of the whole text is
        taken as opening it with that text; a change of a range cannot be
        applied to text the server never had, and is ignored with one line
        in the log."""
        workspace = self.workspace
        uri = params.text_document.uri
        from urllib.parse import unquote

        if unquote(uri) not in workspace.text_documents:  # pygls keys its documents so
            whole = [change for change in params.content_changes
                     if isinstance(change, types.TextDocumentContentChangeWholeDocument)]
            if not whole or not isinstance(params.content_changes[-1], types.TextDocumentContentChangeWholeDocument):
                self._server.log(f"skill-eval-ls: didChange for {uri}, which is not open: ignored (open it first)")
                return
            workspace.put_text_document(types.TextDocumentItem(
                uri=uri, language_id="", version=params.text_document.version, text=whole[-1].text))
            params = types.DidChangeTextDocumentParams(text_document=params.text_document, content_changes=[])
        result = yield from super().lsp_text_document__did_change(params)
        return result

    def handle_message(self, message) -> None:
        """pygls's dispatch, except that a request after ``shutdown`` gets an
        ``InvalidRequest`` error as the LSP asks (pygls dropped it: the
        client waited for an answer that never came); notifications after it
        are dropped, as before, but ``exit``."""
        if self._shutdown and getattr(message, "id", None) is not None and getattr(message, "method", None) \
                and message.method != types.EXIT:
            from pygls.exceptions import JsonRpcInvalidRequest

            self._send_response(message.id, None, JsonRpcInvalidRequest(
                message=f"the server is shut down: {message.method} not handled").to_response_error())
            return
        super().handle_message(message)
