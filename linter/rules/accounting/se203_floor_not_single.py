"""SE203 floor-not-single."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import defect_label, is_tier2, plural


class FloorNotSingle(Rule):
    """## What it does
    Reports a tier-2 probe of `"kind": "floor"` whose `defects` does not hold
    exactly one defect.

    ## Why is this bad?
    Seed rule 1: "One defect per floor probe. Two defects and a floor assertion
    cannot tell 'caught both' from 'caught one and got lucky.'" With no defect
    at all there is nothing for the floor to measure.

    ## Example
    ```json
    {"kind": "floor", "seeded_defects": 2, "defects": [{"id": "D1", ...}, {"id": "D2", ...}]}
    ```

    ## Fix
    Split the probe into one floor probe per defect, or make it a band probe
    (`"kind": "band"` with a `band` assertion) if the defects are independent.
    """

    code = "SE203"
    name = "floor-not-single"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        listed = context.get("defects", list)
        if context.get("kind", str) != "floor" or listed is None or len(listed) == 1 or not is_tier2(context):
            return
        if not listed:
            message = "a floor probe has exactly one defect, and this one lists none; add the defect it seeds"
        else:
            message = (
                f"a floor probe has exactly one defect, and this one lists {plural(len(listed), 'defect')}; "
                "split it into one floor probe per defect, or make it a band probe"
            )
        related = [
            Related(context.value_span("defects", index, "id"), f"defect {defect_label(index, defect)}")
            for index, defect in context.defects
        ] if len(listed) > 1 else []
        yield self.diagnostic(context.value_span("kind"), message, related=related)
