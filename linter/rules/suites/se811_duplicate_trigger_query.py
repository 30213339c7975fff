"""SE811 duplicate-trigger-query."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import normalized, trigger_suite


class DuplicateTriggerQuery(Rule):
    """## What it does
    Reports a trigger query that repeats an earlier one of the same set
    (case and whitespace ignored), at the later query, with the first as a
    related location; "with opposite `should_trigger`" when they disagree.

    ## Why is this bad?
    A repeated query counts twice in precision and recall, weighting one
    case over the others, and skill-creator's 60/40 train/test split can put
    one copy in each half, so the held-out score is measured on a query the
    description was tuned on. Two copies that disagree make one of them
    wrong whatever the skill does.

    ## Example
    ```json
    [{"query": "Find papers on open data", "should_trigger": true},
     {"query": "find papers on  open data", "should_trigger": true}]
    ```

    ## Fix
    Remove the copy, or rephrase it into a distinct case.
    """

    code = "SE811"
    name = "duplicate-trigger-query"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites", "triggers")

    def check(self, context):
        suite = trigger_suite(context)
        if suite is None:
            return
        seen = {}
        for query in suite.triggers:
            key = normalized(query.query)
            if not key:
                continue
            first = seen.get(key)
            if first is None:
                seen[key] = query
                continue
            clash = " with opposite should_trigger" if first.should_trigger != query.should_trigger else ""
            yield self.diagnostic(query.span, f"query {query.id} repeats query {first.id}{clash}",
                                  related=(Related(first.span, f"query {first.id}"),))
