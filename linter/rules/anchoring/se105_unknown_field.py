"""SE105 unknown-field."""

from __future__ import annotations

import json

from ...diagnostics import Fix, Related, Severity, TextEdit
from ..base import Rule, Scope
from ._common import closest, heading_span, quoted


class UnknownField(Rule):
    """## What it does
    Reports a field named in a defect's `caught_when` that the probe's output
    spec does not define, neither as a field (a `##` heading of
    output-spec.md) nor as one of a field's `Aliases:`. The closest field
    names are suggested and offered as quick fixes.

    ## Why is this bad?
    An agent's answer is read against the output spec; a field the spec lacks
    is never in an answer, so the discriminator can never hold and the defect
    can never be caught. The seed asks whether "the defect [can] be derived
    from the discipline alone" — here not even the grading can be derived
    from the spec, and every run scores the probe as missed.

    ## Example
    output-spec.md has the field heading ``## `verdict` ``, and probe.json grades
    ```json
    {"caught_when": {"verdit": "NOT_PROVEN"}}
    ```

    ## Fix
    Use the field's name or one of its aliases (the quick fix offers the
    closest), or add the field to output-spec.md.
    """

    code = "SE105"
    name = "unknown-field"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        spec = context.output_spec
        if spec is None:
            return
        spec_path = context.output_spec_document.path
        choices = [n for f in spec.fields.values() for n in f.names]
        for index, name in context.graded_fields:
            if spec.lookup(name) is not None:
                continue
            span = context.key_span("defects", index, "caught_when", name)
            edit = context.edit_span("defects", index, "caught_when", name, key=True)
            suggestions = closest(name, choices)
            fixes = [
                Fix(f"Rename the graded field to {s!r}", (TextEdit(edit, json.dumps(s, ensure_ascii=False)),))
                for s in suggestions
            ] if edit is not None else []
            related = []
            for suggestion in suggestions:
                field = spec.lookup(suggestion)
                if field is not None:
                    related.append(Related(heading_span(spec_path, field.heading), f"close field: {field.name!r}"))
            if suggestions:
                hint = f"; did you mean {quoted(suggestions)}?"
            elif choices:
                hint = f"; its fields are {quoted(list(spec.fields))}"
            else:
                hint = "; it defines no fields (a field is a `##` heading)"
            yield self.diagnostic(
                span,
                f"caught_when names field {name!r}, which {spec_path.name} does not define{hint}",
                related=related,
                fixes=fixes,
            )
