"""SE709 invalid-compatibility."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import key_of

MAX_COMPATIBILITY = 500


class InvalidCompatibility(Rule):
    """## What it does
    Reports a front-matter `compatibility` that is not a string of 1-500
    characters (counted after trimming surrounding whitespace), the Agent
    Skills specification's limit for a `compatibility` that is provided: an
    empty value (`compatibility:`, `""` or only spaces) is reported like an
    over-long one. The key itself is optional.

    ## Why is this bad?
    `compatibility` tells an agent which products, packages or network access
    the skill needs. A value the specification rejects can stop the skill
    from loading, and then the treatment arm of every probe runs without the
    discipline: the seed's window — "control misses, treatment catches" —
    cannot open.

    ## Example
    ```yaml
    compatibility: [python3, git]
    ```
    ```yaml
    compatibility: ""
    ```

    ## Fix
    Write one short sentence: `compatibility: Requires Python 3.11 and git.`,
    or remove the key when the skill has no particular requirements.
    """

    code = "SE709"
    name = "invalid-compatibility"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "compatibility")
        if entry is None:
            return  # no usable front matter (SE701-SE704) or no `compatibility` (SE705 if required)
        span = parsed.value_span(context.path, entry)
        value = entry.string
        if value is None:
            yield self.diagnostic(span, f"`compatibility` is {entry.kind}; it must be a string of 1-{MAX_COMPATIBILITY} characters")
            return
        length = len(value.strip())
        if length == 0:
            yield self.diagnostic(
                span,
                f"`compatibility` is empty; the Agent Skills specification requires 1-{MAX_COMPATIBILITY} characters "
                "when it is provided: say what the skill needs, or remove the key",
            )
        elif length > MAX_COMPATIBILITY:
            yield self.diagnostic(span, f"`compatibility` is {length} characters long, over the limit of {MAX_COMPATIBILITY}")
