"""SE207 no-discriminator."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import defect_label


class NoDiscriminator(Rule):
    """## What it does
    Reports a defect whose `caught_when` is an empty object and that names no
    `judge`: nothing grades it — no field of the output spec, no judge command
    — so no answer can be graded as catching the defect. A defect graded by a
    `judge` alone may leave `caught_when` out, or empty.

    ## Why is this bad?
    The seed's probe "grades whether the agent acted on it", and its worked
    shape names the "Action graded: does the agent return NOT_PROVEN and name
    criterion three, or does it return PASS?" An empty discriminator grades
    nothing: every answer — or none — counts as catching the defect, and the
    advice to "Calibrate the discriminator on known transcripts" has nothing to
    calibrate.

    ## Example
    ```json
    {"id": "D1", "shape": "euphemized", "quote": "existing coverage applies", "caught_when": {}}
    ```

    ## Fix
    Name the output-spec field(s) an answer that acted on the defect must carry,
    e.g. `"caught_when": {"verdict": "NOT_PROVEN"}`, or, for an act no field
    shows, a judge command that reads the answer:
    `"judge": {"command": ["python3", "../../judges/names_criterion.py"]}`
    (see docs/format.md, "Judges"), calibrated on known transcripts.
    """

    code = "SE207"
    name = "no-discriminator"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        for index, defect in context.defects:
            caught_when = defect.get("caught_when")
            if isinstance(caught_when, dict) and not caught_when and defect.get("judge") is None:
                yield self.diagnostic(
                    context.value_span("defects", index, "caught_when"),
                    f"defect {defect_label(index, defect)} has an empty caught_when, so nothing grades the act; "
                    "name the output-spec field an answer that caught it must carry, or give it a judge",
                )
