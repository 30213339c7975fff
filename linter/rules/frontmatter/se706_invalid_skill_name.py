"""SE706 invalid-skill-name."""

from __future__ import annotations

import json
import re
import unicodedata

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._parse import key_of

MAX_NAME = 64


def name_problem(name: str) -> str | None:
    """Why ``name`` breaks the Agent Skills rules, or ``None`` when it is valid:
    1-64 characters, lowercase letters, digits and hyphens only, no leading,
    trailing or doubled hyphen. Letters are Unicode lowercase letters (the
    specification's "unicode lowercase alphanumeric"), compared in NFKC."""
    name = unicodedata.normalize("NFKC", name)
    if not name:
        return "is empty"
    if len(name) > MAX_NAME:
        return f"is {len(name)} characters long, over the limit of {MAX_NAME}"
    bad = [c for c in name if not (c == "-" or c.isdigit() or (c.isalpha() and c == c.lower()))]
    if bad:
        shown = ", ".join(repr(c) for c in dict.fromkeys(bad))
        return f"contains {shown}: only lowercase letters, digits and hyphens are allowed"
    if name.startswith("-") or name.endswith("-"):
        return "starts or ends with a hyphen"
    if "--" in name:
        return "contains a doubled hyphen `--`"
    return None


def slug(name: str) -> str:
    """A valid name close to ``name`` (lowercased, other characters to hyphens)."""
    lowered = unicodedata.normalize("NFKC", name).lower()
    cleaned = re.sub(r"[^\w-]|_", "-", lowered)
    cleaned = re.sub(r"-{2,}", "-", cleaned).strip("-")
    return cleaned[:MAX_NAME].rstrip("-")


class InvalidSkillName(Rule):
    """## What it does
    Reports a front-matter `name` that breaks the Agent Skills
    specification: it must be a string of 1-64 characters made of lowercase
    letters, digits and hyphens, and must not start or end with a hyphen or
    contain `--`.

    ## Why is this bad?
    Agents and skill registries reject or rename a skill whose name breaks
    these rules, so the skill may never load: the treatment arm of every
    probe then runs without the discipline and the seed's window — "control
    misses, treatment catches" — cannot open.

    ## Example
    ```yaml
    name: Verify_Closeout
    ```

    ## Fix
    Use lowercase words joined by single hyphens, the same as the skill's
    folder: `name: verify-closeout` (the quick fix offers it).
    """

    code = "SE706"
    name = "invalid-skill-name"
    severity = Severity.ERROR
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed, entry = key_of(context, "name")
        if entry is None:
            return  # no usable front matter (SE701-SE704) or no `name` (SE705 if required)
        span = parsed.value_span(context.path, entry)
        value = entry.string
        if value is None:
            yield self.diagnostic(span, f"`name` is {entry.kind}; it must be a string such as `verify-closeout`")
            return
        problem = name_problem(value)
        if problem is None:
            return
        fixes = []
        candidate = slug(value)
        if candidate and name_problem(candidate) is None and candidate != value:
            fixes.append(Fix(f"Change name to {candidate!r}", (TextEdit(span, json.dumps(candidate)),)))
        yield self.diagnostic(span, f"`name` {value!r} {problem}", fixes=fixes)
