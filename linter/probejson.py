"""probe.json: parsing (msgspec, else :mod:`json`), validation against the shipped
draft 2020-12 schema (jsonschema-rs; jsonschema lists the errors of a probe that
fails it) and positions from tree-sitter-json's syntax tree (docs/performance.md).
"""

from __future__ import annotations

import json
import re
import sys
from functools import lru_cache
from typing import Any, Iterator, NamedTuple

import msgspec

from . import read_data
from .textfile import Position, Span, TextDocument

SCHEMA_NAME = "probe.schema.json"


def pointer(*parts: str | int) -> str:
    """An RFC 6901 JSON pointer to ``parts``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@lru_cache(maxsize=1)
def probe_schema() -> dict:
    """The shipped JSON Schema of probe.json."""
    return json.loads(read_data(SCHEMA_NAME))


@lru_cache(maxsize=1)
def _compiled_validator():
    """jsonschema-rs's validator of the shipped schema, checking formats as
    jsonschema's ``FormatChecker`` does (``regex``: Python's :mod:`re`)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(probe_schema(), validate_formats=True, formats={"regex": _is_python_regex})


def _is_python_regex(text: str) -> bool:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def is_valid_fast(data: Any) -> bool:
    """Whether ``data`` satisfies the schema, by the compiled validator (any doubt: no)."""
    try:
        return _compiled_validator().is_valid(data)
    except Exception:  # noqa: BLE001 - any doubt (a number past 64 bits) goes to the full validator
        return False


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(probe_schema(), format_checker=FormatChecker())


class JsonSyntaxError(NamedTuple):
    """Where and why probe.json does not parse."""

    message: str
    position: Position


class SchemaProblem(NamedTuple):
    """One schema violation: a message, the ``pointer`` to the offending value, and the
    ``anchor`` to point at: ``value``, its ``key``, or the ``object`` lacking a key."""

    message: str
    pointer: str
    anchor: str = "value"


_EXPECTATION_HELP = ("an expectation is a string, or one object with one of "
                     "`equals`, `one_of`, `contains`, `matches` or `not`")


MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a probe.json may have (a probe needs ~6);
deeper is SE002 and the probe is not read further (the validator and the rules recurse)."""

MAX_SCHEMA_PROBLEMS = 100
"""SE002 reports at most this many schema violations per probe.json, then how many more."""

_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
"""A JSON string (skipped whole) or a bracket."""


def _first_too_deep(text: str, limit: int) -> int | None:
    """The offset of the first bracket that opens level ``limit`` + 1, if any (strings
    skipped; a text with at most ``limit`` brackets is not scanned)."""
    if text.count("[") + text.count("{") <= limit:
        return None
    depth = 0
    for match in _STRUCTURE.finditer(text):
        char = text[match.start()]
        if char == "[" or char == "{":
            depth += 1
            if depth > limit:
                return match.start()
        elif char == "]" or char == "}":
            depth -= 1
    return None


def _long_integer(text: str) -> re.Match | None:
    """The first run of digits, outside strings, longer than Python turns into an
    ``int`` (:func:`sys.get_int_max_str_digits`)."""
    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if not limit:
        return None
    pattern = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?\d{%d,}' % (limit + 1))
    return next((match for match in pattern.finditer(text) if text[match.start()] != '"'), None)


def _decode(text: str) -> Any:
    """The data of the JSON ``text``: msgspec's, or :func:`json.loads`'s for what msgspec
    refuses (malformed JSON, whose messages SE001 reports; ``NaN``, a lone surrogate
    escape, an integer past 64 bits); raises what :func:`json.loads` raises."""
    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError, UnicodeEncodeError):
        return json.loads(text)


class ProbeJson:
    """A parsed probe.json (``data`` is ``None`` when it does not parse, or nests deeper
    than :data:`MAX_DEPTH`: :attr:`too_deep`). Each span parses a syntax tree
    (:class:`JsonPositions`); a caller asking several may hold one :meth:`positions`."""

    def __init__(self, document: TextDocument, data: Any, syntax_error: JsonSyntaxError | None,
                 too_deep: SchemaProblem | None = None) -> None:
        self.document = document
        self.data = data
        self.syntax_error = syntax_error
        self.too_deep = too_deep

    def __repr__(self) -> str:
        return f"ProbeJson({self.document.path!r}, syntax_error={self.syntax_error!r})"

    @classmethod
    def parse(cls, document: TextDocument) -> "ProbeJson":
        text = document.text
        try:
            data = _decode(text)
        except json.JSONDecodeError as error:
            message = "the file is empty" if not text.strip() else error.msg
            return cls(document, None, JsonSyntaxError(message, Position(error.lineno, error.colno)))
        except RecursionError:
            offset = _first_too_deep(text, MAX_DEPTH) or 0
            return cls(document, None, JsonSyntaxError(
                f"nested too deeply to parse (probe.json may nest at most {MAX_DEPTH} levels)", document.position(offset)))
        except ValueError as error:  # an integer too long for Python's int-to-str limit
            found = _long_integer(text)
            if found is None:
                return cls(document, None, JsonSyntaxError(str(error)[:200], Position(1, 1)))
            digits = len(found.group().lstrip("-"))
            return cls(document, None, JsonSyntaxError(
                f"a number of {digits:,} digits (at most {sys.get_int_max_str_digits():,} can be read)",
                document.position(found.start())))
        offset = _first_too_deep(text, MAX_DEPTH)
        if offset is not None:
            problem = SchemaProblem(f"probe.json nests more than {MAX_DEPTH} levels of arrays and objects; "
                                    "flatten it", "", "deep")
            probe = cls(document, None, None, problem)
            probe._deep_offset = offset
            return probe
        return cls(document, data, None)

    def positions(self) -> "JsonPositions":
        """The positions of this file's keys and values (none when it does not parse)."""
        return JsonPositions(self.document, parsed=self.data is not None)

    def problem_span(self, problem: SchemaProblem, positions: "JsonPositions | None" = None) -> Span:
        """Where a schema problem is reported (``positions``: this file's, if
        the caller holds them already)."""
        if problem.anchor == "deep":
            return self.document.span(self._deep_offset, self._deep_offset + 1)
        positions = positions or self.positions()
        if problem.anchor == "key":
            return positions.key_span(problem.pointer)
        if problem.anchor == "object":
            return positions.object_span(problem.pointer)
        return positions.value_span(problem.pointer)

    def schema_problems(self) -> list[SchemaProblem]:
        """Every schema violation, one per error (an unknown key is one each)."""
        if self.too_deep is not None:
            return [self.too_deep]
        if self.syntax_error is not None:
            return []
        unrunnable = list(_unrunnable_patterns(self.data))
        if is_valid_fast(self.data):
            return unrunnable
        problems = sorted(_schema_problems(self.data), key=lambda p: (p.pointer, p.message))
        if len(problems) > MAX_SCHEMA_PROBLEMS:
            more = len(problems) - MAX_SCHEMA_PROBLEMS
            problems = problems[:MAX_SCHEMA_PROBLEMS]
            problems.append(SchemaProblem(f"{more:,} more schema violations in this file (the first "
                                          f"{MAX_SCHEMA_PROBLEMS} are reported)", "", "object"))
        return problems + unrunnable


@lru_cache(maxsize=1)
def _json_language():
    """tree-sitter-json's grammar (imported when a position is first asked)."""
    import tree_sitter
    import tree_sitter_json

    return tree_sitter.Language(tree_sitter_json.language())


_PLUS_EXPONENT = re.compile(rb"(?<=[0-9][eE])\+")
"""The ``+`` of an exponent (``1e+16``), which tree-sitter-json 0.24 misreads (its pull
request 64): a ``0`` of the same length in its place (keys are read from the file's bytes)."""


def json_syntax_tree(raw: bytes):
    """tree-sitter-json's syntax tree of ``raw`` (a fresh parser per call: a parser is
    not shared between threads), an exponent's ``+`` read as :data:`_PLUS_EXPONENT` says."""
    from tree_sitter import Parser

    return Parser(_json_language()).parse(_PLUS_EXPONENT.sub(b"0", raw))


