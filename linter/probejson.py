"""probe.json: parsing, JSON Schema validation and source positions.

Positions of keys and values come from ``json-source-map`` (computed lazily,
only when a diagnostic needs one); validation uses ``jsonschema`` with the
shipped draft 2020-12 schema (imported lazily: it costs ~0.15 s to import).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any, Iterator

from .textfile import Position, Span, TextDocument

SCHEMA_RESOURCE = "data/probe.schema.json"


def pointer(*parts: str | int) -> str:
    """An RFC 6901 JSON pointer to ``parts``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


@lru_cache(maxsize=1)
def probe_schema() -> dict:
    """The shipped JSON Schema of probe.json."""
    return json.loads(resources.files("skill_eval.linter").joinpath(SCHEMA_RESOURCE).read_text(encoding="utf-8"))


@lru_cache(maxsize=1)
def _validator():
    from jsonschema import Draft202012Validator, FormatChecker

    return Draft202012Validator(probe_schema(), format_checker=FormatChecker())


@dataclass(frozen=True)
class JsonSyntaxError:
    """Where and why probe.json does not parse."""

    message: str
    position: Position


@dataclass(frozen=True)
class SchemaProblem:
    """One schema violation: a message and where it points.

    ``pointer`` is the offending value; ``anchor`` says what to point at:
    ``value``, its ``key`` (unknown keys) or, for a missing key, the ``object``
    that lacks it (see :meth:`ProbeJson.problem_span`).
    """

    message: str
    pointer: str
    anchor: str = "value"


_EXPECTATION_HELP = (
    "an expectation is a string, or one object with one of "
    "`equals`, `one_of`, `contains`, `matches` or `not`"
)


@dataclass(frozen=True, eq=False)
class ProbeJson:
    """A parsed probe.json (``data`` is ``None`` when it does not parse)."""

    document: TextDocument
    data: Any
    syntax_error: JsonSyntaxError | None

    @classmethod
    def parse(cls, document: TextDocument) -> "ProbeJson":
        try:
            return cls(document, json.loads(document.text), None)
        except json.JSONDecodeError as error:
            message = "the file is empty" if not document.text.strip() else error.msg
            return cls(document, None, JsonSyntaxError(message, Position(error.lineno, error.colno)))
        except RecursionError:
            return cls(document, None, JsonSyntaxError("nested too deeply to parse", Position(1, 1)))

    @cached_property
    def _source_map(self) -> dict:
        from json_source_map import calculate

        try:
            return calculate(self.document.text)
        except Exception:  # noqa: BLE001 - positions are a nicety; fall back to the file start
            return {}

    def _location_span(self, start, end) -> Span:
        return Span(
            self.document.path,
            Position(start.line + 1, start.column + 1),
            Position(end.line + 1, end.column + 1),
        )

    def value_span(self, json_pointer: str) -> Span:
        """The span of the value at ``json_pointer`` (the nearest existing parent's
        value if it does not exist)."""
        entry = self._nearest(json_pointer)
        if entry is None:
            return self._first_line_span()
        return self._location_span(entry.value_start, entry.value_end)

    def key_span(self, json_pointer: str) -> Span:
        """The span of the key of ``json_pointer`` (its value for array items)."""
        entry = self._nearest(json_pointer)
        if entry is None:
            return self._first_line_span()
        if entry.key_start is None:
            return self._location_span(entry.value_start, entry.value_end)
        return self._location_span(entry.key_start, entry.key_end)

    def has(self, json_pointer: str) -> bool:
        return json_pointer in self._source_map

    def _nearest(self, json_pointer: str):
        source_map = self._source_map
        while True:
            entry = source_map.get(json_pointer)
            if entry is not None or not json_pointer:
                return entry
            json_pointer = json_pointer.rsplit("/", 1)[0]

    def _first_line_span(self) -> Span:
        first = self.document.lines[0] if self.document.lines else ""
        return Span.at(self.document.path, 1, 1, 1, max(len(first), 1) + 1)

    def object_span(self, json_pointer: str) -> Span:
        """For a missing key in the object at ``json_pointer``: the key of that
        object, or the root object's opening brace."""
        if json_pointer:
            return self.key_span(json_pointer)
        entry = self._source_map.get("")
        if entry is None:
            return self._first_line_span()
        start = entry.value_start
        return Span(self.document.path, Position(start.line + 1, start.column + 1), Position(start.line + 1, start.column + 2))

    def problem_span(self, problem: SchemaProblem) -> Span:
        """Where a schema problem is reported."""
        if problem.anchor == "key":
            return self.key_span(problem.pointer)
        if problem.anchor == "object":
            return self.object_span(problem.pointer)
        return self.value_span(problem.pointer)

    def schema_problems(self) -> list[SchemaProblem]:
        """Every schema violation, one per error (an unknown key is one each)."""
        if self.syntax_error is not None:
            return []
        return sorted(_schema_problems(self.data), key=lambda p: (p.pointer, p.message))


def _schema_problems(data: Any) -> Iterator[SchemaProblem]:
    validator = _validator()
    for error in validator.iter_errors(data):
        where = pointer(*error.absolute_path)
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            properties = error.schema.get("properties", {})
            patterns = error.schema.get("patternProperties", {})
            for key in error.instance:
                if key in properties or any(re.search(p, key) for p in patterns):
                    continue
                allowed = ", ".join(f"`{k}`" for k in properties)
                prefix = "unknown key" if where == "" else f"unknown key in {where or 'the probe'}"
                hint = " (keys of your own must begin with `x-`)" if where == "" else ""
                yield SchemaProblem(f"{prefix} `{key}`{hint}; allowed: {allowed}", pointer(*error.absolute_path, key), "key")
        elif error.validator == "required":
            missing = re.findall(r"'([^']+)' is a required property", error.message)
            name = missing[0] if missing else error.message
            reason = ""
            if "allOf" in error.schema_path:
                reason = " for a band probe" if name == "band" else " for a tier-2 probe"
            yield SchemaProblem(f"missing required key `{name}`{reason}", where, "object")
        elif error.validator == "oneOf" and "caught_when" in error.absolute_path:
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
    if argv:
        import sys

        print("skill-eval schema: takes no arguments (it prints the probe.json schema)", file=sys.stderr)
        return 2
    print(json.dumps(probe_schema(), indent=2))
    return 0
