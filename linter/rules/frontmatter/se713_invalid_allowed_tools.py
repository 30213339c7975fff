"""SE713 invalid-allowed-tools."""

from __future__ import annotations

import json

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._parse import STR_TAG, key_of


class InvalidAllowedTools(Rule):
    """## What it does
    Reports a front-matter `allowed-tools` that is not a string: most often
    a YAML list of tool names, also a number, a mapping or an empty value.
    The Agent Skills specification makes `allowed-tools` one space-separated
    string (`allowed-tools: Bash(git:*) Read`). When every item of a list is
    a string without spaces, a quick fix joins them into that string.

    ## Why is this bad?
    `allowed-tools` is experimental and clients read it differently: one
    that expects the specification's string ignores a list, or rejects the
    front matter, so the skill runs with other tools than its author meant,
    or does not load. A probe's treatment arm then runs a different
    discipline in each agent, and the seed's window — "control misses,
    treatment catches" — measures the agent rather than the skill.

    ## Example
    ```yaml
    allowed-tools:
      - Bash
      - Read
      - Grep
    ```

    ## Fix
    Write the tools as one space-separated string:
    ```yaml
    allowed-tools: Bash Read Grep
    ```
    """

    code = "SE713"
    name = "invalid-allowed-tools"
    severity = Severity.WARNING
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "allowed-tools")
        if entry is None or entry.string is not None:
            return
        span = parsed.value_span(context.path, entry)
        node = entry.value_node
        expected = "the Agent Skills specification expects one space-separated string such as `Bash(git:*) Read Grep`"
        if entry.is_null:
            yield self.diagnostic(span, f"`allowed-tools` is empty; {expected}, or remove the key")
            return
        fixes = []
        if node.id == "sequence":
            items = node.value
            names = [item.value for item in items if item.id == "scalar" and item.tag == STR_TAG]
            if items and len(names) == len(items) and all(name and not any(c.isspace() for c in name) for name in names):
                joined = " ".join(names)
                # from the end of the key through the list: `allowed-tools: "Bash Read"` on one line
                after_key = parsed.mark_span(context.path, entry.key_node.end_mark, node.end_mark)
                fixes.append(Fix(f"Write the tools as {joined!r}",
                                 (TextEdit(after_key, ": " + json.dumps(joined, ensure_ascii=False)),)))
            yield self.diagnostic(span, f"`allowed-tools` is a YAML list; {expected}", fixes=fixes)
            return
        yield self.diagnostic(span, f"`allowed-tools` is {entry.kind}; {expected}")
