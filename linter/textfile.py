"""Decoding of the fixture format's text files as fixture-format.md ("Text files") says
(what does not decode is unreadable, SE005), and positions inside them: lines and
columns 1-based, columns in Unicode characters.
"""

from __future__ import annotations

import bisect
import re
from array import array
from functools import cached_property
from pathlib import Path
from typing import Callable, TypeVar

import msgspec

Derived = TypeVar("Derived")

DEFAULT_MAX_FILE_SIZE = 1024 * 1024
"""The default size limit of a text file, in bytes (1 MiB)."""

_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_NEWLINE = re.compile("\n")


class UnreadableFile(Exception):
    """A file that is not UTF-8 text within the size limit: ``reason`` and
    ``fix`` are short sentences, ``line`` and ``column`` the first offending byte's."""

    def __init__(self, reason: str, fix: str, line: int = 1, column: int = 1) -> None:
        super().__init__(reason)
        self.reason = reason
        self.fix = fix
        self.line = line
        self.column = column


def normalize_newlines(text: str) -> str:
    """Return ``text`` with CRLF and lone CR turned into LF."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode_text(raw: bytes, max_size: int = DEFAULT_MAX_FILE_SIZE) -> str:
    """Decode ``raw`` per the spec, or raise :class:`UnreadableFile`: the result
    has no byte-order mark and only ``\\n`` line breaks."""
    if len(raw) > max_size:
        raise UnreadableFile(
            f"file is {len(raw):,} bytes, over the {max_size:,}-byte size limit",
            "shorten the file, or raise `max-file-size` in skill-eval.toml",
        )
    if b"\x00" in raw:
        line, column = _line_and_column(raw, raw.index(b"\x00"))
        raise UnreadableFile("file is binary (it contains NUL bytes), not UTF-8 text",
                             "replace it with a UTF-8 text file", line, column)
    if raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]  # the byte-order mark (as "utf-8-sig" drops it, whose codec is Python code)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line, column = _line_and_column(raw, error.start)
        raise UnreadableFile(f"file is not valid UTF-8 (byte 0x{raw[error.start]:02x} at line {line})",
                             "re-save the file as UTF-8", line, column) from None
    return normalize_newlines(text)


def _line_and_column(raw: bytes, offset: int) -> tuple[int, int]:
    """The 1-based line and column (in characters) of byte ``offset`` of ``raw``."""
    line_start = raw.rfind(b"\n", 0, offset) + 1
    return raw.count(b"\n", 0, offset) + 1, len(raw[line_start:offset].decode("utf-8", errors="replace")) + 1


def printable(text: str) -> str:
    """``text`` with every lone surrogate written out, so that it encodes as
    UTF-8 (a report, a JSON answer, an LSP message): a byte of a file name
    that is no UTF-8 (kept by Python as U+DC80-U+DCFF) as ``\\xff``, any
    other lone surrogate (a ``\\ud800`` escape in probe.json) as
    ``\\ud800``."""
    return text if text.isascii() else _LONE_SURROGATE.sub(_written_out, text)


def _written_out(surrogate: re.Match[str]) -> str:
    """How :func:`printable` writes a lone surrogate."""
    code = ord(surrogate.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


class Position(msgspec.Struct, frozen=True, array_like=True, order=True, gc=False):
    """A 1-based line and a 1-based column counted in Unicode characters,
    ordered as the tuple ``(line, column)``: a record of the one codec,
    :data:`~skill_eval.linter.cache.CODEC` (frozen, untracked by the GC)."""

    line: int
    column: int


class Span(msgspec.Struct, frozen=True, array_like=True, order=True, gc=False):
    """A range in one file; ``end`` is exclusive (one past the last character)."""

    path: Path
    start: Position
    end: Position

    @classmethod
    def at(cls, path: Path, line: int, column: int, end_line: int, end_column: int) -> "Span":
        """The span from ``line:column`` to ``end_line:end_column`` of ``path``."""
        return cls(path, Position(line, column), Position(end_line, end_column))

    @classmethod
    def file_start(cls, path: Path) -> "Span":
        """An empty span at the very start of ``path``."""
        return cls(path, Position(1, 1), Position(1, 1))


class TextDocument:
    """A decoded text file: normalized text plus a line index. Read-only."""

    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text

    def __repr__(self) -> str:
        return f"TextDocument({self.path!r}, {len(self.text)} characters)"

    def derived(self, compute: Callable[["TextDocument"], Derived]) -> Derived:
        """``compute(self)``, computed once and kept with this document (so
        shared by the rules that read it through one session, and dropped
        with it). ``compute`` is a module-level function: the memo's key."""
        memo = self.__dict__.setdefault("_derived", {})
        if compute not in memo:
            memo[compute] = compute(self)
        return memo[compute]

    @classmethod
    def from_bytes(cls, path: Path, raw: bytes, max_size: int = DEFAULT_MAX_FILE_SIZE) -> "TextDocument":
        """The document of a file's bytes (:func:`decode_text`)."""
        return cls(path, decode_text(raw, max_size))

    @cached_property
    def lines(self) -> list[str]:
        """The lines without their line breaks (an empty file has one empty line)."""
        return self.text.split("\n")

    @cached_property
    def _line_starts(self) -> array:
        """The offset of each line's first character, as 8-byte integers (a language
        server keeps one per document; a list of ints takes several times the memory)."""
        return array("q", [0, *(match.end() for match in _NEWLINE.finditer(self.text))])

    def position(self, offset: int) -> Position:
        """The 1-based position of the character at ``offset`` in :attr:`text`."""
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        return Position(line_index + 1, offset - self._line_starts[line_index] + 1)

    def offset(self, position: Position) -> int:
        """The offset in :attr:`text` of a 1-based ``position`` (clamped)."""
        starts = self._line_starts
        line_index = min(max(position.line, 1), len(starts)) - 1
        line_end = starts[line_index + 1] - 1 if line_index + 1 < len(starts) else len(self.text)
        return min(starts[line_index] + max(position.column, 1) - 1, line_end)

    def span(self, start: int, end: int) -> Span:
        """The span of ``text[start:end]``."""
        return Span(self.path, self.position(start), self.position(end))

    def line_span(self, line: int) -> Span:
        """The span of the whole of 1-based ``line`` without its break."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return Span.at(self.path, line, 1, line, len(text) + 1)
