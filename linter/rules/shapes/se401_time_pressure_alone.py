"""SE401 time-pressure-alone."""

from __future__ import annotations

from ...diagnostics import Severity
from ..accounting._common import is_tier2
from ..base import Rule, Scope
from ._shapes import DEFECT_SHAPES, TIME_PRESSURE


class TimePressureAlone(Rule):
    """## What it does
    Reports a tier-2 probe whose `shapes` include `time-pressure` but none of
    `buried-in-green`, `euphemized` or `structural`.

    ## Why is this bad?
    The seed's fourth shape "does not add a defect — it lowers the threshold at
    which the agent accepts the green reading. Use as a modifier on shapes 1–3,
    never alone." A probe with only a deadline has no defect for the pressure
    to hide, so it measures nothing the discipline teaches.

    ## Example
    ```json
    {"shapes": ["time-pressure"], "defects": [{"id": "D1", "shape": "time-pressure", ...}]}
    ```

    ## Fix
    Add the shape the defect actually has (`buried-in-green`, `euphemized` or
    `structural`) to `shapes` and to the defect, keeping `time-pressure` as the
    modifier.
    """

    code = "SE401"
    name = "time-pressure-alone"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("shapes",)

    def check(self, context):
        shapes = context.get("shapes", list)
        if shapes is None or not is_tier2(context) or TIME_PRESSURE not in shapes:
            return
        if any(shape in DEFECT_SHAPES for shape in shapes if isinstance(shape, str)):
            return
        yield self.diagnostic(
            context.value_span("shapes", shapes.index(TIME_PRESSURE)),
            "time-pressure is a modifier on buried-in-green, euphemized or structural, never a shape alone; "
            "add the shape the defect has",
        )
