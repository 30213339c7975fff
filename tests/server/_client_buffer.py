"""A reference model of an LSP client's text buffer, written from the LSP
specification (3.17, "Text Documents" and "Position"), not from the server.

The buffer is what an editor holds: a sequence of code units in the
negotiated position encoding (UTF-8 bytes, UTF-16 code units, or code points
for UTF-32). Lines end at ``\\n``, ``\\r\\n`` or ``\\r`` — "the protocol
specifies the following end-of-line sequences: '\\n', '\\r\\n' and '\\r'" — and
at nothing else. A position is a line and a count of code units into that
line; "if the character value is greater than the line length it defaults back
to the line length", and a line past the last one means the end of the
document (as in Microsoft's reference implementation). An edit replaces the
units between its range's two positions with the new text's units.
"""

from __future__ import annotations

from array import array

LF, CR = 0x0A, 0x0D


class ClientBuffer:
    def __init__(self, text: str, encoding: str) -> None:
        self.encoding = encoding
        self.units = self._encode(text)

    # -- encoding ----------------------------------------------------------------------

    def _encode(self, text: str):
        if self.encoding == "utf-8":
            return bytearray(text.encode("utf-8", "surrogatepass"))
        if self.encoding == "utf-16":
            return array("H", text.encode("utf-16-le", "surrogatepass"))
        return [ord(char) for char in text]

    def _decode(self, units) -> str:
        if self.encoding == "utf-8":
            return bytes(units).decode("utf-8", "surrogatepass")
        if self.encoding == "utf-16":
            return array("H", units).tobytes().decode("utf-16-le", "surrogatepass")
        return "".join(map(chr, units))

    @property
    def text(self) -> str:
        return self._decode(self.units)

    # -- lines -------------------------------------------------------------------------

    def lines(self) -> list[tuple[int, int]]:
        """``(start, end)`` unit offsets of each line's content (break excluded)."""
        units = self.units
        lines = []
        start = index = 0
        while index < len(units):
            unit = units[index]
            if unit == CR and index + 1 < len(units) and units[index + 1] == LF:
                lines.append((start, index))
                index += 2
                start = index
            elif unit in (CR, LF):
                lines.append((start, index))
                index += 1
                start = index
            else:
                index += 1
        lines.append((start, len(units)))
        return lines

    def line_text(self, line: int) -> str:
        start, end = self.lines()[line]
        return self._decode(self.units[start:end])

    def offset(self, line: int, character: int) -> int:
        """The unit offset of an LSP position (clamped as the specification says)."""
        lines = self.lines()
        if line >= len(lines):
            return len(self.units)
        start, end = lines[line]
        return start + min(character, end - start)

    def units_of(self, text: str) -> int:
        return len(self._encode(text))

    # -- edits -------------------------------------------------------------------------

    def apply(self, start: tuple[int, int], end: tuple[int, int], new_text: str) -> None:
        first, last = self.offset(*start), self.offset(*end)
        if last < first:
            first, last = last, first
        self.units[first:last] = self._encode(new_text)

    def replace_all(self, new_text: str) -> None:
        self.units = self._encode(new_text)

    def text_from(self, line: int, character: int) -> str:
        """The rest of the line from a position, as the client shows it."""
        lines = self.lines()
        offset = self.offset(line, character)
        end = lines[line][1] if line < len(lines) else len(self.units)
        return self._decode(self.units[offset:end])
