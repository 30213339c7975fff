"""SE802 suite-schema-violation."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope


class SuiteSchemaViolation(Rule):
    """## What it does
    Reports a suite whose shape is not skill-creator's: an `evals.json` that
    is not an object with an `evals` array, an eval that is not an object or
    lacks `id` or `prompt`, an `id` that is not an integer, `files` or
    `expectations` that are not arrays of strings; a trigger set whose
    entries lack a string `query` or a boolean `should_trigger`, a
    `prompts.csv` without the `should_trigger` and `prompt` columns or with a
    `should_trigger` other than true or false. One finding per problem, at
    the value (or the CSV cell).

    ## Why is this bad?
    skill-creator's schema (`references/schemas.md`) is what its scripts
    and the eval runner read: an eval without a prompt has nothing to hand
    the agent, an expectation that is not a statement cannot be graded, and
    a query with `should_trigger: "yes"` counts on neither side of the
    trigger rates.

    ## Example
    ```json
    {"skill_name": "openalex", "evals": [{"id": "one", "prompt": "Find papers", "expectations": "titles"}]}
    ```

    ## Fix
    Follow the schema: `{"skill_name": str, "evals": [{"id": int, "prompt":
    str, "expected_output": str, "files": [str], "expectations": [str]}]}`;
    a trigger set is `[{"query": str, "should_trigger": bool}]` or a CSV with
    the header `id,should_trigger,prompt`.
    """

    code = "SE802"
    name = "suite-schema-violation"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = context.suite
        for found in suite.problems if suite is not None else ():
            if found.code == self.code:
                yield self.diagnostic(found.span, found.message)
