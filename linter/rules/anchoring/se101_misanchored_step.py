"""SE101 misanchored-step."""

from __future__ import annotations

from ...diagnostics import Fix, Related, Severity, TextEdit
from ..base import Rule, Scope
import json


class MisanchoredStep(Rule):
    """## What it does
    Reports a `step_heading` that matches no heading of the probe's SKILL.md,
    and offers the closest headings as quick fixes.

    ## Why is this bad?
    The probe claims to exercise a step of the discipline that no longer
    exists (a heading renamed or removed after the probe was written). The
    seed's calibration check — "can the defect be derived from the discipline
    alone?" — cannot even be asked: nobody can say which part of the
    discipline the probe measures, and rules that read the step's window
    (SE103, SE104) are silent.

    ## Example
    SKILL.md has `## Step 3: Check the evidence lines`, and probe.json says:
    ```json
    {"step_heading": "Step 3: Check evidence"}
    ```

    ## Fix
    Use the heading's exact text (case-sensitive; markup and leading `#` marks
    are ignored), or a `Parent > Child` path. The quick fix offers the closest
    headings, each written so that it names exactly that heading (a heading
    whose code span holds `<details>` is offered with the code span), best
    first: the heading holding most of the step's words (its number counts
    as one), then the one with the step's number, then the closest spelling;
    never by file order. The fix is unsafe (it changes what the probe
    measures): `--fix --unsafe-fixes` applies the first one. When a
    line that looks like the heading sits inside a fenced code block or an
    HTML block, the message says so: CommonMark makes no heading there, so
    make it a real heading or anchor to another one.
    """

    code = "SE101"
    name = "misanchored-step"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        matches = context.heading_matches
        if matches is None or matches:
            return
        skill = context.skill
        step_heading = context.step_heading
        suggestions = skill.suggest_headings(step_heading)
        span = context.value_span("step_heading")
        edit = context.edit_span("step_heading")
        fixes = [
            Fix(f"Change step_heading to {suggestion!r}", (TextEdit(edit, json.dumps(suggestion, ensure_ascii=False)),))
            for suggestion in suggestions
        ] if edit is not None else []
        hint = f"; did you mean {', '.join(repr(s) for s in suggestions)}?" if suggestions else ""
        related = [
            Related(context.heading_span(h), f"close heading: {path}")
            for h, path in zip(skill.headings, skill.heading_paths)
            if path is not None and path in suggestions
        ]
        skill_path = context.skill_document.path
        in_code = skill.code_lines_like(step_heading)
        if in_code:
            line, kind = in_code[0]
            block = "a code block" if kind == "code" else "an HTML block"
            hint += f"; line {line} reads like that heading but sits inside {block}, where it is not a heading"
            related.extend(
                Related(context.skill_document.line_span(number), f"inside {'a code block' if k == 'code' else 'an HTML block'}: not a heading")
                for number, k in in_code
            )
        yield self.diagnostic(
            span,
            f"step_heading {step_heading!r} matches no heading of {skill_path.name}{hint}",
            related=related,
            fixes=fixes,
        )