class JsonPositions:
    """Where the keys and values of one JSON file are (spans in characters), from
    tree-sitter-json's syntax tree, made when a position is needed and not kept (a tree
    takes ~20 times its text's memory). A pointer that does not exist is answered with
    its nearest existing parent, or the first line (``parsed`` false: no parse)."""

    def __init__(self, document: TextDocument, parsed: bool = True) -> None:
        self.document = document
        self._raw = document.text.encode("utf-8", "surrogatepass")
        self._tree = json_syntax_tree(self._raw) if parsed else None
        values = [node for node in self._tree.root_node.named_children if node.type != "comment"] if parsed else []
        self._root = values[0] if values else None
        self._members: dict[int, Any] = {}

    def _offset(self, byte: int) -> int:
        """The character offset of the UTF-8 ``byte`` offset."""
        if len(self._raw) == len(self.document.text):
            return byte
        return len(self._raw[:byte].decode("utf-8", "surrogatepass"))

    def _span(self, node) -> Span:
        return self.document.span(self._offset(node.start_byte), self._offset(node.end_byte))

    def _key(self, node) -> str:
        """The key that a string node spells (its escapes decoded)."""
        written = self._raw[node.start_byte:node.end_byte].decode("utf-8", "surrogatepass")
        return json.loads(written) if "\\" in written else written[1:-1]

    def _children(self, node) -> dict[str, Any] | list:
        """An object's pairs by key (the last of duplicates) or an array's items, once per node."""
        found = self._members.get(node.id)
        if found is None:
            named = [child for child in node.named_children if child.type != "comment"]
            found = named if node.type != "object" else {
                self._key(pair.child_by_field_name("key")): pair for pair in named if pair.type == "pair"}
            self._members[node.id] = found
        return found

    def _walk(self, json_pointer: str) -> tuple[Any, Any, bool]:
        """``(key node, value node, whether all was found)`` of the deepest value on the path."""
        key, node = None, self._root
        if node is None:
            return None, None, False
        for part in json_pointer.split("/")[1:]:
            part = part.replace("~1", "/").replace("~0", "~")
            if node.type == "object":
                pair = self._children(node).get(part)
                value = pair.child_by_field_name("value") if pair is not None else None
                if value is None:
                    return key, node, False
                key, node = pair.child_by_field_name("key"), value
            elif node.type == "array" and part.isdigit() and int(part) < len(self._children(node)):
                key, node = None, self._children(node)[int(part)]
            else:
                return key, node, False
        return key, node, True

    def value_span(self, json_pointer: str) -> Span:
        """The span of the value at ``json_pointer`` (the nearest existing parent's
        value if it does not exist)."""
        _key, node, _found = self._walk(json_pointer)
        return self._span(node) if node is not None else self._first_line_span()

    def key_span(self, json_pointer: str) -> Span:
        """The span of the key of ``json_pointer`` (its value for array items)."""
        key, node, _found = self._walk(json_pointer)
        if node is None:
            return self._first_line_span()
        return self._span(key if key is not None else node)

    def edit_span(self, json_pointer: str, key: bool = False) -> Span | None:
        """The span of the value (or, with ``key``, the key) at ``json_pointer`` for a
        fix's edit: ``None`` when it does not exist (no parent's span: an edit there
        would replace the parent), and for the key of an array item or of the root."""
        key_node, node, found = self._walk(json_pointer)
        if not found:
            return None
        if key:
            return self._span(key_node) if key_node is not None else None
        return self._span(node)

    def object_span(self, json_pointer: str) -> Span:
        """For a missing key in the object at ``json_pointer``: the key of that
        object, or the root object's opening brace."""
        if json_pointer:
            return self.key_span(json_pointer)
        if self._root is None:
            return self._first_line_span()
        start = self._offset(self._root.start_byte)
        return self.document.span(start, start + 1)

    def _first_line_span(self) -> Span:
        first = self.document.lines[0] if self.document.lines else ""
        return Span.at(self.document.path, 1, 1, 1, max(len(first), 1) + 1)


class UnrunnablePattern(ValueError):
    """A ``matches`` pattern RE2 cannot run (:func:`linear_pattern`); the message says what to write."""


