"""SE812 far-negative."""

from __future__ import annotations

import re

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import trigger_suite

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
STOPWORDS = frozenset("""
a about above after again all also an and any are as at be because been before being below between both but by can
could did do does doing down during each even ever every few for from further get gets got had has have having he her
here him his how i if in into is it its just like make may me might more most much must my need needs no nor not now
of off on once only or other our out over own please same she should show so some such than that the their them then
there these they this those through to too under until up use used uses using very via want was way we were what when
where which while who whom why will with would you your yours skill skills user users whenever
""".split())


def vocabulary(text: str) -> set[str]:
    """The content words of ``text`` as crude stems (lower case, the first
    five letters of each word of three or more letters that is no stopword):
    enough to tell whether two texts share any subject at all."""
    return {word[:5] for word in _WORD.findall(text.lower()) if len(word) >= 3 and word not in STOPWORDS}


class FarNegative(Rule):
    """## What it does
    Warns about a should-not-trigger query that shares no vocabulary with
    the skill's front-matter `description`: no content word (stopwords
    left out, words compared by their first five letters, so "search" and
    "searching" match). Skipped when the skill or its description cannot be
    read.

    ## Why is this bad?
    skill-creator: "the most valuable ones are the near-misses — queries
    that share keywords or concepts with the skill but actually need
    something different ... 'Write a fibonacci function' as a negative test
    for a PDF skill is too easy — it doesn't test anything." A far negative
    passes for any description, so it adds to precision without measuring
    it.

    ## Example
    For a skill described as "Query OpenAlex for scholarly works and
    download their PDFs", the negative `"Write a fibonacci function"`.

    ## Fix
    Replace it with a near miss: a query that uses the skill's words but
    needs something else ("Find papers on Google Scholar").
    """

    code = "SE812"
    name = "far-negative"
    severity = Severity.WARNING
    scope = Scope.SUITE
    tags = ("suites", "triggers")

    def check(self, context):
        suite = trigger_suite(context)
        if suite is None:
            return
        negatives = [query for query in suite.triggers if not query.should_trigger and query.query.strip()]
        if not negatives:
            return
        description = context.skill_field("description")
        if not description:
            return
        words = vocabulary(description)
        if not words:
            return
        for query in negatives:
            if not vocabulary(query.query) & words:
                yield self.diagnostic(query.span, f"negative query {query.id} shares no word with the skill's "
                                      "description: a near miss tests the description, a far one does not")
