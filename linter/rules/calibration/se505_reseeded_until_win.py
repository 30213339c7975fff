"""SE505 reseeded-until-win."""

from __future__ import annotations

from ...diagnostics import Severity
from ...run_records import sample_versions
from ..base import Rule, Scope
from ._records import probe_records


class ReseededUntilWin(Rule):
    """## What it does
    Reports a probe calibrated in three or more versions in a row where every
    version but the last landed outside the usable window (ceiling, floor,
    adverse or mixed) and the last one landed in it — the pattern of reseeding
    until the treatment arm wins.

    ## Why is this bad?
    The seed: "Predeclare its stop; do not keep reseeding until treatment
    wins." Each reseed is another draw; keep drawing until one separates the
    arms and the separation is selected, not measured. The earlier versions'
    results are real observations and must be reported with the winner.

    ## Example
    Run records of `euphemized-coverage`: v1 ceiling (control 2/2), v2 floor
    (treatment 0/2), v3 window (control 0/2, treatment 2/2).

    ## Fix
    Predeclare the stop (how many variants, how many starts) before calibrating.
    Report every version's result (`skill-eval report` lists them), and treat
    the last one as a development observation, not evidence for the skill.
    Suppress with `"x-skill-eval-disable": ["SE505"]` only when the versions
    were predeclared.
    """

    code = "SE505"
    name = "reseeded-until-win"
    severity = Severity.WARNING
    scope = Scope.PROBE
    tags = ("calibration",)

    def check(self, context):
        records = probe_records(context)
        if not records:
            return
        samples = sample_versions(record for _line, record in records)
        calibrated = [(version, sample.zone) for (_id, version), sample in sorted(samples.items())
                      if sample.zone not in ("pending", "unreadable")]  # neither says how the probe fared
        worst = None
        streak = 0
        for index, (version, zone) in enumerate(calibrated):
            if zone == "window":
                if streak >= 2:
                    worst = calibrated[index - streak:index + 1]
                streak = 0
            else:
                streak += 1
        if worst is None:
            return
        history = ", ".join(f"v{version} {zone}" for version, zone in worst)
        has_version = context.data is not None and context.get("version", int) is not None
        span = context.value_span("version") if has_version else context.value_span("id")
        yield self.diagnostic(
            span,
            f"{context.probe_id!r} was reseeded until the treatment arm won ({history}); "
            "predeclare the stop and report every version's result",
        )
