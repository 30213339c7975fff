"""SE808 no-expectations."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import eval_suite


class NoExpectations(Rule):
    """## What it does
    Reports an eval with no `expectations` (missing or an empty array), and
    an expectation that is empty or only whitespace.

    ## Why is this bad?
    An eval is graded "per expectation into `{text, passed, evidence}`":
    without expectations there is nothing to grade, so every start of the
    eval is spent for a pass rate of nothing. skill-creator drafts prompts
    first and expectations later; this finding is the reminder that the
    second half is still missing.

    ## Example
    ```json
    {"id": 4, "prompt": "Plot citations per year for my field", "expected_output": "A chart", "expectations": []}
    ```

    ## Fix
    Add verifiable statements about the output ("The chart has one bar per
    year from 2015 to 2024"), one per thing a passing answer shows.
    """

    code = "SE808"
    name = "no-expectations"
    severity = Severity.WARNING
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = eval_suite(context)
        if suite is None:
            return
        for case in suite.evals:
            if case.expectations_key is None:
                yield self.diagnostic(suite.key_span("evals", case.index),
                                      f"evals[{case.index}] has no `expectations`: nothing to grade its answers by")
                continue
            raw = suite.json.data["evals"][case.index][case.expectations_key]
            if isinstance(raw, list) and not raw:
                yield self.diagnostic(suite.value_span("evals", case.index, case.expectations_key),
                                      f"evals[{case.index}] has an empty `{case.expectations_key}` list: nothing to grade its answers by")
            for position, text in case.expectations:
                if not text.strip():
                    yield self.diagnostic(suite.value_span("evals", case.index, case.expectations_key, position),
                                          f"evals[{case.index}].{case.expectations_key}[{position}] is empty: a statement to grade")
