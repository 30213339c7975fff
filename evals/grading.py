"""Reading an agent's answer and grading it against each defect's ``caught_when``.

fixture-format.md, "How an agent's answer is read":

* The answer's fields come from the **first JSON object** in the text whose
  keys include a field of the output spec; or else from lines of the form
  ``field: value``. Field names match case-insensitively against the spec's
  names and aliases. No mixing: when a JSON object qualifies, lines are not read.
* A list is a JSON array, a comma-separated value, or — when the ``field:``
  line has no value — the ``- item`` lines that follow it.
* An answer missing a graded field does not catch the defect, whatever the
  expectation (``not`` included).

Expectations (fixture-format.md, probe.json): a string (equals), or one of
``{"equals": s}``, ``{"one_of": [...]}``, ``{"contains": s}``,
``{"matches": regex}``, ``{"not": expectation}``. Comparison trims whitespace
and is case-sensitive. ``contains`` holds when ``s`` equals an element of the
value's list (JSON array elements, ``- item`` lines, comma-separated parts) or,
for a value given as one string, when ``s`` occurs in it. ``matches`` is
``re.search`` on the value (for a list: on any element).

Two lenient readings, both documented here because agents write markdown: in
``field: value`` lines, a field name wrapped in ``**``/``__``/backticks and a
leading ``- ``/``* `` bullet are accepted, and a value wholly wrapped in one
pair of backticks or ``**`` is unwrapped. Nothing else is normalized.

Every grading returns its reasons, so ``skill-eval check`` can say *why* a
transcript was graded the way it was.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from skill_eval.linter.outputspec import OutputSpec

MAX_ANSWER_CHARS = 1_000_000
"""Answers are graded on their first million characters."""


@dataclass(frozen=True)
class Value:
    """One field of an answer: its text and, when given as a list, its items."""

    text: str
    items: tuple[str, ...]
    is_list: bool

    @classmethod
    def from_text(cls, text: str) -> "Value":
        text = _unwrap(text.strip())
        items = tuple(part.strip() for part in text.split(",") if part.strip()) if "," in text else ((text,) if text else ())
        return cls(text, items, False)

    @classmethod
    def from_items(cls, items: Iterable[str]) -> "Value":
        cleaned = tuple(_unwrap(item.strip()) for item in items if item.strip())
        return cls(", ".join(cleaned), cleaned, True)


@dataclass
class Answer:
    """The fields read from an answer (canonical field name -> value)."""

    fields: dict[str, Value] = field(default_factory=dict)
    source: str = "none"
    """``json`` (a JSON object), ``lines`` (``field: value`` lines) or ``none``."""


@dataclass
class DefectGrade:
    defect_id: str
    caught: bool
    reasons: list[str]


def _unwrap(text: str) -> str:
    for mark in ("**", "__", "`"):
        if len(text) > 2 * len(mark) and text.startswith(mark) and text.endswith(mark):
            inner = text[len(mark):-len(mark)]
            if mark not in inner:
                return inner.strip()
    return text


def _canonical(spec: OutputSpec | None, key: str, known: Iterable[str] = ()) -> str | None:
    """The spec field an answer key names; without a spec, any of ``known``."""
    if spec is not None:
        found = spec.lookup_answer_key(key)
        return found.name if found is not None else None
    wanted = key.strip().casefold()
    for name in known:
        if name.casefold() == wanted:
            return name
    return None


def _json_value(value: Any) -> Value | None:
    if value is None:
        return None
    if isinstance(value, str):
        return Value.from_text(value)
    if isinstance(value, list):
        return Value.from_items(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value if v is not None)
    return Value.from_text(json.dumps(value, ensure_ascii=False))


def _first_json_object(text: str, spec: OutputSpec | None, known: Iterable[str]) -> dict[str, Value] | None:
    decoder = json.JSONDecoder()
    known = tuple(known)
    position = text.find("{")
    while position != -1:
        try:
            obj, _end = decoder.raw_decode(text, position)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            fields: dict[str, Value] = {}
            matched = False
            for key, raw in obj.items():
                name = _canonical(spec, key, known) if isinstance(key, str) else None
                if name is None:
                    continue
                matched = True
                value = _json_value(raw)
                if value is not None and name not in fields:
                    fields[name] = value
            if matched:
                return fields
        position = text.find("{", position + 1)
    return None


_LINE = re.compile(r"^\s*(?:[-*+]\s+)?(\*\*|__|`)?(?P<key>[^\s:*`_][^:*`]*?)(\*\*|__|`)?\s*:\s*(?P<value>.*?)\s*$")
_ITEM = re.compile(r"^\s*[-*+]\s+(?P<item>.*?)\s*$")


def _line_fields(text: str, spec: OutputSpec | None, known: Iterable[str]) -> dict[str, Value]:
    known = tuple(known)
    fields: dict[str, Value] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        match = _LINE.match(lines[index])
        index += 1
        if not match:
            continue
        name = _canonical(spec, match.group("key"), known)
        if name is None or name in fields:
            continue
        value = match.group("value")
        if value:
            fields[name] = Value.from_text(value)
            continue
        items = []
        while index < len(lines):
            item = _ITEM.match(lines[index])
            if item is None or _LINE.match(lines[index]) and _canonical(spec, _LINE.match(lines[index]).group("key"), known):
                break
            items.append(item.group("item"))
            index += 1
        if items:
            fields[name] = Value.from_items(items)
    return fields


def read_answer(text: str, spec: OutputSpec | None, known: Iterable[str] = ()) -> Answer:
    """The fields of ``text``. ``known`` names the fields to look for when there
    is no output spec (the graded fields)."""
    text = text[:MAX_ANSWER_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    known = tuple(known)
    from_json = _first_json_object(text, spec, known)
    if from_json is not None:
        return Answer(from_json, "json")
    fields = _line_fields(text, spec, known)
    return Answer(fields, "lines" if fields else "none")


# -- expectations -----------------------------------------------------------------------


class BadExpectation(ValueError):
    """An expectation that is not one of the forms fixture-format.md lists."""


def check_expectation(expectation: Any, value: Value) -> tuple[bool, str]:
    """Whether ``value`` meets ``expectation``, and a short reason."""
    if isinstance(expectation, str):
        expectation = {"equals": expectation}
    if not isinstance(expectation, dict) or len(expectation) != 1:
        raise BadExpectation(f"an expectation is a string or an object with one key, not {json.dumps(expectation)}")
    (operator, operand), = expectation.items()
    shown = repr(value.text)
    if operator == "equals":
        _need_str(operator, operand)
        ok = value.text == operand.strip()
        return ok, f"{shown} {'equals' if ok else 'does not equal'} {operand.strip()!r}"
    if operator == "one_of":
        if not isinstance(operand, list) or not all(isinstance(o, str) for o in operand):
            raise BadExpectation("`one_of` takes a list of strings")
        options = [o.strip() for o in operand]
        ok = value.text in options
        return ok, f"{shown} {'is' if ok else 'is not'} one of {options!r}"
    if operator == "contains":
        _need_str(operator, operand)
        wanted = operand.strip()
        ok = wanted in value.items or (not value.is_list and wanted in value.text)
        return ok, f"{shown} {'contains' if ok else 'does not contain'} {wanted!r}"
    if operator == "matches":
        _need_str(operator, operand)
        try:
            pattern = re.compile(operand)
        except re.error as error:
            raise BadExpectation(f"`matches` has an invalid regular expression {operand!r}: {error}") from None
        candidates = value.items if value.is_list else (value.text,)
        ok = any(pattern.search(c) for c in candidates)
        return ok, f"{shown} {'matches' if ok else 'does not match'} /{operand}/"
    if operator == "not":
        inner, reason = check_expectation(operand, value)
        return (not inner), f"not ({reason})"
    raise BadExpectation(f"unknown expectation {operator!r}; use equals, one_of, contains, matches or not")


def _need_str(operator: str, operand: Any) -> None:
    if not isinstance(operand, str):
        raise BadExpectation(f"`{operator}` takes a string, not {json.dumps(operand)}")


def grade_defect(defect: Mapping[str, Any], answer: Answer, spec: OutputSpec | None) -> DefectGrade:
    """A defect is caught when every field of its ``caught_when`` holds."""
    defect_id = str(defect.get("id", "?"))
    caught_when = defect.get("caught_when")
    if not isinstance(caught_when, dict) or not caught_when:
        return DefectGrade(defect_id, False, ["no caught_when: nothing grades this defect"])
    caught = True
    reasons = []
    for field_name, expectation in caught_when.items():
        name = field_name
        if spec is not None:
            found = spec.lookup(field_name)
            if found is None:
                caught = False
                reasons.append(f"{field_name}: not a field of the output spec")
                continue
            name = found.name
        value = answer.fields.get(name)
        if value is None:
            caught = False
            reasons.append(f"{field_name}: missing from the answer")
            continue
        ok, reason = check_expectation(expectation, value)
        caught = caught and ok
        reasons.append(f"{field_name}: {reason}")
    return DefectGrade(defect_id, caught, reasons)


def graded_field_names(defects: Iterable[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for defect in defects:
        caught_when = defect.get("caught_when")
        if isinstance(caught_when, dict):
            names.extend(n for n in caught_when if n not in names)
    return names


def grade_answer(text: str, defects: list[Mapping[str, Any]], spec: OutputSpec | None) -> tuple[Answer, list[DefectGrade]]:
    answer = read_answer(text, spec, graded_field_names(defects))
    return answer, [grade_defect(defect, answer, spec) for defect in defects]
