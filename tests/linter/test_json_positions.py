"""Positions of keys and values in probe.json (:class:`JsonPositions`, from
tree-sitter-json's syntax tree) against two references the code under test
does not compute: json-source-map's source map (the positions the linter
reported before), and Python's :mod:`json` reading back the text at each
span."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from json_source_map import calculate

from skill_eval.linter.probejson import JsonPositions, ProbeJson, pointer
from skill_eval.linter.textfile import Position, Span, TextDocument

PATH = Path("/w/probe.json")

_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12) | st.sampled_from(
    ["", "a/b", "~0", "é€😀", 'say "hi"', "back\\slash", "tab\there", "\u2028", "line\nbreak", "\x00"])
_SCALARS = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False, allow_infinity=False) | _TEXT
_JSON = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
                     max_leaves=30)
_LAYOUT = st.fixed_dictionaries({
    "indent": st.sampled_from([None, 0, 1, 2, "\t"]),
    "ensure_ascii": st.booleans(),
    "separators": st.sampled_from([None, (",", ":"), (" , ", " : ")]),
})


def _paths(value, parts=()):
    """Every ``(parts, value)`` of ``value``, itself included."""
    yield parts, value
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*parts, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*parts, index))


def _text_at(document: TextDocument, span: Span) -> str:
    return document.text[document.offset(span.start):document.offset(span.end)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, _LAYOUT)
def test_positions_agree_with_json_source_map(value, layout) -> None:
    """Every value's span, and every key's, is json-source-map's, for keys
    written without escapes (json-source-map keys its map by the key as
    written: an escaped key is not found there by its value, and a key with
    a ``/`` is ambiguous in its paths)."""
    text = json.dumps(value, **layout)
    document = TextDocument(PATH, text)
    positions = JsonPositions(document)
    reference = calculate(text)
    compared = 0
    for parts, _item in _paths(value):
        keys = [part for part in parts if isinstance(part, str)]
        if any("/" in key or json.dumps(key, ensure_ascii=layout["ensure_ascii"])[1:-1] != key for key in keys):
            continue
        entry = reference["".join(f"/{part}" for part in parts)]
        where = pointer(*parts)
        start, end = entry.value_start, entry.value_end
        assert positions.value_span(where) == Span(PATH, Position(start.line + 1, start.column + 1),
                                                   Position(end.line + 1, end.column + 1)), (text, where)
        if entry.key_start is not None:
            start, end = entry.key_start, entry.key_end
            assert positions.key_span(where) == Span(PATH, Position(start.line + 1, start.column + 1),
                                                     Position(end.line + 1, end.column + 1)), (text, where)
        compared += 1
    assert compared >= 1  # the whole document at least


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, _LAYOUT)
def test_each_span_holds_what_python_reads_there(value, layout) -> None:
    """Escaped keys included: the text at every value's edit span reads back
    (:func:`json.loads`) as that value, and the text at every key's edit
    span as that key."""
    text = json.dumps(value, **layout)
    document = TextDocument(PATH, text)
    positions = JsonPositions(document)
    for parts, item in _paths(value):
        where = pointer(*parts)
        assert json.loads(_text_at(document, positions.edit_span(where))) == item, (text, where)
        key = positions.edit_span(where, key=True)
        if parts and isinstance(parts[-1], str):
            assert json.loads(_text_at(document, key)) == parts[-1], (text, where)
        else:
            assert key is None


def test_a_missing_pointer_stands_at_its_nearest_parent() -> None:
    text = '{\n  "defects": [\n    {"id": "D1"}\n  ],\n  "id": "p"\n}\n'
    probe = ProbeJson.parse(TextDocument(PATH, text))
    document = probe.document
    assert _text_at(document, probe.positions().value_span("/defects/0/quote")) == '{"id": "D1"}'
    assert _text_at(document, probe.positions().key_span("/defects/0/quote")) == '{"id": "D1"}'
    assert _text_at(document, probe.positions().key_span("/defects/7")) == '"defects"'
    assert _text_at(document, probe.positions().value_span("/id/x")) == '"p"'
    assert probe.positions().edit_span("/defects/0/quote") is None
    assert probe.positions().edit_span("/defects/0", key=True) is None  # an array item has no key
    assert probe.positions().object_span("") == Span.at(PATH, 1, 1, 1, 2)


def test_the_last_of_duplicate_keys_is_the_one_the_data_holds() -> None:
    text = '{"id": "first", "id": "second"}'
    probe = ProbeJson.parse(TextDocument(PATH, text))
    assert probe.data == {"id": "second"}
    assert _text_at(probe.document, probe.positions().value_span("/id")) == '"second"'


def test_an_escaped_key_is_found_by_its_value() -> None:
    text = '{"se\\u0065ded_defects": 3, "\\u00e9t\\u00e9": [1]}'
    probe = ProbeJson.parse(TextDocument(PATH, text))
    assert probe.data == {"seeded_defects": 3, "été": [1]}
    assert _text_at(probe.document, probe.positions().edit_span("/seeded_defects")) == "3"
    assert _text_at(probe.document, probe.positions().edit_span("/seeded_defects", key=True)) == '"se\\u0065ded_defects"'
    assert _text_at(probe.document, probe.positions().value_span(pointer("été", 0))) == "1"


def test_columns_count_characters_not_bytes() -> None:
    text = '{"é€😀": "x", "b": [true]}'
    probe = ProbeJson.parse(TextDocument(PATH, text))
    assert probe.positions().value_span("/b/0") == Span.at(PATH, 1, 20, 1, 24)


@pytest.mark.parametrize("text, message, position", [
    ('{"id": "p",\n  "tier" 2}', "Expecting ':' delimiter", (2, 10)),
    ("", "the file is empty", (1, 1)),
    ('{"id": "p",}', "Expecting property name enclosed in double quotes", (1, 12)),
])
def test_malformed_json_keeps_python_s_message_and_position(text: str, message: str, position) -> None:
    """msgspec parses the data; a file it refuses is read by :mod:`json`,
    whose message and line and column SE001 reports."""
    probe = ProbeJson.parse(TextDocument(PATH, text))
    assert probe.data is None and probe.syntax_error is not None
    assert probe.syntax_error.message == message
    assert (probe.syntax_error.position.line, probe.syntax_error.position.column) == position


@pytest.mark.parametrize("text, data", [
    ('{"x": NaN}', None), ('{"x": 1e400}', {"x": float("inf")}), ('{"x": "\\ud800"}', {"x": "\ud800"}),
    ('{"x": 123456789012345678901234567890}', {"x": 123456789012345678901234567890}),
])
def test_what_python_reads_and_msgspec_refuses_is_read_as_before(text: str, data) -> None:
    """Its positions too, but for ``NaN``, which is no JSON: tree-sitter-json
    does not read it, and its findings stand at the object holding it."""
    probe = ProbeJson.parse(TextDocument(PATH, text))
    assert probe.syntax_error is None
    if data is None:
        assert probe.data["x"] != probe.data["x"]  # NaN
        assert probe.positions().value_span("/x").start == Position(1, 1)
    else:
        assert probe.data == data
        assert probe.positions().value_span("/x").start == Position(1, 7)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_JSON, _LAYOUT, st.sampled_from(["", " ", "x", ",", "]", "}", '"', "\\", "\x01", "1e999", "NaN"]),
       st.integers(0, 200))
def test_the_data_is_what_python_reads(value, layout, insert, where) -> None:
    """msgspec's data (or, for what it refuses, :mod:`json`'s) equals
    :func:`json.loads`'s, and a text :func:`json.loads` refuses is refused
    (documents, and documents with a character slipped in)."""
    from skill_eval.linter.probejson import _decode

    text = json.dumps(value, **layout)
    text = text[:where] + insert + text[where:]
    try:
        expected = json.loads(text)
    except ValueError:
        with pytest.raises(ValueError):
            _decode(text)
        return
    assert json.dumps(_decode(text), sort_keys=True) == json.dumps(expected, sort_keys=True)
