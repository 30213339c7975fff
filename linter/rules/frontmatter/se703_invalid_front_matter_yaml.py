"""SE703 invalid-front-matter-yaml."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import front_matter_of


class InvalidFrontMatterYaml(Rule):
    """## What it does
    Reports front matter that is not valid YAML, at the position of the YAML
    error (line and column in SKILL.md).

    ## Why is this bad?
    An agent that cannot parse the front matter cannot read the skill's
    `name` and `description`, so it never loads the skill: the treatment arm
    of every probe runs without the discipline and the seed's window —
    "control misses, treatment catches" — cannot open.

    ## Example
    ```yaml
    name: verify-closeout
    description: Checks evidence: every criterion needs its own
    ```
    (a plain value may not contain `: `).

    ## Fix
    Quote the value, or use a block scalar:
    ```yaml
    description: >
      Checks evidence: every criterion needs its own.
    ```
    """

    code = "SE703"
    name = "invalid-front-matter-yaml"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if parsed is None or parsed.error is None:
            return
        error = parsed.error
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None)
        where = getattr(error, "context", None)
        if problem:
            detail = f"{where}, {problem}" if where else problem
        else:
            detail = " ".join(str(error).split())
        span = parsed.mark_span(context.path, mark) if mark is not None else parsed.opening_span(context.path)
        yield self.diagnostic(span, f"the front matter is not valid YAML: {detail}")
