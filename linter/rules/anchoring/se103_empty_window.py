"""SE103 empty-window."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import window_lines


class EmptyWindow(Rule):
    """## What it does
    Reports a probe whose window — the SKILL.md section its `step_heading`
    names — holds no prose besides its heading: nothing but blank lines,
    code blocks or HTML comments.

    ## Why is this bad?
    The seed's check for a usable probe is "can the defect be derived from
    the discipline alone? If catching it needs domain trivia the skill never
    taught, it is below the window." A section with no prose teaches nothing,
    so every defect graded against it is below the window by construction:
    the probe cannot separate the treatment arm from the control arm.

    ## Example
    ````markdown
    ### Step 3: Check the evidence lines

    ```text
    criterion 3: behavior unchanged, existing coverage applies
    ```

    ### Step 4: Write the verdict
    ````
    with `"step_heading": "Step 3: Check the evidence lines"` (an example is
    not a rule).

    ## Fix
    Write the step's rule as prose under its heading, or point
    `step_heading` at the section that teaches it.
    """

    code = "SE103"
    name = "empty-window"
    severity = Severity.WARNING
    scope = Scope.PROBE
    tags = ("anchoring",)

    def check(self, context):
        window = context.window
        if window is None or window.has_prose_besides_heading():
            return
        heading = window.heading
        yield self.diagnostic(
            context.value_span("step_heading"),
            f"the window of step_heading {context.step_heading!r} ({window_lines(window)} of "
            f"{context.skill_document.path.name}) holds no prose besides its heading: it teaches no rule",
            related=[Related(context.heading_span(heading), "the section's heading; no prose follows it")],
        )
