"""SE302 quiz-framing."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import judged_diagnostics


class QuizFraming(Rule):
    """## What it does
    Reports a sentence of the artifact (question.md) that asks the agent to
    hunt for a fault instead of doing the work, however it is worded: a
    request ("tell me", "find", "point out", "go through ... and", "your
    job is to", "can you", a question) whose object is a fault or a
    shortfall ("what is wrong", "which criterion is not actually proven",
    "the clause the Customer should refuse", "what would be lost", "where
    this closeout falls short", "the line that will bite us"). The task
    may sit anywhere in the sentence and look like ordinary work: a verb
    of finding or telling at a clause's start ("Walk through the config
    and call out whatever would make the comparison unfair", "Draft the
    sign-off after working out which control result you can't stand
    behind") or a piece of writing whose content is a selection ("Write up
    which action items you would reopen", "Leave a review that names the
    setting which weakens branch protection"); it is a quiz when that
    selection presupposes a fault (not to be trusted, not safe, missed, to
    reopen, still open). A request
    for the work itself ("Please post the closeout verdict", "approve or
    request changes") is not a quiz.

    A request or a question no pattern reads as a quiz is also read by its
    words: SE301's stance scorer (trained on signposts and quizzes against
    work, `benchmarks/train_judgement_scorer.py`) says whether the words
    point at a flaw. A request to the reader (an imperative of finding,
    telling or trying, "can you ...", a question) whose words do is a quiz
    ("Get to the bottom of why the metrics criterion was signed off",
    "Track down the criterion whose evidence was never gathered", "Work
    out what the 98.7% is actually measuring"). It must score the signpost
    threshold and a threshold of its own, set by the labelled work
    requests as the signpost threshold is by work statements (a request to
    review the defect's part, "Read through the retry loop and tell me
    whether it is ready to merge", asks for the work, though its words
    point at the part as a signpost's do), and more still when it names a
    part of the artifact that holds no defect. A work request with the
    same verbs ("Work out the export schedule for the next release",
    "Track down the export retries runbook and link it here") is not a
    quiz. A fault that is closed or conditional ("the bug was fixed in
    2.4", "if a value is incorrect, the importer rejects the row") is not
    one either, nor is a phrase of the list inside a condition of the work
    ("If you spot a typo, just fix it in place").

    A quiz in the shape of an ordinary request, with no verb of finding
    ("Mark the rows whose evidence wouldn't get past the QA lead", "Send
    me what you'd want settled in this report before the old primary
    goes"), is read by a third table, trained on the labelled quizzes
    against work and signposts (`QUIZ` in `_stance_words.py`): above its
    threshold, a sentence is a quiz when it relates to a defect (it names
    a defect's part or block, or points at the artifact as a whole: "this
    report"). The threshold is set so that no work sentence of the
    labelled set's dev split (prose of five words or more) would have been
    flagged by a table that never saw its domain: "Send the run report to
    the inspection team lead once it's final" or "Prepare the list of
    attendees for Thursday's renewal call" is work, and a closing line
    that relates to no defect ("Let me know if you have questions") is
    never a quiz error.

    The shipped phrases (`linter/data/phrases.toml`, table `[quiz-framing]`,
    plus `[quiz-framing] extra`) are reported wherever they occur: a quiz
    needs no pointer to the defect to give it away. `[quiz-framing] allow`
    exempts occurrences inside an allowed phrase. The reading is measured on
    a labelled set (benchmarks/judgement/).

    ## Why is this bad?
    Seed rule 4: "The artifact must be work, not a quiz. No 'review this and
    tell us what's wrong.' Hand the agent the task the skill exists for; the
    defect is in the material." A quiz tells the agent a fault exists, so it
    no longer has to apply the discipline to find out.

    ## Example
    ```markdown
    Here is the closeout for the export job. Review this and tell us what’s wrong.
    Go through the criteria and tell me which ones you would push back on.
    ```
    Both are errors; "Please post the closeout verdict." is not.

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
