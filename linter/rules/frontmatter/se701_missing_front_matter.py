"""SE701 missing-front-matter."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._parse import front_matter_of


class MissingFrontMatter(Rule):
    """## What it does
    Reports a SKILL.md that does not open with YAML front matter: a first
    line `---`, the `name` and `description` keys, and a closing `---`.

    ## Why is this bad?
    The Agent Skills specification requires every SKILL.md to start with
    front matter; an agent discovers a skill by its `name` and `description`
    alone and never loads a skill without them. A probe's treatment arm then
    runs without the discipline it is meant to measure, so the seed's
    "control misses, treatment catches" window cannot open: both arms are
    controls.

    ## Example
    ```markdown
    # Verify closeout

    Each criterion needs its own evidence.
    ```

    ## Fix
    Add front matter as the very first lines of the file (no blank line or
    byte before the opening `---`):
    ```markdown
    ---
    name: verify-closeout
    description: Use when closing out a merged change.
    ---
    ```
    """

    code = "SE701"
    name = "missing-front-matter"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if parsed is None or parsed.front is not None:
            return
        first = parsed.lines[0] if parsed.lines else ""
        hint = ""
        if first.strip() == "---":
            hint = " (the opening `---` must be exactly `---` at column 1)"
        elif any(line.strip() == "---" for line in parsed.lines[1:5]) and not first.strip():
            hint = " (the opening `---` must be the first line: remove the lines before it)"
        yield self.diagnostic(
            context.document.line_span(1),
            f"{context.path.name} has no YAML front matter; an agent finds a skill by its `name` and `description`{hint}",
        )
