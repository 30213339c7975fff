"""SE707 name-folder-mismatch."""

from __future__ import annotations

import json
import unicodedata

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._parse import key_of
from .se706_invalid_skill_name import name_problem


class NameFolderMismatch(Rule):
    """## What it does
    Reports a front-matter `name` that differs from the name of the folder
    holding SKILL.md (compared in Unicode NFKC). A `name` that is itself
    invalid is left to SE706.

    ## Why is this bad?
    The Agent Skills specification requires the `name` to match the skill's
    folder; tools install, list and load skills by folder, so a mismatch
    loads another skill, or none, under the probe's name. The probe then
    measures a discipline other than the one its `step_heading` anchors to,
    and the seed's question "can the defect be derived from the discipline
    alone?" is asked of the wrong discipline.

    ## Example
    `skills/verify-closeout/SKILL.md` says:
    ```yaml
    name: closeout-verifier
    ```

    ## Fix
    Make the two equal: change `name` (the quick fix sets it to the folder's
    name) or rename the folder.
    """

    code = "SE707"
    name = "name-folder-mismatch"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "name")
        value = entry.string if entry is not None else None
        if value is None or name_problem(value) is not None:
            return
        folder = context.path.parent.name
        if unicodedata.normalize("NFKC", value) == unicodedata.normalize("NFKC", folder):
            return
        span = parsed.value_span(context.path, entry)
        fixes = []
        if name_problem(folder) is None:
            fixes.append(Fix(f"Change name to {folder!r}", (TextEdit(span, json.dumps(folder)),)))
        yield self.diagnostic(
            span,
            f"`name` {value!r} differs from the skill's folder {folder!r}: the Agent Skills specification requires them equal",
            fixes=fixes,
        )
