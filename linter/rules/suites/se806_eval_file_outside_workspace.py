"""SE806 eval-file-outside-workspace."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._files import eval_files


class EvalFileOutsideWorkspace(Rule):
    """## What it does
    Reports an entry of an eval's `files` that resolves outside the
    workspace root, through `..` segments, an absolute path or a symbolic
    link (links are resolved first: the containment of SE004), or that is a
    symbolic-link loop. Such a file is never read, nor copied into a run.

    ## Why is this bad?
    A run copies an eval's files into the agent's scratch project: a path
    out of the workspace (`../../../.ssh/id_rsa`) would hand the agent a
    file of the machine running the eval, and a suite that depends on files
    outside the repository does not travel with it to CI or to another
    reviewer.

    ## Example
    ```json
    {"id": 2, "prompt": "Summarise this", "files": ["../../../../etc/passwd"], "expectations": ["..."]}
    ```

    ## Fix
    Copy the file into the skill's folder (skill-creator keeps them in
    `evals/files/`) and name it relative to the skill's root.
    """

    code = "SE806"
    name = "eval-file-outside-workspace"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites", "files")

    def check(self, context):
        for case, position, text, problem in eval_files(context):
            if problem is None or problem.kind == "missing":
                continue
            what = "is a symbolic-link loop" if problem.kind == "loop" else "resolves outside the workspace root"
            yield self.diagnostic(
                context.suite.value_span("evals", case.index, "files", position),
                f"evals[{case.index}].files path {text!r} {what}; keep an eval's files inside the skill's folder",
            )
