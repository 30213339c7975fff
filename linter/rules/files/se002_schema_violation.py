"""SE002 schema-violation."""

from __future__ import annotations

from ...diagnostics import Severity
from ..base import Rule, Scope


class SchemaViolation(Rule):
    """## What it does
    Validates probe.json against the shipped JSON Schema (draft 2020-12) and
    reports each error at the offending key or value: wrong types, missing
    required keys (tier-2 probes need `kind`, `shapes`, `seeded_defects` and
    `defects`; band probes need `band`), unknown keys, malformed expectations
    (a `matches` pattern with lookaround or a backreference too: grading runs
    patterns in linear time, and cannot run those).

    ## Why is this bad?
    The rest of the rules, the language server and the eval runner read
    probe.json by this contract. A probe whose metadata is malformed cannot be
    graded: the seed's "Action graded" needs a discriminator that parses, and
    rule 2's exact `seeded_defects` needs to be an integer in the first place.

    ## Example
    ```json
    {"id": "Euphemized Coverage", "tier": "2", "step_heading": "Verify", "notes": "..."}
    ```
    The id has capitals and spaces, the tier is a string and `notes` is not a
    known key.

    ## Fix
    Follow the message: use the documented key and type. Keys of your own are
    allowed when they begin with `x-` (for example `x-notes`). Add
    `"$schema"` pointing at the shipped schema to get the same checks from your
    editor's JSON support.
    """

    code = "SE002"
    name = "schema-violation"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("files", "json")

    def check(self, context):
        probe = context.probe
        if probe is None or probe.syntax_error is not None:
            return
        problems = probe.schema_problems()
        positions = probe.positions() if problems else None
        for problem in problems:
            yield self.diagnostic(probe.problem_span(problem, positions), problem.message)
