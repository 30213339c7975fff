"""SE809 transcript-expectation."""

from __future__ import annotations

import re

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import eval_suite

PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple((why, re.compile(pattern, re.IGNORECASE)) for why, pattern in (
    ("which script or tool ran", r"\b(?:used|uses|ran|runs|run|executed|executes|invoked|invokes|called|calls)\s+(?:the\s+|a\s+)?(?:[\w./-]+\s+)?(?:script|tool|command)\b"),
    ("which script or tool ran", r"\b(?:script|tool|command)\b[^.]{0,30}?\b(?:was|is|were)\s+(?:used|run|executed|called|invoked)\b"),
    ("whether the skill was loaded", r"\bskill\b[^.]{0,40}?\b(?:was|is|gets|got|been)?\s*(?:triggered|invoked|loaded|consulted|activated|used|read)\b"),
    ("whether the skill was loaded", r"\b(?:used|uses|invoked|invokes|loaded|loads|consulted|consults|triggered|triggers)\s+the\s+[\w.-]+\s+skill\b"),
    ("which files the agent read", r"\breads?\s+(?:both\s+|the\s+|all\s+)?[\w./-]+\.(?:md|json|csv|txt|py|ya?ml|xml|pdf)\b"),
    ("the agent's tool calls", r"\btool\s+calls?\b"),
    ("the transcript", r"\btranscript\b"),
))
"""``(what it needs, pattern)``: statements about how the answer was made,
not about the answer (skill-creator's own example: "The skill used script Y")."""


def needs_transcript(text: str) -> str | None:
    """What of the run ``text`` needs besides the output, if anything."""
    for why, pattern in PATTERNS:
        if pattern.search(text):
            return why
    return None


class TranscriptExpectation(Rule):
    """## What it does
    Flags, as information, an expectation that cannot be judged from the
    agent's final output alone because it states how the output was made:
    that the skill was triggered or loaded, that a script, tool or command
    was run, which files were read, the tool calls, the transcript
    (skill-creator's own example: "The skill used script Y").

    ## Why is this bad?
    A judge that sees only the answer cannot tell whether "The skill was
    triggered" holds: it guesses, and the guess differs between the arms
    for reasons that have nothing to do with the skill. Such an expectation
    needs the harness's transcript (skill-eval records it for a preset
    agent) and a judge given it, or a trigger test, which measures exactly
    that.

    ## Example
    ```json
    "expectations": ["The case-management skill was triggered", "Produces a tasks.md file"]
    ```

    ## Fix
    Restate it as something the output shows ("The answer quotes the
    script's summary line"), move "the skill was triggered" into a trigger
    set, or keep it and give the judge the transcript.
    """

    code = "SE809"
    name = "transcript-expectation"
    severity = Severity.INFO
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = eval_suite(context)
        if suite is None:
            return
        for case in suite.evals:
            for position, text in case.expectations:
                why = needs_transcript(text)
                if why is not None:
                    yield self.diagnostic(
                        suite.value_span("evals", case.index, case.expectations_key, position),
                        f"this expectation is about {why}, which the output alone does not show: "
                        "its judge needs the transcript",
                    )
