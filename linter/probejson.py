"""probe.json: parsing, JSON Schema validation and source positions.

Positions of keys and values come from ``json-source-map`` (computed lazily,
only when a diagnostic needs one); validation uses ``jsonschema-rs`` with the
shipped draft 2020-12 schema, and ``jsonschema`` (imported lazily: its import
is slow) to list the errors of a probe that fails it.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from sys import intern
from typing import Any, Iterator, NamedTuple

from . import read_data
from ._textcache import text_cache
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
    """jsonschema-rs's validator of the shipped schema: compiled, ~2.6 ms for
    1,000 probes against jsonschema's ~36 ms, with the same verdicts (a
    property test keeps them equal). Formats are checked as jsonschema's
    ``FormatChecker`` checks them (``regex``: Python's :mod:`re`)."""
    import jsonschema_rs

    return jsonschema_rs.validator_for(probe_schema(), validate_formats=True, formats={"regex": _is_python_regex})


def _is_python_regex(text: str) -> bool:
    try:
        re.compile(text)
    except (re.error, RecursionError, OverflowError):
        return False
    return True


def is_valid_fast(data: Any) -> bool:
    """Whether ``data`` satisfies the schema, decided by the compiled
    validator; jsonschema (which lists every error with its path, per the
    spec) runs only for probes that fail this check."""
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


def _interned_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object whose keys are interned: every probe.json repeats the same
    ~25 keys, and a language server holding 10,000 parsed probes kept a copy of
    each per probe. Interning costs little per probe (docs/performance.md);
    the last of duplicate keys wins, as with plain ``json.loads``."""
    return {intern(key): value for key, value in pairs}


MAX_DEPTH = 64
"""The deepest nesting of arrays and objects a probe.json may have (a probe
needs ~6 levels: probe, defects, a defect, ``caught_when``, a field, a few
``not``). Deeper is SE002 and the probe is not read further: the schema
validator, the source map and the rules all recurse into the data, and 162
levels of ``not`` crashed the validator."""

MAX_SCHEMA_PROBLEMS = 100
"""SE002 reports at most this many schema violations per probe.json, then
one saying how many more there are (a file of 45,000 unknown keys is one
mistake, not 45,000 lines to read)."""

SOURCE_MAP_MAX_WORK = 40_000
"""The most work (JSON values times nesting depth, both over-estimated from
the text's commas and brackets) for which positions are computed with json-source-map: it is pure Python,
slow per value, and each level of nesting copies every entry below it once
more (large or deeply nested files took far too long: docs/performance.md).
Larger files get their findings at the first line; real probes are ~1 KB
(~50 values)."""

_STRUCTURE = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
"""A JSON string (skipped whole) or a bracket."""


_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_STEPS = {ord("["): "\x01", ord("{"): "\x01", ord("]"): "\xff", ord("}"): "\xff"}
_STEPS.update({code: None for code in range(256) if code not in _STEPS})


def nests_deeper_than(text: str, limit: int) -> bool:
    """Whether the JSON ``text`` nests arrays and objects more than ``limit``
    levels deep. Linear, without recursion or a Python loop per character:
    strings dropped by one regex, each bracket made a signed byte (+1 opens,
    -1 closes) by one ``translate``, and the deepest level is the largest
    running sum (``itertools.accumulate``, in C). A file with at most
    ``limit`` brackets is not even looked at."""
    if text.count("[") + text.count("{") <= limit:
        return False
    from array import array
    from itertools import accumulate

    steps = _STRINGS.sub("", text).encode("utf-8", "surrogatepass").decode("latin-1").translate(_STEPS)
    return max(accumulate(array("b", steps.encode("latin-1"))), default=0) > limit


@text_cache(256, 2_000_000)
def _source_map_of(text: str) -> dict:
    """json-source-map's entries for the valid JSON ``text``, or ``{}`` when
    its estimated work (values times depth, from the text's commas and
    brackets) passes :data:`SOURCE_MAP_MAX_WORK`."""
    brackets = text.count("[") + text.count("{")
    values = text.count(",") + brackets + 1  # at least as many as the file holds
    if values * min(MAX_DEPTH, brackets + 1) > SOURCE_MAP_MAX_WORK:
        return {}
    from json_source_map import calculate

    try:
        return calculate(text)
    except Exception:  # noqa: BLE001 - positions are a nicety; fall back to the file start
        return {}


def _first_too_deep(text: str, limit: int) -> int | None:
    """The offset of the first bracket that opens level ``limit`` + 1, if any
    (one pass of a C regex over the text, strings skipped)."""
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
    """The first run of digits longer than Python turns into an ``int``
    (:func:`sys.get_int_max_str_digits`, 4,300 by default), outside strings."""
    import sys

    limit = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 0
    if not limit:
        return None
    pattern = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|-?\d{%d,}' % (limit + 1))
    for match in pattern.finditer(text):
        if text[match.start()] != '"':
            return match
    return None


class ProbeJson:
    """A parsed probe.json (``data`` is ``None`` when it does not parse, or
    nests deeper than :data:`MAX_DEPTH`: then :attr:`too_deep` says where). Read-only."""

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
            data = json.loads(text, object_pairs_hook=_interned_keys)
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
            import sys

            digits = len(found.group().lstrip("-"))
            return cls(document, None, JsonSyntaxError(
                f"a number of {digits:,} digits (at most {sys.get_int_max_str_digits():,} can be read)",
                document.position(found.start())))
        if nests_deeper_than(text, MAX_DEPTH):
            offset = _first_too_deep(text, MAX_DEPTH)
            problem = SchemaProblem(f"probe.json nests more than {MAX_DEPTH} levels of arrays and objects; "
                                    "flatten it", "", "deep")
            probe = cls(document, None, None, problem)
            probe._deep_offset = offset if offset is not None else 0
            return probe
        return cls(document, data, None)

    @property
    def _source_map(self) -> dict:
        """json-source-map's entries for this file (``{}`` when the file is too
        large for it: :data:`SOURCE_MAP_MAX_WORK`). Not kept on the object: a
        language server holds every probe of its workspace, and their maps
        were a large part of its memory (docs/performance.md);
        :func:`_source_map_of` keeps the last
        few hundred by content (a chunk of the parallel CLI is ~250 probes,
        whose rules ask one after the other)."""
        if self.data is None:
            return {}
        return _source_map_of(self.document.text)

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

    def edit_span(self, json_pointer: str, key: bool = False) -> Span | None:
        """The span of the value (or, with ``key``, the key) at
        ``json_pointer`` to make a fix's edit at: ``None`` when its position
        is not known exactly, where :meth:`value_span` and :meth:`key_span`
        fall back to a parent's span or the first line (a key written with
        escapes, which the source map keeps as written; a file too large for
        the source map). A finding may stand at a parent; an edit there
        would replace the parent."""
        entry = self._nearest(json_pointer, exact=True)
        if entry is None:
            return None
        if key and entry.key_start is not None:
            return self._location_span(entry.key_start, entry.key_end)
        if key:
            return None
        return self._location_span(entry.value_start, entry.value_end)

    def has(self, json_pointer: str) -> bool:
        return self._nearest(json_pointer, exact=True) is not None

    def _nearest(self, json_pointer: str, exact: bool = False):
        """The source-map entry of ``json_pointer`` or of its nearest existing parent.

        json-source-map keys its entries by unescaped paths (``/a/b`` for the key
        ``"a/b"``), so the RFC 6901 pointer is split into its parts, unescaped,
        and re-joined in that convention; walking up drops whole parts.
        """
        source_map = self._source_map
        parts = [part.replace("~1", "/").replace("~0", "~") for part in json_pointer.split("/")[1:]]
        while True:
            entry = source_map.get("".join("/" + part for part in parts))
            if entry is not None or not parts or exact:
                return entry
            parts.pop()

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
        if problem.anchor == "deep":
            return self.document.span(self._deep_offset, self._deep_offset + 1)
        if problem.anchor == "key":
            return self.key_span(problem.pointer)
        if problem.anchor == "object":
            return self.object_span(problem.pointer)
        return self.value_span(problem.pointer)

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


class UnrunnablePattern(ValueError):
    """A ``matches`` pattern RE2 cannot run (:func:`linear_pattern`): the
    message says why and what to write instead."""


def linear_pattern(pattern: str):
    """``pattern`` compiled by RE2 (google-re2), which grading searches
    answers with, in time linear in their length. RE2 has no lookaround and
    no backreferences, which on a backtracking engine can take exponential
    time (``^(?!PASS)(\\w+)*$``): :class:`UnrunnablePattern` then."""
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


def unrunnable_pattern(pattern: str) -> str | None:
    """Why a ``matches`` pattern cannot be graded (:func:`linear_pattern`),
    or ``None``; ``None`` too for a pattern that is no regular expression at
    all (the schema's ``regex`` format reports it)."""
    try:
        re.compile(pattern)
    except (re.error, RecursionError, OverflowError):
        return None
    try:
        linear_pattern(pattern)
    except UnrunnablePattern as error:
        return str(error)
    return None


def _unrunnable_patterns(data: Any) -> Iterator[SchemaProblem]:
    """A problem for each ``matches`` pattern of the defects' ``caught_when``
    that grading cannot run (:func:`unrunnable_pattern`); RE2 is imported only
    for a probe that has one."""
    defects = data.get("defects") if isinstance(data, dict) else None
    for index, defect in enumerate(defects if isinstance(defects, list) else ()):
        caught_when = defect.get("caught_when") if isinstance(defect, dict) else None
        for field, expectation in (caught_when.items() if isinstance(caught_when, dict) else ()):
            path: tuple = ("defects", index, "caught_when", field)
            while isinstance(expectation, dict) and len(expectation) == 1 and "not" in expectation:
                expectation, path = expectation["not"], (*path, "not")
            if isinstance(expectation, dict) and isinstance(expectation.get("matches"), str):
                reason = unrunnable_pattern(expectation["matches"])
                if reason is not None:
                    yield SchemaProblem(reason, pointer(*path, "matches"))


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
        import sys

        print(f"skill-eval schema: takes no arguments, got {' '.join(argv)!r} (it prints the probe.json schema; "
              "see skill-eval schema --help)", file=sys.stderr)
        return 2
    import sys

    sys.stdout.write(read_data(SCHEMA_NAME))
    return 0


if __name__ == "__main__":
    import sys

    raise SystemExit(schema_main(sys.argv[1:]))
