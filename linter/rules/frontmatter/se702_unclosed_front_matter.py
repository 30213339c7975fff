"""SE702 unclosed-front-matter."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._parse import front_matter_of


class UnclosedFrontMatter(Rule):
    """## What it does
    Reports front matter whose opening `---` is never closed: no later line is
    exactly `---` (or `...`) at column 1. An indented `---`, or one inside a
    value, does not close it.

    ## Why is this bad?
    Without its closing marker the whole file is read as YAML or as markdown,
    depending on the tool: the skill's `name` and `description` are lost, or
    its instructions become one broken YAML document. Either way the
    treatment arm does not get the discipline, and the seed's window between
    "control misses" and "treatment catches" cannot be measured.

    ## Example
    ```markdown
    ---
    name: verify-closeout
    description: Use when closing out a merged change.

    # Verify closeout
    ```

    ## Fix
    Add a line `---` at column 1 after the last front-matter key.
    """

    code = "SE702"
    name = "unclosed-front-matter"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if parsed is None or parsed.front is None or parsed.front.end_line is not None:
            return
        related = []
        for number, line in enumerate(parsed.lines[1:], start=2):
            if line.strip() in ("---", "...") and line != line.lstrip():
                related.append(Related(context.document.line_span(number), "indented: this does not close the front matter"))
                break
        yield self.diagnostic(
            parsed.opening_span(context.path),
            "the front matter opened here never closes: add a line `---` at column 1 after its last key",
            related=related,
        )
