"""SE804 suite-skill-mismatch."""

from __future__ import annotations

import json
import unicodedata

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._common import readable_suite


class SuiteSkillMismatch(Rule):
    """## What it does
    Reports a suite whose skill cannot be told or is another than it names.
    A suite inside a skill's folder (`<skill>/evals/evals.json`) is of that
    skill: its `skill_name` must equal the skill's front-matter `name` (or,
    without one, its folder's name). A suite kept outside any skill's folder
    (`evals/<skill>/evals.json`) names its skill by `skill_name` (a trigger
    set by its folder or `<skill>.prompts.csv`), resolved as the front
    matter's `name` is: the one SKILL.md of the workspace whose folder or
    `name` is that name. Reported at `skill_name`.

    ## Why is this bad?
    skill-creator's `skill_name` is "Name matching the skill's frontmatter".
    A suite that names another skill, or one that does not exist, is run
    against the wrong discipline (or none): the treatment arm installs a
    skill the evals were not written for, and its pass rates measure
    nothing the author meant.

    ## Example
    `skills/uipath-maestro-case/references/evals/evals.json`:
    ```json
    {"skill_name": "case-management", "evals": [...]}
    ```
    while the skill's front matter says `name: uipath-maestro-case`.

    ## Fix
    Set `skill_name` to the skill's front-matter `name`, or move the suite
    into (or next to) the skill it tests.
    """

    code = "SE804"
    name = "suite-skill-mismatch"
    severity = Severity.ERROR
    scope = Scope.SUITE
    tags = ("suites",)

    def check(self, context):
        suite = readable_suite(context)
        if suite is None:
            return
        span = suite.skill_name_span or suite.first_line_span()
        skill = context.skill_path
        if skill is None:
            wanted = context.wanted_name
            if wanted is None:
                yield self.diagnostic(span, f"{context.path.name} is in no skill's folder and names no skill: "
                                      "set `skill_name` to the front-matter name of the skill it tests")
                return
            found = context.session.query("skill-named", wanted)
            if len(found) > 1:
                yield self.diagnostic(span, f"{len(found)} skills of the workspace are named {wanted!r}: "
                                      "the suite's skill is ambiguous; move the suite into its skill's folder")
            else:
                yield self.diagnostic(span, f"no skill of the workspace is named {wanted!r} (no SKILL.md whose folder "
                                      "or front-matter `name` is that): fix `skill_name` or add the skill")
            return
        if not context.inside_skill or suite.skill_name is None:
            return
        name = context.skill_field("name") or skill.parent.name
        if unicodedata.normalize("NFKC", suite.skill_name) != unicodedata.normalize("NFKC", name):
            edit = suite.json.positions().edit_span("/skill_name") if suite.json is not None else None
            fixes = (Fix(f"Change skill_name to {name!r}", (TextEdit(edit, json.dumps(name)),)),) if edit else ()
            yield self.diagnostic(span, f"`skill_name` is {suite.skill_name!r}, but the skill this suite is in is named "
                                  f"{name!r}: skill-creator's `skill_name` matches the skill's front-matter name",
                                  fixes=fixes)
