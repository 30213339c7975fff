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

Bounded work: grading is linear in the answer's length and never raises
(:func:`grade_answer`). Lines are split with string methods, never a
backtracking regex; the JSON object is looked for with ``raw_decode`` at
``{`` positions that can open an object, each attempt charged the characters
it scanned against an allowance of :data:`JSON_SCAN_FACTOR` times the
answer's length, each attempt decoding a window of the text that grows while
the object runs past it (a qualifying object is found long before that in any
real answer); an object nested deeper than the decoder can go, or anything else
the decoder raises, is not JSON. ``matches`` runs on RE2 (linear time;
google-re2); a pattern RE2 cannot run (lookaround, backreferences) is a
:class:`BadExpectation`, refused before a run spends a start: on Python's
``re`` a pattern such as ``^(?!PASS)(\\w+)*$`` took seconds for 24
characters of answer and doubled with each one more, and the runner could
not be stopped meanwhile.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from skill_eval.linter.outputspec import OutputSpec
from skill_eval.linter.probejson import UnrunnablePattern, linear_pattern

MAX_ANSWER_CHARS = 1_000_000
"""Answers are graded on their first million characters."""
JSON_SCAN_FACTOR = 8
"""The JSON search scans at most this many times the answer's length (plus
:data:`JSON_SCAN_MINIMUM`) over all its attempts."""
JSON_SCAN_MINIMUM = 1 << 16
JSON_WINDOW = 512
"""Characters an attempt decodes first; four times more while what it reads
was cut short by the window."""


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
    error: str | None = None
    """Why the defect could not be graded (its judge gave no verdict): then
    ``caught`` is ``False`` and means nothing (a grading error, not a miss)."""
    judge_verdict: bool | None = None
    """The judge's ``caught``, when a judge gave a verdict."""
    judge_reason: str | None = None
    """The judge's ``reason`` with its verdict (empty when it gave none)."""


JudgeCall = Callable[[Mapping[str, Any], str, Mapping[str, "Value"]], "tuple[bool, str]"]
"""``(defect, answer text, fields read) -> (caught, reason)``; raises
:class:`skill_eval.evals.judges.JudgeError` when the judge gives no verdict."""


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


_OBJECT_START = re.compile(r'\{[ \t\r\n]*["}]')
"""A ``{`` that can open a JSON object (a key or ``}`` follows); linear: the
whitespace run after one ``{`` ends at the next non-space character."""


def _nested_dicts(obj: dict) -> Iterator[dict]:
    """``obj`` and the objects inside it, in document order (no recursion)."""
    stack: list[Any] = [obj]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            yield item
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list):
            stack.extend(reversed(item))


def _qualifying(obj: dict, spec: OutputSpec | None, known: tuple[str, ...]) -> dict[str, Value] | None:
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
    return fields if matched else None


def _first_json_object(text: str, spec: OutputSpec | None, known: Iterable[str]) -> dict[str, Value] | None:
    """The fields of the first JSON object (in document order, nested ones
    included) whose keys include a field; bounded as the module says."""
    decoder = json.JSONDecoder()
    known = tuple(known)
    allowance = JSON_SCAN_FACTOR * len(text) + JSON_SCAN_MINIMUM
    position = 0
    while allowance > 0:
        match = _OBJECT_START.search(text, position)
        if match is None:
            return None
        start = match.start()
        window = JSON_WINDOW
        while True:
            # a window of the text, not the text: the decoder's error message counts
            # lines from the start of what it was given, which made each attempt O(n)
            stop = min(len(text), start + window)
            chunk = text[start:stop]
            allowance -= len(chunk)
            try:
                obj, end = decoder.raw_decode(chunk)
            except json.JSONDecodeError as error:
                cut_short = stop < len(text) and (error.pos >= len(chunk) - 1 or error.msg.startswith("Unterminated"))
                if cut_short and allowance > 0:
                    window *= 4
                    continue
                obj = end = None
            except (ValueError, RecursionError, MemoryError):
                return None  # nested beyond what the decoder can go: not an answer
            break
        if end is None:
            position = start + 1
            continue
        end += start
        if isinstance(obj, dict):
            for inner in _nested_dicts(obj):
                fields = _qualifying(inner, spec, known)
                if fields is not None:
                    return fields
        position = end
    return None


