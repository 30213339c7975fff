"""Where the cursor is in a probe.json that may be invalid (the user is typing).

The text is parsed by tree-sitter-json (the grammar :mod:`~skill_eval.linter.probejson`
sets up for positions), whose error recovery keeps every token of half-typed
JSON: where the tree is broken (an ``ERROR`` node), its tokens stand in a flat
row, and an unterminated string ends at its line's end with a missing quote.
:func:`locate` reads the tokens before the cursor in order, keeping the open
objects and arrays on a stack, so a missing comma or colon is assumed; whole
error-free objects and arrays before the cursor are passed over as one value.
It answers one question: at this offset, which key path is the cursor on, and
is it on a key or a value?
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterator

from tree_sitter import Node

from ..linter.probejson import json_syntax_tree

_ESCAPE = re.compile(r"\\(u[0-9a-fA-F]{4}|.?)", re.DOTALL)
"""One escape of a JSON string body, or a lone backslash at its end."""


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
    """An open object or array, and what the next token of it is expected to be
    (object: key, colon, value, comma; array: value, comma)."""

    is_object: bool
    path: tuple
    key: str | None = None
    index: int = 0
    expect: str = "key"
    keys: set = field(default_factory=set)

    def part(self) -> str | int | None:
        """The key or index of the value being read."""
        return self.key if self.is_object else self.index

    def between(self) -> JsonCursor:
        """The context of a cursor between this frame's tokens."""
        if not self.is_object:
            return JsonCursor(self.path + (self.index,), False)
        in_key = self.expect in ("key", "comma")
        return JsonCursor(self.path + ((None,) if in_key else (self.key,)), in_key, present_keys=frozenset(self.keys))


_WHOLE = frozenset({"object", "array", "pair"})
"""The nodes read as one token when they end before the cursor."""

_LITERAL_ENDS = frozenset(bytes([byte]) for byte in b' \t\r\n,:{}[]"/')
"""The bytes a number, a literal or junk stops before."""

_DELIMITERS = frozenset({"{", "}", "[", "]", ":", ",", '"', "comment"})
"""The tokens that end a number, a literal or junk."""


def _decode(body: str) -> str:
    """A JSON string body's text, tolerating a broken escape (kept as the escaped character)."""
    try:
        return json.loads(f'"{body}"')
    except ValueError:
        def one(match: re.Match) -> str:
            try:
                return json.loads(f'"{match.group(0)}"')
            except ValueError:
                return match.group(1) or "\\"
        return _ESCAPE.sub(one, body)


def _tokens(node: Node, raw: bytes, target: int) -> Iterator[Node]:
    """The leaves of ``node`` in order, and, as one token, every object or array
    that is whole, error-free and ends by the byte ``target``, and every such
    object member that ends before it at a delimiter (the cursor at a member's
    end is on its value, and ``"a": 1e`` is no member ``"a": 1`` then junk)."""
    for child in node.children:
        if child.type in _WHOLE and not child.has_error and (child.end_byte <= target if child.type != "pair" else (
                child.end_byte < target and raw[child.end_byte:child.end_byte + 1] in _LITERAL_ENDS)):
            yield child
        elif child.child_count:
            yield from _tokens(child, raw, target)
        else:
            yield child


def locate(text: str, offset: int) -> JsonCursor | None:
    """The JSON context at character ``offset`` of ``text`` (``None`` outside the root value)."""
    raw = text.encode("utf-8", "surrogatepass")
    ascii_only = len(raw) == len(text)
    target = offset if ascii_only else len(text[:offset].encode("utf-8", "surrogatepass"))

    def chars(byte: int) -> int:
        return byte if ascii_only else len(raw[:byte].decode("utf-8", "surrogatepass"))

    tree = json_syntax_tree(raw)
    stack: list[_Frame] = []
    tokens = _tokens(tree.root_node, raw, target)
    pending: Node | None = None
    while True:
        token = pending or next(tokens, None)
        pending = None
        if token is None or token.start_byte >= target and not token.is_missing:
            return stack[-1].between() if stack else None
        kind = token.type
        if token.is_missing or kind == "comment":
            continue
        frame = stack[-1] if stack else None
        if kind == '"':
            start, end, terminated = token.start_byte, token.end_byte, False
            for pending in tokens:
                if pending.start_byte != end or pending.is_missing:
                    break
                end = pending.end_byte
                if pending.type == '"':
                    terminated, pending = True, None
                    break
            else:
                pending = None
            body = raw[start + 1:end - 1 if terminated else end].decode("utf-8", "surrogatepass")
            inside = start < target <= end - (1 if terminated else 0)
            if frame is not None and frame.is_object and frame.expect in ("key", "comma"):
                key = _decode(body)
                if inside:
                    return JsonCursor(frame.path + (key,), True, True, chars(start), chars(end), key, terminated,
                                      frozenset(frame.keys))
                frame.key = key
                frame.keys.add(key)
                frame.expect = "colon"
                continue
            if inside:
                if frame is None:
                    return None
                keys = frozenset(frame.keys) if frame.is_object else frozenset()
                return JsonCursor(frame.path + (frame.part(),), False, True, chars(start), chars(end), _decode(body),
                                  terminated, keys)
        elif kind == "pair":
            if frame is not None and frame.is_object and frame.expect in ("key", "comma"):
                key = token.child_by_field_name("key")
                frame.key = _decode(raw[key.start_byte + 1:key.end_byte - 1].decode("utf-8", "surrogatepass"))
                frame.keys.add(frame.key)
        elif kind in ("{", "["):
            stack.append(_Frame(kind == "{", frame.path + (frame.part(),) if frame else (),
                                expect="key" if kind == "{" else "value"))
            continue
        elif kind in ("}", "]"):
            if stack:
                stack.pop()
            if not stack and token.end_byte >= target:
                return None
        elif kind == ":":
            if frame is not None and frame.is_object:
                frame.expect = "value"
            continue
        elif kind == ",":
            if frame is not None:
                if frame.is_object:
                    frame.expect, frame.key = "key", None
                else:
                    frame.index += 1 if frame.expect == "comma" else 0
                    frame.expect = "value"
            continue
        elif kind not in _WHOLE:  # a number, a literal or junk, to the next delimiter (``1e``)
            end = token.end_byte
            for pending in tokens:
                if pending.start_byte != end or pending.type in _DELIMITERS:
                    break
                end = pending.end_byte
            else:
                pending = None
            if token.start_byte < target <= end:
                return frame.between() if frame else None
        if frame is not None:
            frame.expect = "comma"
