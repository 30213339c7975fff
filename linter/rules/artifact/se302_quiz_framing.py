"""SE302 quiz-framing."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import judged_diagnostics


class QuizFraming(Rule):
    """## What it does
    Reports an artifact (question.md) that asks to be reviewed for faults:
    "review this and tell us what's wrong", "find the bug", "what is wrong
    with", "identify the error", "spot the mistake", "find the flaw", "is there
    anything wrong", "what's the problem with", "check this for errors" and
    their plain variants.

    Matching is on the artifact's words: case, markdown markup, HTML tags,
    punctuation and line breaks are ignored, curly and straight apostrophes are
    the same, and contractions match their expansions ("what's" = "what is").
    An occurrence never runs across a sentence end or a markdown block boundary
    (a heading, list item, table row, block quote, fence or HTML block, as
    CommonMark parses them) and may start right after one; a capitalised word
    that starts a line after a line without punctuation (a title or log line)
    may start one too.

    The phrase list is data (`linter/data/phrases.toml`, table
    `[quiz-framing]`); `[quiz-framing] extra = [...]` in skill-eval.toml adds
    phrases and `allow = [...]` exempts occurrences inside an allowed phrase.

    ## Why is this bad?
    Seed rule 4: "The artifact must be work, not a quiz. No 'review this and
    tell us what's wrong.' Hand the agent the task the skill exists for; the
    defect is in the material." A quiz tells the agent a fault exists, so it
    no longer has to apply the discipline to find out.

    ## Example
    ```markdown
    Here is the closeout for the export job. Review this and tell us what’s wrong.
    ```

    ## Fix
    Ask for the real task the skill exists for ("Please post the closeout
    verdict."), and leave the defect in the material.
    """

    code = "SE302"
    name = "quiz-framing"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("artifact", "phrases")

    def check(self, context):
        yield from judged_diagnostics(self, context, "SE302", "quiz-framing", context.config.quiz_framing,
                                      _error_message)


def _error_message(shown: str, relation: str | None, reason: str | None) -> str:
    what = f"quiz framing {shown!r} {reason}" if reason else f"quiz framing {shown!r} asks the agent to hunt for a fault"
    return f"{what} (seed rule 4: the artifact must be work, not a quiz)"
