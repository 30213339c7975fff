"""SE711 duplicate-front-matter-key."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._parse import duplicate_keys, front_matter_of


class DuplicateFrontMatterKey(Rule):
    """## What it does
    Reports a key that one mapping of the front matter repeats: two `name:`
    lines, or two `author:` keys under `metadata:`. The diagnostic is on the
    repeat, with the first occurrence as a related location.

    ## Why is this bad?
    YAML requires the keys of a mapping to be unique. Loaders disagree about
    a repeat: PyYAML and js-yaml's default keep the last value without a
    word, strict loaders (the reference validator `skills-ref` among them)
    reject the whole front matter. So the same SKILL.md loads under one
    `name` or `description` in one agent and not at all in another, and the
    treatment arm of a probe may run without the discipline: the seed's
    window — "control misses, treatment catches" — then measures which agent
    ran, not the skill.

    ## Example
    ```yaml
    name: verify-closeout
    description: Use when closing out a merged change.
    name: closeout
    ```

    ## Fix
    Keep one of the two keys: delete the line whose value is stale.
    """

    code = "SE711"
    name = "duplicate-front-matter-key"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if parsed is None or parsed.root is None or parsed.error is not None:
            return
        for duplicate in duplicate_keys(parsed.root):
            first = parsed.node_span(context.path, duplicate.first)
            where = "" if not duplicate.within else f" of `{'.'.join(duplicate.within)}`"
            yield self.diagnostic(
                parsed.node_span(context.path, duplicate.again),
                f"front-matter key `{duplicate.key}`{where} is repeated (first on line {first.start.line}): "
                "YAML requires unique keys; PyYAML keeps the last value silently and the reference validator rejects the file",
                related=[Related(first, f"`{duplicate.key}` first set here")],
            )
