"""SE503 over-calibration-cap."""

from __future__ import annotations

from pathlib import Path

from ...diagnostics import Related, Severity
from ...textfile import Span
from ..base import Rule, Scope
from ._records import line_span_of, read_runs, suite_runs_files


class OverCalibrationCap(Rule):
    """## What it does
    Reports when the starts recorded for the suite — every record under the
    workspace's `evals/runs/` folders, failed and timed-out starts and torn
    (interrupted) lines included — exceed `[calibration] max-starts`.

    ## Why is this bad?
    The seed: live calibration "counts against the total cap", and "Count all
    calibration starts, including failures and treatment calibration;
    calibration does not always cost only two reps or guarantee useful
    separation." A suite over its cap spent trials the envelope did not
    authorize; `skill-eval run` refuses to start past the cap, so this is what
    records written by hand, merged from elsewhere, or run with a raised and
    then lowered cap look like.

    ## Example
    ```toml
    [calibration]
    max-starts = 40
    ```
    with 44 records (three of them errors) under `skills/*/evals/runs/`.

    ## Fix
    Stop calibrating: report what was observed (`skill-eval report`). Raise
    `max-starts` only as a deliberate, recorded decision to widen the envelope;
    never delete records to get under it.
    """

    code = "SE503"
    name = "over-calibration-cap"
    severity = Severity.ERROR
    scope = Scope.WORKSPACE
    tags = ("calibration",)

    def check(self, context):
        cap = context.config.calibration_max_starts
        if cap is None:
            return
        files = suite_runs_files(context.session)
        counts = [(path, read_runs(context.session, path).starts) for path in files]
        used = sum(count for _path, count in counts)
        if used <= cap:
            return
        source = context.config.source
        raw = context.session.read_raw(source) if isinstance(source, Path) else None
        if raw is not None:
            span = line_span_of(source, raw, "max-starts")
        else:
            span = Span.file_start(max(counts, key=lambda item: item[1])[0])
        related = [Related(Span.file_start(path), f"{count} start(s) recorded here") for path, count in counts if count]
        yield self.diagnostic(
            span,
            f"{used} starts are on record for this suite, over [calibration] max-starts = {cap} "
            "(failed and timed-out starts count); stop calibrating and report what was observed",
            related=related[:20],
        )
