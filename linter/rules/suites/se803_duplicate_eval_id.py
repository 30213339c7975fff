"""SE803 duplicate-eval-id."""

from __future__ import annotations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import eval_suite


class DuplicateEvalId(Rule):
    """## What it does
    Reports an eval of an `evals.json` whose integer `id` an earlier eval of
    the same suite already has, at the later `id`, with the first as a
    related location.

    ## Why is this bad?
    skill-creator's schema asks for a "unique integer identifier": its
    grading, its benchmark and skill-eval's run records name an eval by its
    id. Two evals with one id pool their starts into one row, so the pass
    rate of one is reported as the other's, and a resumed run may take a
    start of one for a start of the other.

    ## Example
    ```json
    {"skill_name": "openalex", "evals": [
      {"id": 1, "prompt": "Find papers on open data", "expectations": ["Lists titles"]},
      {"id": 1, "prompt": "Count papers per year", "expectations": ["Groups by year"]}
    ]}
    ```

    ## Fix
    Give each eval its own id (the next unused integer).
    """

    code = "SE803"
    name = "duplicate-eval-id"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = eval_suite(context)
        if suite is None:
            return
        first: dict[int, int] = {}
        for case in suite.evals:
            if case.id is None:
                continue
            if case.id in first:
                earlier = first[case.id]
                yield self.diagnostic(
                    suite.value_span("evals", case.index, "id"),
                    f"eval id {case.id} is already used by evals[{earlier}]; ids must be unique in the suite",
                    related=(Related(suite.value_span("evals", earlier, "id"), f"evals[{earlier}] has id {case.id}"),),
                )
            else:
                first[case.id] = case.index
