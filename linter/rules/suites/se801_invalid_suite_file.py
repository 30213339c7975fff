"""SE801 invalid-suite-file."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import file_problem


class InvalidSuiteFile(Rule):
    """## What it does
    Reports a skill-creator suite (`evals.json`, a JSON trigger set or a
    `prompts.csv`) that cannot be read or parsed: not valid JSON or CSV (at
    the position of the error), not UTF-8, over the size limit, not a regular
    file, or a symbolic link out of the workspace.

    ## Why is this bad?
    Nothing in the suite can be checked or run: its evals, their prompts and
    expectations, or its trigger queries are all unknown, and a run of the
    suite would have nothing to start.

    ## Example
    ```json
    {
      "skill_name": "openalex",
      "evals": [{"id": 1, "prompt": "Find papers on open data",}]
    }
    ```
    The trailing comma makes the file invalid JSON.

    ## Fix
    Correct the syntax at the reported position (trailing commas, missing
    quotes, unbalanced quotes in a CSV cell), or make the file a UTF-8
    regular file inside the workspace.
    """

    code = "SE801"
    name = "invalid-suite-file"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        problem = file_problem(context)
        if problem is not None:
            yield self.diagnostic(problem.span, f"{context.path.name} cannot be read: {problem.message}; {problem.fix}")
            return
        suite = context.suite
        for found in suite.problems if suite is not None else ():
            if found.code == self.code:
                yield self.diagnostic(found.span, found.message)
