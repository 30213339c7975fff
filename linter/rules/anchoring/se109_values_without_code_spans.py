"""SE109 values-without-code-spans."""

from __future__ import annotations

import re

from ...diagnostics import Fix, Related, Severity, TextEdit
from ...textfile import Span
from ..base import Rule, Scope
from ._common import heading_span

_ITEM_SEPARATORS = re.compile(r"\s*(?:,|;|\||/|\bor\b|\band\b)\s*")
_PLAIN_ITEM = re.compile(r"[A-Za-z0-9_.:+-]+")


class ValuesWithoutCodeSpans(Rule):
    """## What it does
    On output-spec.md: reports a `Values:` or `Aliases:` line of a field
    that lists no code span — `Values: PASS, FAIL`, or a `Values:` line
    whose values follow on the lines below. Only code spans on the line
    itself are read as values or aliases. When the line holds plain,
    comma-separated words, a quick fix puts each in a code span.

    ## Why is this bad?
    A `Values:` line without code spans lists no values, so the field takes
    any value: SE106 stops checking the probes' expectations against it and
    a grader's `NOT PROVEN` for `NOT_PROVEN` goes unnoticed — the seed's
    worked shape grades "does the agent return NOT_PROVEN … or does it
    return PASS?", and a misspelt value scores every run as a miss. An
    `Aliases:` line without code spans lists no aliases: an answer using one
    is not read as the field.

    ## Example
    ```markdown
     ## `verdict`
    Values: PASS, NOT_PROVEN
    ```

    ## Fix
    Write each value as a code span on the `Values:` line:
    ``Values: `PASS`, `NOT_PROVEN` ``.
    """

    code = "SE109"
    name = "values-without-code-spans"
    severity = Severity.WARNING
    scope = Scope.OUTPUT_SPEC
    tags = ("anchoring",)

    def check(self, context):
        spec = context.spec
        if spec is None:
            return
        for uncoded in spec.uncoded_lists:
            line = spec.document.lines[uncoded.line - 1]
            start = len(line) - len(line.lstrip()) + 1
            span = Span.at(context.path, uncoded.line, start, uncoded.line, len(line.rstrip()) + 1)
            rest = line.strip()[len(uncoded.label):].strip().rstrip(".")
            items = [item for item in _ITEM_SEPARATORS.split(rest) if item] if rest else []
            fixes = []
            what = "values" if uncoded.label == "Values:" else "aliases"
            advice = f"list the {what} as code spans on the {uncoded.label} line itself"
            if items and all(_PLAIN_ITEM.fullmatch(item) for item in items):
                coded = ", ".join(f"`{item}`" for item in items)
                advice = f"write {uncoded.label} {coded}"
                fixes.append(Fix(f"Put the {what} in code spans: {coded}", (TextEdit(span, f"{uncoded.label} {coded}"),)))
            if uncoded.label == "Values:":
                consequence = "so the field takes any value and SE106 checks nothing against it"
            else:
                consequence = "so an answer using one of them is not read as this field"
            yield self.diagnostic(
                span,
                f"the {uncoded.label} line of field {uncoded.field.name!r} lists no code span, {consequence}: {advice}",
                related=[Related(heading_span(context.path, uncoded.field.heading), f"field {uncoded.field.name!r}")],
                fixes=fixes,
            )
