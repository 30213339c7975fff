"""The cursor's place in probe.json (:func:`locate`, over tree-sitter-json's
syntax tree) against a reference it does not compute: documents written token
by token from random values, which record where each key, value, comma and
container is (and are read back by :func:`json.loads` to prove the writing
right); the expected context at an offset follows from those spans alone.
Half-typed JSON is checked twice: every prefix of such a document (the user
typing it from left to right) has at its end the context the finished document
has there, and a table of broken documents keeps the contexts completion,
hover and definition rely on."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skill_eval.server.jsoncursor import JsonCursor, locate

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8) | st.sampled_from(
    ["", "step_heading", "é€😀", 'say "hi"', "back\\slash", "tab\there", "\u2028", "line\nbreak", "1e+5"])
_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=25)
_SPACE = st.sampled_from(["", " ", "\n", "  \n\t", "\r\n "])


@dataclass
class _Token:
    """A key, a scalar or a container as written, with the spans around it."""

    start: int
    end: int
    path: tuple
    value: object
    is_key: bool = False
    container: bool = False
    keys: frozenset = frozenset()
    """A key: the keys of its object written before it."""
    members: list = field(default_factory=list)
    """An object: for each key, (key start, key end, value start, value end, key)."""
    commas: list = field(default_factory=list)
    """An object or array: the offset of each comma."""


class _Writer:
    """Writes a value token by token with random spacing, keeping every token's span."""

    def __init__(self, draw, ensure_ascii: bool) -> None:
        self.draw, self.ensure_ascii = draw, ensure_ascii
        self.text, self.tokens = "", []

    def put(self, written: str) -> tuple[int, int]:
        self.text += self.draw(_SPACE)
        start = len(self.text)
        self.text += written
        return start, len(self.text)

    def value(self, value, path: tuple) -> _Token:
        if isinstance(value, (dict, list)):
            token = _Token(self.put("{" if isinstance(value, dict) else "[")[0], 0, path, value, container=True)
            items = value.items() if isinstance(value, dict) else enumerate(value)
            for number, (part, item) in enumerate(items):
                if number:
                    token.commas.append(self.put(",")[0])
                if isinstance(value, dict):
                    key = _Token(*self.put(json.dumps(part, ensure_ascii=self.ensure_ascii)), path + (part,), part,
                                 is_key=True, keys=frozenset(member[4] for member in token.members))
                    self.tokens.append(key)
                    self.put(":")
                    inner = self.value(item, path + (part,))
                    token.members.append((key.start, key.end, inner.start, inner.end, part))
                else:
                    self.value(item, path + (part,))
            token.end = self.put("}" if isinstance(value, dict) else "]")[1]
        else:
            token = _Token(*self.put(json.dumps(value, ensure_ascii=self.ensure_ascii)), path, value)
        self.tokens.append(token)
        return token


@st.composite
def _documents(draw) -> tuple[object, _Writer]:
    value = draw(_JSON)
    writer = _Writer(draw, draw(st.booleans()))
    writer.value(value, ())
    writer.text += draw(_SPACE)
    return value, writer


def _between(tokens: list[_Token], offset: int) -> tuple | None:
    """The context of ``offset`` outside any string: the innermost container
    around it and the members of that container that begin before it."""
    around = [t for t in tokens if t.container and t.start < offset < t.end]
    if not around:
        return None
    inner = max(around, key=lambda t: t.start)
    if isinstance(inner.value, list):
        return inner.path + (sum(comma < offset for comma in inner.commas),), False, False, None, None, None, frozenset()
    begun = [member for member in inner.members if member[0] < offset]
    keys = frozenset(member[4] for member in begun)
    if begun and begun[-1][2] >= offset:  # after a key, before its value
        return inner.path + (begun[-1][4],), False, False, None, None, None, keys
    return inner.path + (None,), True, False, None, None, None, keys


def _expected(tokens: list[_Token], offset: int) -> tuple | None:
    """The reference's context at ``offset`` (the fields of a :class:`JsonCursor`)."""
    for token in tokens:
        if token.container or not token.start < offset <= token.end:
            continue
        if isinstance(token.value, str) and offset < token.end:
            parent = _between(tokens, token.start)
            if parent is None:
                return None
            keys = token.keys if token.is_key else parent[6]
            return token.path, token.is_key, True, token.start, token.end, token.value, keys
        if not isinstance(token.value, str):  # on a number or a literal: as at its start
            return _between(tokens, token.start)
    return _between(tokens, offset)


