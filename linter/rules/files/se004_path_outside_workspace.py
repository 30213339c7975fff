"""SE004 path-outside-workspace."""

from __future__ import annotations

import os
from pathlib import Path

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._references import REFERENCES, reference_span


class PathOutsideWorkspace(Rule):
    """## What it does
    Reports a probe whose artifact, skill or output spec resolves outside the
    workspace root, either through `..` segments, an absolute path, or a
    symbolic link pointing out of the workspace (links are resolved first).

    ## Why is this bad?
    A probe must carry everything it is graded on. The seed asks to "Freeze the
    chosen development cases before any separately authorized comparison": a
    frozen case whose artifact lives outside the workspace can change under it
    unnoticed, and it does not travel with the repository to CI or to another
    reviewer. Reading arbitrary paths (`../../../../etc/passwd`) from a fixture
    is also a hazard for the editor and the eval runner.

    ## Example
    ```json
    {"id": "euphemized-coverage", "tier": 1, "question": "../../../../../etc/passwd", "step_heading": "Verify"}
    ```

    ## Fix
    Copy the file into the workspace (usually the probe's own folder) and use a
    path relative to the probe's folder; replace a symbolic link that points
    outside with the file itself.
    """

    code = "SE004"
    name = "path-outside-workspace"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("files",)

    def check(self, context):
        root = context.session.root
        for reference in REFERENCES:
            problem = reference.problem(context)
            if problem is None or problem.kind != "outside":
                continue
            value = context.get(reference.key, str)
            named = f"`{reference.key}` path {value!r}" if value is not None and value.strip() else f"the {reference.role} {problem.path.name}"
            lexical = Path(os.path.normpath(os.path.abspath(problem.path)))
            how = " through a symbolic link" if lexical == root or root in lexical.parents else ""
            yield self.diagnostic(
                reference_span(context, reference),
                f"{named} resolves outside the workspace root{how}; keep skills, specs and artifacts inside the workspace",
            )
