"""SE108 duplicate-field."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ...textfile import Span
from ..base import Rule, Scope
from ._common import heading_span


class DuplicateField(Rule):
    """## What it does
    On output-spec.md: reports a field whose name another field already
    uses, and a name or alias that differs from another field's name or
    alias only in case. The later one is reported, with the first as a
    related location.

    ## Why is this bad?
    Field names are unique in an output spec (fixture-format.md). With two
    `## verdict` sections, graders, SE105 and SE106 read only the first, so
    the `Values:` of the second are silently ignored; and since an answer's
    keys are matched case-insensitively, `Verdict` and `verdict` (or an
    alias that is another field's name) make one key of an answer stand for
    two fields. The seed's worked shape grades "does the agent return
    NOT_PROVEN … or does it return PASS?": a probe graded against the wrong
    field's values scores every run wrongly.

    ## Example
    ```markdown
     ## `verdict`
    Values: `PASS`, `NOT_PROVEN`

     ## `verdict`
    Values: `PASS`, `FAIL`
    ```

    ## Fix
    Merge the two sections into one, or rename one field (and its aliases)
    so that no two names are equal ignoring case.
    """

    code = "SE108"
    name = "duplicate-field"
    severity = Severity.ERROR
    scope = Scope.OUTPUT_SPEC
    tags = ("anchoring",)

    def check(self, context):
        spec = context.spec
        if spec is None:
            return
        ordered = sorted((*spec.fields.values(), *spec.duplicates), key=lambda field: field.heading.line)
        seen: dict[str, tuple] = {}
        for field in ordered:
            for kind, name in (("name", field.name), *(("alias", alias) for alias in field.aliases)):
                key = name.casefold()
                first = seen.get(key)
                if first is None:
                    seen[key] = (field, kind, name)
                    continue
                first_field, first_kind, first_name = first
                if first_field is field:
                    continue  # an alias repeating its own field's name says nothing new
                first_span = heading_span(context.path, first_field.heading) if first_kind == "name" else _aliases_span(spec, context.path, first_field)
                span = heading_span(context.path, field.heading) if kind == "name" else _aliases_span(spec, context.path, field)
                if kind == "name" and first_kind == "name" and name == first_name:
                    message = (f"field {name!r} is defined twice (first on line {first_field.heading.line}): "
                               "graders, SE105 and SE106 read only the first")
                else:
                    what = "field" if kind == "name" else f"alias {name!r} of field {field.name!r}"
                    if kind == "name":
                        what = f"field {name!r}"
                    other = (f"field {first_name!r}" if first_kind == "name"
                             else f"alias {first_name!r} of field {first_field.name!r}")
                    how = "equals" if name == first_name else "differs only in case from"
                    message = (f"{what} {how} {other} (line {first_span.start.line}): answer keys are matched "
                               f"ignoring case, so an answer's `{name}` would stand for both")
                yield self.diagnostic(span, message, related=[Related(first_span, f"first used here by field {first_field.name!r}")])


def _aliases_span(spec, path, field) -> Span:
    line_number = field.aliases_line or field.heading.line
    line = spec.document.lines[line_number - 1]
    start = len(line) - len(line.lstrip()) + 1
    return Span.at(path, line_number, start, line_number, len(line.rstrip()) + 1)
