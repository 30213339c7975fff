"""SE301 signposting."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import judged_diagnostics


class Signposting(Rule):
    """## What it does
    Reports phrases in the artifact (question.md) that point the agent at the
    defect: "note the following", "one of these is incorrect", "pay close
    attention", "can you spot", "look carefully", "watch out for", "hint",
    "there is a mistake", "something is off", "not everything here is
    correct", and their plain variants.

    Matching is on the artifact's words: case, markdown markup, HTML tags,
    punctuation and line breaks are ignored, curly and straight apostrophes are
    the same, and contractions match their expansions ("there's" = "there is").
    An occurrence never runs across a sentence end or a markdown block boundary
    (a heading, list item, table row, block quote, fence or HTML block, as
    CommonMark parses them) and may start right after one; a capitalised word
    that starts a line after a line without punctuation (a title or log line)
    may start one too.

    The phrase list is data (`linter/data/phrases.toml`, table
    `[signposting]`); `[signposting] extra = [...]` in skill-eval.toml adds
    phrases, and `allow = [...]` exempts occurrences that lie inside an allowed
    phrase (e.g. `allow = ["hint text"]` for a form's hint text).

    ## Why is this bad?
    Seed rule 6: "Never signpost. No 'note the following' or 'one of these is
    incorrect.' Signposting converts a tier-2 probe back into a tier-1 quiz."
    An agent told where to look catches the defect without the discipline, so
    both arms catch it and the probe measures nothing (the ceiling).

    ## Example
    ```markdown
    Please **note** the
    following before you sign: one of these rows is incorrect.
    ```

    ## Fix
    Delete the pointer and let the material speak: the defect is in the work,
    not announced by it. If the phrase is genuine content of the work, add it
    to `[signposting] allow`.
    """

    code = "SE301"
    name = "signposting"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("artifact", "phrases")

    def check(self, context):
        yield from judged_diagnostics(self, context, "SE301", "signposting", context.config.signposting,
                                      _error_message, _info_message)


def _error_message(shown: str, relation: str | None, reason: str | None) -> str:
    what = f"{shown!r} {reason} and" if reason else f"signposting phrase {shown!r}"
    where = f": it {relation}" if relation else ""
    return f"{what} points the agent at the defect{where} (seed rule 6: never signpost)"


def _info_message(shown: str, why: str) -> str:
    return (f"attention phrase {shown!r} is aimed at no defect: it {why}; attention words alone do not signpost "
            "(info: reword if it does point at the defect)")
