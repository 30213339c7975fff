"""SE705 missing-required-key."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import front_matter_of, usable

REQUIRED = ("name", "description")


class MissingRequiredKey(Rule):
    """## What it does
    Reports front matter without a `name` or without a `description` key,
    the two keys the Agent Skills specification requires. An empty front
    matter lacks both.

    ## Why is this bad?
    An agent lists skills by `name` and decides to load one from its
    `description` alone. Without them the skill is never picked, so the
    treatment arm of every probe runs without the discipline and the seed's
    window — "control misses, treatment catches" — cannot open.

    ## Example
    ```yaml
    name: verify-closeout
    ```

    ## Fix
    Add the missing key:
    ```yaml
    description: Use when closing out a merged change. Checks that every
      acceptance criterion has its own direct evidence.
    ```
    """

    code = "SE705"
    name = "missing-required-key"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if not usable(parsed):
            return
        for key in REQUIRED:
            if parsed.get(key) is None:
                yield self.diagnostic(
                    parsed.opening_span(context.path),
                    f"the front matter has no `{key}`: the Agent Skills specification requires `name` and `description`",
                )