def linear_pattern(pattern: str):
    """``pattern`` compiled by RE2, which grading searches answers with in linear time;
    :class:`UnrunnablePattern` for lookaround or backreferences, which RE2 lacks."""
    import re2

    options = re2.Options()
    options.log_errors = False
    try:
        return re2.compile(pattern, options)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        reason = reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
        raise UnrunnablePattern(
            f"`matches` pattern {pattern!r} uses what grading cannot run in linear time ({reason}: lookaround "
            "or a backreference); write it without them, or put a pattern under `not` "
            "(e.g. {\"not\": {\"matches\": \"^PASS\"}})") from None


def _unrunnable_patterns(data: Any) -> Iterator[SchemaProblem]:
    """A problem for each ``matches`` pattern of the defects' ``caught_when`` that
    grading cannot run (:func:`linear_pattern`); not for one that is no regular
    expression at all (the schema's ``regex`` format reports it)."""
    defects = data.get("defects") if isinstance(data, dict) else None
    for index, defect in enumerate(defects if isinstance(defects, list) else ()):
        caught_when = defect.get("caught_when") if isinstance(defect, dict) else None
        for field, expectation in (caught_when.items() if isinstance(caught_when, dict) else ()):
            path: tuple = ("defects", index, "caught_when", field)
            while isinstance(expectation, dict) and len(expectation) == 1 and "not" in expectation:
                expectation, path = expectation["not"], (*path, "not")
            pattern = expectation.get("matches") if isinstance(expectation, dict) else None
            if isinstance(pattern, str) and _is_python_regex(pattern):
                try:
                    linear_pattern(pattern)
                except UnrunnablePattern as error:
                    yield SchemaProblem(str(error), pointer(*path, "matches"))


def _schema_problems(data: Any) -> Iterator[SchemaProblem]:
    validator = _validator()
    for error in validator.iter_errors(data):
        where = pointer(*error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            properties = error.schema.get("properties", {})
            patterns = [re.compile(p) for p in error.schema.get("patternProperties", {})]
            allowed = ", ".join(f"`{k}`" for k in properties)
            for key in error.instance:
                if key in properties or any(p.search(key) for p in patterns):
                    continue
                prefix = "unknown key" if where == "" else f"unknown key in {where or 'the probe'}"
                hint = " (keys of your own must begin with `x-`)" if where == "" else ""
                yield SchemaProblem(f"{prefix} `{key}`{hint}; allowed: {allowed}", pointer(*error.absolute_path, key), "key")
        elif error.validator == "required":
            missing = re.findall(r"'([^']+)' is a required property", error.message)
            name = missing[0] if missing else error.message
            reason = ""
            if "allOf" in error.schema_path:
                reason = " for a band probe" if name == "band" else " for a tier-2 probe"
            elif name == "caught_when":
                reason = " (or a `judge`): the discriminator"
            yield SchemaProblem(f"missing required key `{name}`{reason}", where, "object")
        elif error.validator in ("anyOf", "oneOf") and "caught_when" in error.absolute_path:
            yield SchemaProblem(f"invalid expectation {json.dumps(error.instance)[:60]}: {_EXPECTATION_HELP}", where)
        elif error.validator == "type":
            yield SchemaProblem(f"`{_key_name(error.absolute_path)}` {error.message.split(' is ', 1)[-1]}", where)
        else:
            yield SchemaProblem(f"`{_key_name(error.absolute_path)}`: {error.message}", where)


def _key_name(path) -> str:
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "probe"


def schema_main(argv: list[str] | None = None) -> int:
    """``skill-eval schema``: print the shipped JSON Schema of probe.json."""
    if argv in (["-h"], ["--help"]):
        print("usage: skill-eval schema\n\nPrint the JSON Schema (draft 2020-12) of probe.json, as shipped: point an "
              "editor's JSON support at it, e.g. skill-eval schema > probe.schema.json")
        return 0
    if argv:
        print(f"skill-eval schema: takes no arguments, got {' '.join(argv)!r} (it prints the probe.json schema; "
              "see skill-eval schema --help)", file=sys.stderr)
        return 2
    sys.stdout.write(read_data(SCHEMA_NAME))
    return 0
