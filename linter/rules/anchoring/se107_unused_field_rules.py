"""SE107 unused-field-rules."""

from __future__ import annotations

from ...diagnostics import Severity
from ...markdown import has_whole_word
from ..base import Rule, Scope
from ._common import heading_span, quoted


class UnusedFieldRules(Rule):
    """## What it does
    On output-spec.md: reports a field that no prose of the SKILL.md teaching
    the spec mentions at all — neither its name, one of its `Aliases:` (both
    in any case) nor one of its `Values:` (case-sensitive) occurs as a whole
    word in the skill's paragraphs,
    list items, headings, tables or block quotes (code blocks and HTML
    comments do not count). The skills teaching a spec are the SKILL.md
    nearest above it and any SKILL.md that a probe using the spec names.

    ## Why is this bad?
    A probe that grades such a field fails the seed's check — "can the defect
    be derived from the discipline alone? If catching it needs domain trivia
    the skill never taught, it is below the window" — whichever step it
    anchors to: the discipline has no rule for it anywhere. (SE104 reports the
    probe; this reports the spec, before any probe grades the field.)

    ## Example
    output-spec.md defines ``## `risk` `` with ``Values: `low`, `high` ``,
    and no sentence of SKILL.md says `risk`, `low` or `high`.

    ## Fix
    Teach the field in SKILL.md, drop it from the spec, or — for a field kept
    on purpose for humans — suppress it with
    `<!-- skill-eval: disable SE107 -->` on the line before its heading.
    """

    code = "SE107"
    name = "unused-field-rules"
    severity = Severity.INFO
    scope = Scope.OUTPUT_SPEC
    tags = ("anchoring",)

    def check(self, context):
        spec = context.spec
        skills = context.skills
        if spec is None or not skills:
            return
        proses = ["\n".join(b.text for b in skill.blocks if b.kind == "prose") for skill in skills]
        taught_by = "the SKILL.md teaching it" if len(skills) == 1 else f"the {len(skills)} SKILL.md files teaching it"
        for field in spec.fields.values():
            words = list(dict.fromkeys((*field.names, *field.values)))
            if any(has_whole_word(prose, name, ignore_case=True) for prose in proses for name in field.names):
                continue
            if any(has_whole_word(prose, value) for prose in proses for value in field.values):
                continue
            yield self.diagnostic(
                heading_span(context.path, field.heading),
                f"field {field.name!r} has no rule in {taught_by}: none of {quoted(words)} occurs in its prose",
            )
