"""SE810 one-sided-trigger-set."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import trigger_suite


class OneSidedTriggerSet(Rule):
    """## What it does
    Reports a trigger set that lacks queries of one kind: no query with
    `should_trigger` true, or none with it false. Reported at the file's
    first line.

    ## Why is this bad?
    skill-creator asks for 8-10 of each kind, "the negatives being
    near-misses". With positives alone a skill that loads on every query
    scores perfectly (recall says nothing of precision); with negatives
    alone a skill that never loads does. Neither precision nor recall can
    be computed from one kind.

    ## Example
    ```csv
    id,should_trigger,prompt
    test-01,true,"Find papers on open government data"
    test-02,true,"Download the PDF of work W2741809807"
    ```

    ## Fix
    Add the other kind: for negatives, queries that share the skill's
    keywords but need something else ("Find papers on Google Scholar").
    """

    code = "SE810"
    name = "one-sided-trigger-set"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites", "triggers")

    def check(self, context):
        suite = trigger_suite(context)
        if suite is None or not suite.triggers:
            return
        positives = sum(1 for query in suite.triggers if query.should_trigger)
        negatives = len(suite.triggers) - positives
        if positives and negatives:
            return
        missing = "should-trigger (true)" if not positives else "should-not-trigger (false)"
        yield self.diagnostic(suite.first_line_span(),
                              f"the trigger set has {len(suite.triggers)} queries and no {missing} one: "
                              "precision and recall need both kinds")
