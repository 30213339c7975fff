"""Where the cursor is in a probe.json that may be invalid (the user is typing).

A small tolerant scanner: it walks the text's tokens keeping a stack of open
objects and arrays, never raises, and recovers from what half-typed JSON
looks like (an unterminated string ends at its line's end; a missing comma or
colon is assumed). It answers one question: at this offset, which key path is
the cursor on, and is it on a key or a value?
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


@dataclass(frozen=True)
class JsonCursor:
    """The cursor's JSON context.

    ``path`` names the key or index the cursor is on (the last part is the key
    itself when ``in_key``; ``None`` when a key is expected but not yet typed).
    A string under the cursor is described by ``start`` (offset of its opening
    quote), ``end`` (offset after its closing quote, or its line's end when
    unterminated), ``value`` (its decoded content) and ``terminated``.
    """

    path: tuple[str | int | None, ...]
    in_key: bool
    in_string: bool = False
    start: int | None = None
    end: int | None = None
    value: str | None = None
    terminated: bool = True
    present_keys: frozenset[str] = field(default=frozenset())
    """Keys already present in the enclosing object (for key completion)."""

    @property
    def content_start(self) -> int | None:
        return None if self.start is None else self.start + 1

    @property
    def content_end(self) -> int | None:
        if self.end is None:
            return None
        return self.end - 1 if self.terminated else self.end


@dataclass
class _Frame:
    kind: str  # "object" or "array"
    path: tuple
    key: str | None = None
    index: int = 0
    expect: str = "key"  # object: key, colon, value, comma; array: value, comma
    keys: set = field(default_factory=set)


def _decode(raw: str) -> str:
    """Decode a JSON string body, tolerating a broken escape."""
    try:
        return json.loads(f'"{raw}"')
    except ValueError:
        out, i = [], 0
        while i < len(raw):
            char = raw[i]
            if char == "\\" and i + 1 < len(raw):
                nxt = raw[i + 1]
                if nxt == "u" and i + 6 <= len(raw):
                    try:
                        out.append(chr(int(raw[i + 2 : i + 6], 16)))
                        i += 6
                        continue
                    except ValueError:
                        pass
                out.append(_ESCAPES.get(nxt, nxt))
                i += 2
                continue
            out.append(char)
            i += 1
        return "".join(out)


def _scan_string(text: str, start: int) -> tuple[int, bool]:
    """End offset (after the closing quote) of the string opening at ``start``;
    unterminated strings stop at the line's end."""
    i = start + 1
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == '"':
            return i + 1, True
        if char in "\r\n":
            return i, False
        i += 1
    return n, False


def locate(text: str, offset: int) -> JsonCursor | None:
    """The JSON context at ``offset`` of ``text`` (``None`` outside the root value)."""
    stack: list[_Frame] = []
    i, n = 0, len(text)

    def context_between() -> JsonCursor | None:
        if not stack:
            return None
        frame = stack[-1]
        if frame.kind == "object":
            if frame.expect in ("key", "comma"):
                return JsonCursor(frame.path + (None,), True, present_keys=frozenset(frame.keys))
            return JsonCursor(frame.path + (frame.key,), False, present_keys=frozenset(frame.keys))
        return JsonCursor(frame.path + (frame.index,), False)

    while i < n:
        char = text[i]
        if char in " \t\r\n":
            i += 1
            continue
        if i >= offset:
            return context_between()
        if char == '"':
            end, terminated = _scan_string(text, i)
            inside = i < offset <= end - (1 if terminated else 0)
            raw = text[i + 1 : end - 1 if terminated else end]
            frame = stack[-1] if stack else None
            if frame is not None and frame.kind == "object" and frame.expect in ("key", "comma"):
                key = _decode(raw)
                if inside:
                    return JsonCursor(frame.path + (key,), True, True, i, end, key, terminated, frozenset(frame.keys))
                frame.key = key
                frame.keys.add(key)
                frame.expect = "colon"
            else:
                if inside:
                    if frame is None:
                        return None
                    part = frame.key if frame.kind == "object" else frame.index
                    keys = frozenset(frame.keys) if frame.kind == "object" else frozenset()
                    return JsonCursor(frame.path + (part,), False, True, i, end, _decode(raw), terminated, keys)
                _after_value(stack)
            i = end
            continue
        if char in "{[":
            frame = stack[-1] if stack else None
            path: tuple = ()
            if frame is not None:
                path = frame.path + ((frame.key if frame.kind == "object" else frame.index),)
            stack.append(_Frame("object" if char == "{" else "array", path, expect="key" if char == "{" else "value"))
            i += 1
            continue
        if char in "}]":
            if stack:
                stack.pop()
                _after_value(stack)
            i += 1
            if not stack and i >= offset:
                return None
            continue
        if char == ":":
            if stack and stack[-1].kind == "object":
                stack[-1].expect = "value"
            i += 1
            continue
        if char == ",":
            if stack:
                frame = stack[-1]
                if frame.kind == "object":
                    frame.expect = "key"
                    frame.key = None
                else:
                    frame.index += 1 if frame.expect == "comma" else 0
                    frame.expect = "value"
            i += 1
            continue
        # a literal or number (or junk): skip to the next delimiter
        j = i
        while j < n and text[j] not in ' \t\r\n,:{}[]"':
            j += 1
        if i < offset <= j:
            return context_between()
        _after_value(stack)
        i = j
    return context_between()


def _after_value(stack: list[_Frame]) -> None:
    if not stack:
        return
    frame = stack[-1]
    frame.expect = "comma"
