"""SE704 front-matter-not-mapping."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import front_matter_of


class FrontMatterNotMapping(Rule):
    """## What it does
    Reports front matter that is valid YAML but not a mapping of keys to
    values: a list, or a lone string or number.

    ## Why is this bad?
    The Agent Skills specification reads `name`, `description` and the other
    keys from a mapping; anything else leaves the skill without a name or a
    description, so no agent loads it and the treatment arm of every probe
    runs without the discipline (the seed's window, "control misses,
    treatment catches", cannot open).

    ## Example
    ```yaml
    - name: verify-closeout
    - description: Use when closing out a merged change.
    ```

    ## Fix
    Write one `key: value` per line at column 1, without list dashes.
    """

    code = "SE704"
    name = "front-matter-not-mapping"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if parsed is None or parsed.root is None or parsed.is_mapping:
            return
        root = parsed.root
        kind = "a list" if root.id == "sequence" else "a single value"
        yield self.diagnostic(
            parsed.node_span(context.path, root),
            f"the front matter is {kind}, not a mapping of keys such as `name:` and `description:`",
        )
