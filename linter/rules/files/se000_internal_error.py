"""SE000 internal-error."""

from __future__ import annotations

from pathlib import Path

from ...diagnostics import Diagnostic, Severity
from ...textfile import Span
from ..base import Rule, Scope


class InternalError(Rule):
    """## What it does
    Reports that one of skill-eval's own rules crashed while checking a file.
    The engine produces this diagnostic itself: the crashing rule's findings
    for that file are lost, and every other rule and file is still checked.

    ## Why is this bad?
    A crash is a bug in skill-eval, not in your probe. It is reported rather
    than hidden so that a silent gap in the checks never reads as a clean
    result: the seed warns against the agent that "pattern-matches 'looks
    green' and stops", and a linter should not be that agent.

    ## Example
    ```text
    skills/x/evals/probes/p/probe.json:1:1: SE000 rule SE205 (dependent-defects)
    crashed on this file: IndexError: list index out of range
    ```

    ## Fix
    Report the message and the file to the skill-eval maintainers. Meanwhile
    the other diagnostics of the file are still valid; `--ignore SE000` hides
    the report but not the gap.
    """

    code = "SE000"
    name = "internal-error"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("files",)

    def check(self, context):
        """Nothing to check: the engine creates SE000 when a rule raises."""
        return ()

    @classmethod
    def from_exception(cls, rule: Rule, error: BaseException, path: Path, trace: str = "") -> Diagnostic:
        """The SE000 diagnostic for ``rule`` crashing on ``path``."""
        detail = f"{type(error).__name__}: {error}".strip()
        if len(detail) > 300:
            detail = detail[:297] + "..."
        return cls().diagnostic(
            Span.file_start(path),
            f"rule {rule.code} ({rule.name}) crashed on this file: {detail}; the other rules still ran",
        )
