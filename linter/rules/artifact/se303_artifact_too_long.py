"""SE303 artifact-too-long."""

from __future__ import annotations

from ...diagnostics import Severity
from ...textfile import Span
from ..base import Rule, Scope
from ._common import artifact_lines


class ArtifactTooLong(Rule):
    """## What it does
    Reports an artifact (question.md) of more than `max-artifact-lines` lines
    (40 by default). Lines are counted as fixture-format.md's "Text files"
    section says: CRLF and CR count as one line break, and a final line break
    does not start another line. The diagnostic covers the first line past the
    limit through the end of the file.

    ## Why is this bad?
    Seed rule 5: "Keep it short. Under 40 lines. A long artifact measures
    reading stamina." A miss on a long artifact may be fatigue rather than a
    gap in the discipline, so the probe no longer isolates what it claims to.

    ## Example
    A closeout report of 52 lines: 40 rows of evidence and a long preamble.

    ## Fix
    Cut what does not carry the scenario. If a probe really needs more, raise
    `max-artifact-lines` in skill-eval.toml, or disable the rule for that
    probe in probe.json: `"x-skill-eval-disable": ["SE303"]`.
    """

    code = "SE303"
    name = "artifact-too-long"
    severity = Severity.WARNING
    scope = Scope.PROBE
    tags = ("artifact",)

    def check(self, context):
        artifact = context.artifact
        if artifact is None:
            return
        limit = context.config.max_artifact_lines
        count = artifact_lines(artifact)
        if count <= limit:
            return
        last = count
        span = Span.at(artifact.path, limit + 1, 1, last, len(artifact.lines[last - 1]) + 1)
        yield self.diagnostic(
            span,
            f"artifact has {count} lines, over the limit of {limit} (seed rule 5: a long artifact measures reading stamina)",
        )
