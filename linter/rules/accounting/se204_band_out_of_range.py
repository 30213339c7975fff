"""SE204 band-out-of-range."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import is_tier2, plural


def _bound(band: dict, key: str) -> int | None:
    value = band.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class BandOutOfRange(Rule):
    """## What it does
    Reports a tier-2 probe of `"kind": "band"` with fewer than two defects, a
    `band` bound above the number of defects N, or `min_caught` greater than
    `max_caught`. (Negative bounds are schema errors, SE002.)

    ## Why is this bad?
    Seed rule 2: "N defects for a band probe, and N must be exact." A band over
    one defect is a floor in disguise, and a band that asks for more catches
    than there are defects, or whose minimum exceeds its maximum, can never
    pass: "a drifted count makes every band assertion meaningless".

    ## Example
    ```json
    {"kind": "band", "seeded_defects": 2, "defects": [...2 defects...], "band": {"min_caught": 3, "max_caught": 2}}
    ```

    ## Fix
    Keep `0 <= min_caught <= max_caught <= N`, where N is the number of
    defects; use a floor probe for a single defect.
    """

    code = "SE204"
    name = "band-out-of-range"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        listed = context.get("defects", list)
        if context.get("kind", str) != "band" or listed is None or not is_tier2(context):
            return
        count = len(listed)
        if count < 2:
            yield self.diagnostic(
                context.value_span("kind"),
                f"a band probe needs at least 2 defects, and this one lists {plural(count, 'defect')}; "
                "use a floor probe for a single defect",
            )
        band = context.get("band", dict)
        if band is None:
            return
        low, high = _bound(band, "min_caught"), _bound(band, "max_caught")
        for key, value in (("min_caught", low), ("max_caught", high)):
            if value is not None and value > count:
                yield self.diagnostic(
                    context.value_span("band", key),
                    f"band {key} is {value}, more than the {plural(count, 'defect')} of this probe; keep it within 0..{count}",
                )
        if low is not None and high is not None and low > high:
            yield self.diagnostic(
                context.value_span("band", "min_caught"),
                f"band min_caught ({low}) is greater than max_caught ({high}); no answer can pass",
                related=[Related(context.value_span("band", "max_caught"), "max_caught")],
            )
