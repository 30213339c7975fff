"""SE805 missing-eval-file."""

from __future__ import annotations

from ...diagnostics import Severity
from ...suites import relative_to_root
from ..base import Rule, Scope
from ._files import eval_files


class MissingEvalFile(Rule):
    """## What it does
    Reports an entry of an eval's `files` that names no file: paths are
    relative to the skill's root (the folder holding SKILL.md; for a suite
    kept outside its skill, the skill `skill_name` names), as
    skill-creator's schema says. Reported at the path.

    ## Why is this bad?
    The eval's prompt works on those files ("fill in this form",
    "summarise the attached report"): a run copies them into the agent's
    scratch project. Without one, both arms answer a different task than the
    expectations grade, and the pass rates say nothing about the skill.

    ## Example
    ```json
    {"id": 1, "prompt": "Extract the totals", "files": ["evals/files/report.pdf"], "expectations": ["..."]}
    ```
    with no `evals/files/report.pdf` in the skill's folder.

    ## Fix
    Add the file, or correct the path (relative to the skill's root, not to
    the `evals` folder).
    """

    code = "SE805"
    name = "missing-eval-file"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites", "files")

    def check(self, context):
        for case, position, text, problem in eval_files(context):
            if problem is None or problem.kind != "missing":
                continue
            where = relative_to_root(problem.path, context.session.root)
            yield self.diagnostic(
                context.suite.value_span("evals", case.index, "files", position),
                f"evals[{case.index}].files names {text!r}, which does not exist ({where}); "
                "paths are relative to the skill's root",
            )
