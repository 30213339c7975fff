"""SE708 invalid-description."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import key_of

MAX_DESCRIPTION = 1024


class InvalidDescription(Rule):
    """## What it does
    Reports a front-matter `description` that is not a string of 1-1024
    characters (counted after trimming surrounding whitespace, so a block
    scalar's final line break does not count).

    ## Why is this bad?
    An agent decides whether to load a skill from its `description` alone;
    the Agent Skills specification caps it at 1024 characters and requires it
    non-empty. An empty, truncated or rejected description means the skill is
    not picked, so the treatment arm runs without the discipline and the
    seed's window — "control misses, treatment catches" — cannot open.

    ## Example
    ```yaml
    description: ""
    ```

    ## Fix
    Say in one or two sentences what the skill does and when to use it, in at
    most 1024 characters; move detail into the body of SKILL.md.
    """

    code = "SE708"
    name = "invalid-description"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "description")
        if entry is None:
            return  # no usable front matter (SE701-SE704) or no `description` (SE705 if required)
        span = parsed.value_span(context.path, entry)
        value = entry.string
        if value is None:
            yield self.diagnostic(span, f"`description` is {entry.kind}; it must be a non-empty string")
            return
        length = len(value.strip())
        if length == 0:
            yield self.diagnostic(span, "`description` is empty; say what the skill does and when to use it")
        elif length > MAX_DESCRIPTION:
            yield self.diagnostic(span, f"`description` is {length} characters long, over the limit of {MAX_DESCRIPTION}")
