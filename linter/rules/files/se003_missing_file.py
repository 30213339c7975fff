"""SE003 missing-file."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._references import REFERENCES, reference_span, relative_name


class MissingFile(Rule):
    """## What it does
    Reports a probe whose artifact (`question`, default `question.md` beside
    probe.json), skill (`skill`, default the nearest `SKILL.md` above the probe)
    or output spec (`output_spec`, default the nearest `output-spec.md` above)
    does not exist. The diagnostic points at the path in probe.json when the key
    is set, otherwise at `step_heading` (for the skill) or probe.json's first
    line.

    ## Why is this bad?
    A probe is "a realistic work artifact that the skill's discipline catches and
    a skim does not", graded on "whether the agent acted on it". Without the
    artifact there is nothing to hand the agent; without the skill there is no
    discipline to derive the defect from; without the output spec nothing can
    grade the act. The probe cannot run, and every rule that reads those files
    stays silent.

    ## Example
    ```json
    {"id": "euphemized-coverage", "tier": 2, "question": "closeout.md", "step_heading": "Verify"}
    ```
    with no `closeout.md` in the probe's folder.

    ## Fix
    Create the file, or correct the path (relative to the probe's folder). Drop
    `skill` / `output_spec` to use the nearest `SKILL.md` / `output-spec.md`
    above the probe.
    """

    code = "SE003"
    name = "missing-file"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("files",)

    def check(self, context):
        for reference in REFERENCES:
            problem = reference.problem(context)
            if problem is None or problem.kind != "missing":
                continue
            value = context.get(reference.key, str)
            if value is not None and value.strip():
                message = (
                    f"`{reference.key}` names {value!r}, which does not exist "
                    f"({relative_name(context, problem.path)}); create it or fix the path"
                )
            elif reference.default_name is not None:
                message = (
                    f"the {reference.role} {reference.default_name} does not exist in this probe's folder; "
                    f"add it or set `{reference.key}` in probe.json"
                )
            else:
                message = (
                    f"no {problem.path.name} found in this probe's folder or above it (up to the workspace root); "
                    f"add one or set `{reference.key}` in probe.json"
                )
            yield self.diagnostic(reference_span(context, reference), message)
