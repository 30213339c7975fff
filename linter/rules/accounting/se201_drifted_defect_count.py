"""SE201 drifted-defect-count."""

from __future__ import annotations

from ...diagnostics import Fix, Related, Severity, TextEdit
from ..base import Rule, Scope
from ._common import artifact_name, defect_label, is_tier2, plural


class DriftedDefectCount(Rule):
    """## What it does
    Checks a tier-2 probe's `seeded_defects` against two counts: the number of
    entries in `defects`, and the number of defects present in the artifact (a
    defect is present when its quote is found exactly once). Both must equal
    it. The quick fix sets the count; it is applied by `skill-eval-lint --fix`
    only when both counts agree, so the right number is unambiguous.

    ## Why is this bad?
    Seed rule 2: "N defects for a band probe, and N must be exact. probe.json's
    seeded_defects must equal what is actually in question.md. A drifted count
    makes every band assertion meaningless and nothing will catch it." A defect
    edited out of the artifact, or added to `defects` without bumping the count,
    silently changes what every band means.

    ## Example
    ```json
    {"seeded_defects": 3, "defects": [{"id": "D1", ...}, {"id": "D2", ...}]}
    ```
    Two defects are listed (and present), but the count says three.

    ## Fix
    Set `seeded_defects` to the number of defects actually planted. If a defect's
    quote is missing from the artifact (see SE202), fix the quote or the
    artifact first: the count must match both `defects` and the artifact.
    """

    code = "SE201"
    name = "drifted-defect-count"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        seeded = context.get("seeded_defects", int)
        listed = context.get("defects", list)
        if seeded is None or listed is None or not is_tier2(context):
            return
        present = context.present_count if context.artifact is not None else None
        if seeded == len(listed) and present in (None, seeded):
            return
        where = artifact_name(context)
        facts = f"probe.json lists {plural(len(listed), 'defect')}"
        if present is not None:
            facts += f" and {present} {'is' if present == 1 else 'are'} present in {where} (quote found exactly once)"
        span = context.value_span("seeded_defects")
        candidates = [len(listed)] if present is None else [present, len(listed)]
        safe = present is not None and present == len(listed)
        edit = context.edit_span("seeded_defects")
        fixes = []
        for count in dict.fromkeys(candidates):
            if count != seeded and edit is not None:
                fixes.append(Fix(f"Set seeded_defects to {count}", (TextEdit(edit, str(count)),), safe=safe))
        related = [
            Related(context.value_span("defects", index, "quote"), f"{defect_label(index, defect)}'s quote is not found exactly once in {where}")
            for index, defect in context.defects
            if present is not None and index in context.quote_matches and not context.quote_matches[index].found
        ]
        advice = f"; set it to {len(listed)}" if safe else ""
        yield self.diagnostic(span, f"seeded_defects is {seeded}, but {facts}{advice}", related=related, fixes=fixes)
