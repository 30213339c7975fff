"""SE206 duplicate-defect-id."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope


class DuplicateDefectId(Rule):
    """## What it does
    Reports a defect whose `id` is already used by an earlier defect of the
    same probe, with the first one as a related location.

    ## Why is this bad?
    The eval runner records which defects an answer caught by id. Two defects
    with one id are counted as one: a band over N defects quietly becomes a
    band over N−1, and seed rule 2's warning applies — "A drifted count makes
    every band assertion meaningless and nothing will catch it."

    ## Example
    ```json
    {"defects": [{"id": "D1", "quote": "1 skipped", ...}, {"id": "D1", "quote": "0 rules loaded", ...}]}
    ```

    ## Fix
    Give every defect of the probe its own id (`D1`, `D2`, ...).
    """

    code = "SE206"
    name = "duplicate-defect-id"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        first_seen: dict[str, int] = {}
        for index, defect in context.defects:
            defect_id = defect.get("id")
            if not isinstance(defect_id, str):
                continue
            if defect_id not in first_seen:
                first_seen[defect_id] = index
                continue
            first = first_seen[defect_id]
            yield self.diagnostic(
                context.value_span("defects", index, "id"),
                f"defect id {defect_id!r} is already used by defects[{first}]; give each defect its own id",
                related=[Related(context.value_span("defects", first, "id"), f"first defect with id {defect_id!r}")],
            )
