"""SE106 value-not-allowed."""

from __future__ import annotations

import json
from typing import Any, Iterator

from ...diagnostics import Fix, Related, Severity, TextEdit
from ...textfile import Span
from ..base import Rule, Scope
from ._common import closest, quoted


def literals(expectation: Any, path: tuple) -> Iterator[tuple[str, str, tuple]]:
    """``(operator, literal, json path)`` for every literal an expectation
    compares a field with: a plain string, ``equals``, each ``one_of`` item and
    ``contains``, also inside ``not``. ``matches`` is a regex and is skipped;
    anything of the wrong type is SE002's to report and is skipped here."""
    if isinstance(expectation, str):
        yield "equals", expectation, path
        return
    if not isinstance(expectation, dict):
        return
    for operator, operand in expectation.items():
        if operator in ("equals", "contains") and isinstance(operand, str):
            yield operator, operand, (*path, operator)
        elif operator == "one_of" and isinstance(operand, list):
            for position, item in enumerate(operand):
                if isinstance(item, str):
                    yield operator, item, (*path, operator, position)
        elif operator == "not":
            yield from literals(operand, (*path, operator))


class ValueNotAllowed(Rule):
    """## What it does
    Reports a literal in a defect's `caught_when` that is not among the
    `Values:` its field lists in output-spec.md: a plain string, `equals`,
    every `one_of` item and `contains`, also inside `not`. A `contains`
    literal passes when it is one of the values (an element of a list field)
    or part of one (a substring of a single-valued field). `matches` is a
    regular expression and is not checked. Fields without a `Values:` line
    take any value. Comparison trims whitespace and is case-sensitive.

    ## Why is this bad?
    An answer can only carry the values the spec allows, so a discriminator
    that waits for another one never holds (or, under `not`, always holds).
    The seed's worked shape grades "does the agent return NOT_PROVEN and name
    criterion three, or does it return PASS?" — grading `NOT PROVEN` or
    `not_proven` instead silently scores every run as a miss.

    ## Example
    output-spec.md lists ``Values: `PASS`, `NOT_PROVEN` `` for `verdict`, and probe.json says
    ```json
    {"caught_when": {"verdict": "NOT PROVEN"}}
    ```

    ## Fix
    Use one of the listed values (the quick fix offers the closest), or add
    the value to the field's `Values:` line.
    """

    code = "SE106"
    name = "value-not-allowed"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        spec = context.output_spec
        if spec is None:
            return
        spec_path = context.output_spec_document.path
        for index, defect in context.defects:
            caught_when = defect.get("caught_when")
            if not isinstance(caught_when, dict):
                continue
            for name, expectation in caught_when.items():
                field = spec.lookup(name)
                if field is None or not field.values:
                    continue
                for operator, literal, path in literals(expectation, ("defects", index, "caught_when", name)):
                    wanted = literal.strip()
                    if wanted in field.values:
                        continue
                    if operator == "contains" and wanted and any(wanted in value for value in field.values):
                        continue
                    span = context.value_span(*path)
                    edit = context.edit_span(*path)
                    suggestions = closest(wanted, list(field.values))
                    fixes = [
                        Fix(f"Change {literal!r} to {s!r}", (TextEdit(edit, json.dumps(s, ensure_ascii=False)),))
                        for s in suggestions
                    ] if edit is not None else []
                    related = []
                    if field.values_line is not None:
                        line = spec.document.lines[field.values_line - 1]
                        start = len(line) - len(line.lstrip()) + 1
                        related.append(Related(Span.at(spec_path, field.values_line, start, field.values_line, len(line) + 1),
                                               f"the values of {field.name!r}"))
                    hint = f"; did you mean {quoted(suggestions)}?" if suggestions else ""
                    yield self.diagnostic(
                        span,
                        f"{literal!r} is not a value of field {field.name!r} (Values: {', '.join(field.values)}){hint}",
                        related=related,
                        fixes=fixes,
                    )
