"""SE102 ambiguous-step."""

from __future__ import annotations

import json

from ...diagnostics import Fix, Related, Severity, TextEdit
from ..base import Rule, Scope
from ._common import quoted


class AmbiguousStep(Rule):
    """## What it does
    Reports a `step_heading` that matches several headings of the probe's
    SKILL.md, lists the `Parent > Child` forms that name each of them, and
    offers each form as a quick fix.

    ## Why is this bad?
    A probe measures one step of the discipline. When its `step_heading`
    names two sections (say two `Step 1` headings under different
    parents), nobody can tell which window the probe exercises, so the seed's
    calibration check — "can the defect be derived from the discipline
    alone?" — has no discipline to be asked against, and the rules that read
    the window (SE103, SE104) stay silent.

    ## Example
    SKILL.md has two sections with a heading `Step 1`:
    ```markdown
    ### Closeout
    #### Step 1
    ### Review
    #### Step 1
    ```
    and probe.json says:
    ```json
    {"step_heading": "Step 1"}
    ```

    ## Fix
    Name the heading with one of its ancestors, `"Closeout > Step 1"` — the
    quick fixes offer every form that is unique — or rename one of the
    headings.
    """

    code = "SE102"
    name = "ambiguous-step"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        matches = context.heading_matches
        if not matches or len(matches) < 2:
            return
        skill = context.skill
        step_heading = context.step_heading
        paths = [skill.path_of(heading) for heading in matches]
        unique = list(dict.fromkeys(path for path in paths if path is not None))
        span = context.value_span("step_heading")
        edit = context.edit_span("step_heading")
        fixes = [
            Fix(f"Change step_heading to {path!r}", (TextEdit(edit, json.dumps(path, ensure_ascii=False)),))
            for path in unique
        ] if edit is not None else []
        related = [
            Related(context.heading_span(heading), f"matching heading (line {heading.line}): "
                    + (path if path is not None else "no form names it alone"))
            for heading, path in zip(matches, paths)
        ]
        skill_name = context.skill_document.path.name
        if len(unique) == len(matches):
            hint = f"; use one of {quoted(unique)}"
        elif unique:
            hint = f"; {quoted(unique)} name one each, the others cannot be told apart: rename a heading"
        else:
            hint = "; no `Parent > Child` form tells them apart: rename a heading"
        lines = ", ".join(str(h.line) for h in matches)
        yield self.diagnostic(
            span,
            f"step_heading {step_heading!r} matches {len(matches)} headings of {skill_name} (lines {lines}){hint}",
            related=related,
            fixes=fixes,
        )