def _fields(cursor: JsonCursor | None) -> tuple | None:
    if cursor is None:
        return None
    return cursor.path, cursor.in_key, cursor.in_string, cursor.start, cursor.end, cursor.value, cursor.present_keys


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_every_offset_of_a_valid_document_is_placed_as_its_spans_say(document) -> None:
    value, writer = document
    assert json.loads(writer.text) == value  # the writer wrote the value
    for offset in range(len(writer.text) + 1):
        assert _fields(locate(writer.text, offset)) == _expected(writer.tokens, offset), (writer.text, offset)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_documents())
def test_typing_a_document_from_left_to_right_keeps_the_finished_documents_context(document) -> None:
    """At the end of every prefix the path, key-or-value and string start are the
    finished document's at that offset; a string cut by the prefix is unterminated
    and ends there (a key cut so is named by its typed part)."""
    _value, writer = document
    for offset in range(len(writer.text) + 1):
        expected = _expected(writer.tokens, offset)
        cursor = locate(writer.text[:offset], offset)
        got = _fields(cursor)
        if expected is None or not expected[2]:
            assert got == expected, (writer.text[:offset],)
            continue
        last = cursor.value if cursor.in_key else expected[0][-1]  # a key is named by what is typed of it
        assert (got[0][:-1], *got[1:4], got[6]) == (expected[0][:-1], *expected[1:4], expected[6]), (writer.text[:offset],)
        assert cursor.path[-1] == last and cursor.end == offset and not cursor.terminated
        body = writer.text[cursor.start + 1:offset]
        if "\\" not in body:
            assert cursor.value == body


@pytest.mark.parametrize(("text", "offset", "expected"), [
    # an unterminated string at the end: the value being typed
    ('{\n  "id": "x",\n  "step_heading": "Ste', 37, (("step_heading",), False, True, 33, 37, "Ste", {"id", "step_heading"})),
    ('{"step_heading": "', 18, (("step_heading",), False, True, 17, 18, "", {"step_heading"})),
    ('{"a": {"b": "x', 14, (("a", "b"), False, True, 12, 14, "x", {"b"})),
    ('{"a": [1, "x', 12, (("a", 1), False, True, 10, 12, "x", set())),
    ('{"a": "x\\"y', 11, (("a",), False, True, 6, 11, 'x"y', {"a"})),
    ('{"a":"\\', 7, (("a",), False, True, 5, 7, "\\", {"a"})),
    # an unterminated string ends at its line's end; the next line reads on
    ('{"a": "x\n, "b": 1}', 8, (("a",), False, True, 6, 8, "x", {"a"})),
    ('{"a": "x\n, "b": 1}', 12, (("b",), True, True, 11, 14, "b", {"a"})),
    ('{"a": "x\n, "b": 1}', 16, (("b",), False, False, None, None, None, {"a", "b"})),
    # a key being typed, after a comma or in an empty object
    ('{"k": "v", "', 12, (("",), True, True, 11, 12, "", {"k"})),
    ('{"k": 1,', 8, ((None,), True, False, None, None, None, {"k"})),
    ('{', 1, ((None,), True, False, None, None, None, set())),
    ('{"defects": [{"shape": "x", ', 28, (("defects", 0, None), True, False, None, None, None, {"shape"})),
    # a missing comma or colon is assumed; junk is a value
    ('{"a": 1 "b": 2}', 10, (("b",), True, True, 8, 11, "b", {"a"})),
    ('{"a": 1 "b": 2}', 13, (("b",), False, False, None, None, None, {"a", "b"})),
    ('{"a" "b"}', 7, (("a",), False, True, 5, 8, "b", {"a"})),
    ('{"a": tru', 9, (("a",), False, False, None, None, None, {"a"})),
    ('{"a": foo, "b": 1}', 13, (("b",), True, True, 11, 14, "b", {"a"})),
    ('{"a": [1, 2', 11, (("a", 1), False, False, None, None, None, set())),
    # a present key later in the object is not yet seen (completion offers it again)
    ('{"kind": "", "shapes": ["eu"], "defects": [{"shape": "", "caught_when": {"verdict": "", "": 1}}]}', 89,
     (("defects", 0, "caught_when", ""), True, True, 88, 90, "", {"verdict"})),
    # outside the root value
    ('{"a": 1} ', 8, None),
    ('{"a": 1} ', 9, None),
    ('', 0, None),
    ('  "x"', 3, None),
    # offsets count characters, not UTF-8 bytes
    ('{"é€": ["😀", "ü', 15, (("é€", 1), False, True, 13, 15, "ü", set())),
])
def test_broken_documents(text: str, offset: int, expected) -> None:
    if expected is not None:
        expected = (*expected[:6], frozenset(expected[6]))
    assert _fields(locate(text, offset)) == expected