def _field_line(line: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``field: value`` line: an optional ``-``/``*``/``+``
    bullet, the key (optionally wrapped in ``**``, ``__`` or backticks), a
    colon, the value; ``None`` for any other line. String methods only."""
    if ":" not in line:
        return None
    body = line.strip()
    if len(body) > 1 and body[0] in "-*+" and body[1] in " \t":
        body = body[1:].lstrip()
    colon = body.find(":")
    if colon <= 0:
        return None
    key, value = body[:colon].strip(), body[colon + 1:].strip()
    for mark in ("**", "__", "`"):
        if key.startswith(mark):
            key = key[len(mark):]
            break
    for mark in ("**", "__", "`"):
        if key.endswith(mark):
            key = key[:-len(mark)]
            break
    key = key.strip()
    if not key or key[0].isspace() or key[0] in ":*`_" or any(c in key for c in "*`"):
        return None
    return key, value


def _item_line(line: str) -> str | None:
    """The item of a ``- item`` line (also ``*``/``+``), else ``None``."""
    body = line.lstrip()
    if len(body) > 1 and body[0] in "-*+" and body[1] in " \t":
        return body[1:].strip()
    return None


def _line_fields(text: str, spec: OutputSpec | None, known: Iterable[str]) -> dict[str, Value]:
    known = tuple(known)
    fields: dict[str, Value] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        parsed = _field_line(lines[index])
        index += 1
        if parsed is None:
            continue
        name = _canonical(spec, parsed[0], known)
        if name is None or name in fields:
            continue
        if parsed[1]:
            fields[name] = Value.from_text(parsed[1])
            continue
        items = []
        while index < len(lines):
            item = _item_line(lines[index])
            if item is None:
                break
            following = _field_line(lines[index])
            if following is not None and _canonical(spec, following[0], known):
                break
            items.append(item)
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
        search = _compiled(operand)
        candidates = value.items if value.is_list else (value.text,)
        ok = any(search(c) for c in candidates)
        return ok, f"{shown} {'matches' if ok else 'does not match'} /{operand}/"
    if operator == "not":
        inner, reason = check_expectation(operand, value)
        return (not inner), f"not ({reason})"
    raise BadExpectation(f"unknown expectation {operator!r}; use equals, one_of, contains, matches or not")


_PATTERNS: dict[str, Any] = {}


def _compiled(operand: str):
    """A search function for a ``matches`` pattern: RE2's, linear in the
    value. :class:`BadExpectation` when the pattern is not a regular
    expression (Python's ``re``, the language authors write, cannot compile
    it) or uses what RE2 cannot run in linear time (lookaround,
    backreferences), with what to do instead."""
    search = _PATTERNS.get(operand)
    if search is not None:
        return search
    try:
        re.compile(operand)
    except (re.error, RecursionError, OverflowError) as error:
        raise BadExpectation(f"`matches` has an invalid regular expression {operand!r}: {error}") from None
    try:
        search = linear_pattern(operand).search
    except UnrunnablePattern as error:
        raise BadExpectation(str(error)) from None
    if len(_PATTERNS) < 1024:
        _PATTERNS[operand] = search
    return search


def _need_str(operator: str, operand: Any) -> None:
    if not isinstance(operand, str):
        raise BadExpectation(f"`{operator}` takes a string, not {json.dumps(operand)}")


def grade_defect(defect: Mapping[str, Any], answer: Answer, spec: OutputSpec | None,
                 judge: JudgeCall | None = None, text: str = "") -> DefectGrade:
    """A defect is caught when every field of its ``caught_when`` holds and,
    when it names a ``judge``, the judge says caught (asked only when the
    fields hold). ``judge`` calls the defect's judge on ``text`` (the whole
    answer); without one, a judged defect is a grading error."""
    defect_id = str(defect.get("id", "?"))
    caught_when = defect.get("caught_when")
    judged = defect.get("judge") is not None
    if (not isinstance(caught_when, dict) or not caught_when) and not judged:
        return DefectGrade(defect_id, False, ["no caught_when: nothing grades this defect"])
    caught = True
    reasons = []
    for field_name, expectation in (caught_when.items() if isinstance(caught_when, dict) else ()):
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
    if not judged:
        return DefectGrade(defect_id, caught, reasons)
    if not caught:
        reasons.append("judge: not asked (a field already fails)")
        return DefectGrade(defect_id, False, reasons)
    if judge is None:
        reasons.append("judge: not run here")
        return DefectGrade(defect_id, False, reasons, error="the defect's judge was not run")
    from .judges import JudgeError

    try:
        verdict, why = judge(defect, text, answer.fields)
    except JudgeError as error:
        reasons.append(f"judge: no verdict ({error})")
        return DefectGrade(defect_id, False, reasons, error=str(error))
    reasons.append(f"judge: {'caught' if verdict else 'missed'}" + (f" ({why})" if why else ""))
    return DefectGrade(defect_id, verdict, reasons, judge_verdict=verdict, judge_reason=why or "")


def graded_field_names(defects: Iterable[Mapping[str, Any]]) -> list[str]:
    names: list[str] = []
    for defect in defects:
        caught_when = defect.get("caught_when")
        if isinstance(caught_when, dict):
            names.extend(n for n in caught_when if n not in names)
    return names


def grade_answer(text: str, defects: list[Mapping[str, Any]], spec: OutputSpec | None,
                 judge: JudgeCall | None = None) -> tuple[Answer, list[DefectGrade]]:
    """Read ``text`` and grade every defect. Raises only :class:`BadExpectation`
    (the probe's fault, refused before any run); an answer that cannot be read
    at all grades as catching nothing, with the reason. A judge that gives no
    verdict makes its defect's grade an ``error`` (see :func:`grade_defect`)."""
    try:
        answer = read_answer(text, spec, graded_field_names(defects))
    except (RecursionError, MemoryError, ValueError) as error:
        reason = f"the answer could not be read ({type(error).__name__})"
        return Answer({}, "none"), [DefectGrade(str(d.get("id", "?")), False, [reason]) for d in defects]
    return answer, [grade_defect(defect, answer, spec, judge, text) for defect in defects]
