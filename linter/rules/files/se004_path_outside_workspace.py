"""SE004 path-outside-workspace."""

from __future__ import annotations

import os
from pathlib import Path

from ...context import FileProblem, OutputSpecContext, ProbeContext, SkillContext, WorkspaceContext
from ...diagnostics import Severity
from ...textfile import Span
from ..base import Rule, Scope
from ..calibration._records import frozen_problem, runs_file_problems
from ._references import REFERENCES, reference_span


class PathOutsideWorkspace(Rule):
    """## What it does
    Reports a probe whose artifact, skill or output spec resolves outside the
    workspace root, either through `..` segments, an absolute path, or a
    symbolic link pointing out of the workspace (links are resolved first);
    and any file the folder walk found (probe.json, SKILL.md, output-spec.md,
    a runs file under `evals/runs/`, `evals/frozen.json`) that is a symbolic
    link out of the workspace, and an `evals` or `evals/runs` folder that is
    one (its run records would count against the budget unseen). Such a file
    or folder is never read.

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
    scope = (Scope.PROBE, Scope.SKILL, Scope.OUTPUT_SPEC, Scope.WORKSPACE)
    tags = ("files",)

    def check(self, context):
        if isinstance(context, ProbeContext):
            yield from self._check_probe(context)
        elif isinstance(context, (SkillContext, OutputSpecContext)):
            if isinstance(context.document, FileProblem) and context.document.kind == "outside":
                yield self._walked(context.document)
        elif isinstance(context, WorkspaceContext):
            for problem in runs_file_problems(context.session):
                if problem.kind == "outside":
                    yield self._walked(problem)
            for link in context.session.query("runs-links-out"):
                yield self._runs_link(Path(link))

    def _walked(self, problem: FileProblem):
        """The diagnostic of a file found by the walk (or the suite's
        frozen.json) that links out of the workspace, at the file itself."""
        return self.diagnostic(
            Span.file_start(problem.path),
            f"{problem.path.name} is a symbolic link to a file outside the workspace root, so it was not read; "
            "replace the link with the file itself",
        )

    def _runs_link(self, link: Path):
        """The diagnostic of an ``evals``/``evals/runs`` folder or a runs
        file that is a symbolic link out of the workspace, at the link."""
        what = "a runs file" if link.name.endswith(".jsonl") else f"the {link.name} folder"
        return self.diagnostic(
            Span.file_start(link),
            f"{link.name} ({what} of run records) is a symbolic link out of the workspace root, so the records "
            "behind it were not read and count for nothing here; replace the link with the folder or file itself",
        )

    def _check_probe(self, context: ProbeContext):
        if isinstance(context.document, FileProblem):
            if context.document.kind == "outside":
                yield self._walked(context.document)
            return
        frozen = frozen_problem(context)
        if frozen is not None and frozen.kind == "outside":
            yield self._walked(frozen)
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
