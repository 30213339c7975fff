"""SE104 unruled-field."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import heading_span, quoted, window_lines


class UnruledField(Rule):
    """## What it does
    Reports a graded field — one named in a defect's `caught_when` — that the
    output spec defines but that has no rule inside the probe's window:
    neither the field's name, one of its `Aliases:` (in any case: a sentence
    may begin "Verdict", a section be titled "Red Flags") nor one of its
    `Values:` (case-sensitive: `PASS` is not "pass") occurs as a whole word
    in the window's prose. Paragraphs, list items,
    headings, tables and block quotes are prose (code spans inside them
    count); fenced or indented code blocks and HTML comments are not (an
    example is not a rule).

    ## Why is this bad?
    The seed's calibration check: "can the defect be derived from the
    discipline alone? If catching it needs domain trivia the skill never
    taught, it is below the window." A probe that grades a field the step
    never teaches measures something the discipline does not contain, so a
    miss says nothing about the skill.

    ## Example
    The window `### Step 2: Check the evidence lines` says only "Evidence that
    argues from prior behavior is not proof", while the defect is graded with
    ```json
    {"caught_when": {"verdict": "NOT_PROVEN"}}
    ```
    and nothing in the step mentions `verdict`, `PASS` or `NOT_PROVEN`.

    ## Fix
    State the rule in the step ("such a criterion makes the `verdict`
    `NOT_PROVEN`"), grade a field the step does teach, or point
    `step_heading` at the section that teaches this one.
    """

    code = "SE104"
    name = "unruled-field"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        window = context.window
        spec = context.output_spec
        if window is None or spec is None:
            return
        spec_path = context.output_spec_document.path
        skill_name = context.skill_document.path.name
        for index, name in context.graded_fields:
            field = spec.lookup(name)
            if field is None:
                continue  # SE105 reports a field the spec lacks
            words = list(dict.fromkeys((*field.names, *field.values)))
            if any(window.mentions(name, ignore_case=True) for name in field.names):
                continue
            if any(window.mentions(value) for value in field.values):
                continue
            alias = f" (an alias of {field.name!r})" if name != field.name else ""
            yield self.diagnostic(
                context.key_span("defects", index, "caught_when", name),
                f"graded field {name!r}{alias} has no rule inside the window of {context.step_heading!r} "
                f"({window_lines(window)} of {skill_name}): none of {quoted(words)} occurs in its prose",
                related=[
                    Related(context.heading_span(window.heading), f"the window ({window_lines(window)}) never mentions {field.name!r}"),
                    Related(heading_span(spec_path, field.heading), f"field {field.name!r} of {spec_path.name}"),
                ],
            )
