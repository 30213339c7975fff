"""SE807 empty-prompt."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import readable_suite


class EmptyPrompt(Rule):
    """## What it does
    Reports an eval whose `prompt` is empty or only whitespace, and a
    trigger query that is, at the prompt or query.

    ## Why is this bad?
    The prompt is all the agent is given: an empty one starts the agent on
    nothing, in both arms, and every start spent on it is a start of the
    budget with no measurement. An empty trigger query cannot trigger any
    skill, so it inflates the negatives' score and hides a recall problem.

    ## Example
    ```json
    {"id": 3, "prompt": "  ", "expectations": ["The output lists three papers"]}
    ```

    ## Fix
    Write the task as a user would ask it, or remove the eval.
    """

    code = "SE807"
    name = "empty-prompt"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = readable_suite(context)
        if suite is None:
            return
        for case in suite.evals:
            if case.prompt is not None and not case.prompt.strip():
                yield self.diagnostic(suite.value_span("evals", case.index, "prompt"),
                                      f"evals[{case.index}] has an empty prompt: nothing to give the agent")
        for query in suite.triggers:
            if not query.query.strip():
                yield self.diagnostic(query.span, f"trigger query {query.id} is empty: it cannot trigger anything")
