"""SE710 unknown-front-matter-key."""

from __future__ import annotations

from ...diagnostics import Fix, Severity, TextEdit
from ..base import Rule, Scope
from ._parse import SPEC_KEYS, front_matter_of, usable


class UnknownFrontMatterKey(Rule):
    """## What it does
    Reports a top-level front-matter key that the Agent Skills specification
    does not define (`name`, `description`, `license`, `allowed-tools`,
    `metadata`, `compatibility`) and that the workspace does not allow in
    skill-eval.toml:
    ```toml
    [frontmatter]
    allowed-keys = ["argument-hint"]
    ```
    A close known key is suggested.

    ## Why is this bad?
    An unknown key is most often a misspelt known one (`descripton`), which
    leaves the real key missing; otherwise it is tool-specific and other
    agents ignore it, so the skill behaves differently per agent. Either way
    the treatment arm may not get the discipline the probe measures, and the
    seed's "control misses, treatment catches" window says nothing.

    ## Example
    ```yaml
    name: verify-closeout
    descripton: Use when closing out a merged change.
    ```

    ## Fix
    Correct the spelling, move tool-specific data under `metadata:`, or list
    the key in `[frontmatter] allowed-keys`.
    """

    code = "SE710"
    name = "unknown-front-matter-key"
    severity = Severity.WARNING
    scope = Scope.SKILL
    tags = ("frontmatter",)

    def check(self, context):
        parsed = front_matter_of(context)
        if not usable(parsed):
            return
        allowed = (*SPEC_KEYS, *context.config.frontmatter_allowed_keys)
        for entry in parsed.entries:
            if entry.key in allowed:
                continue
            span = parsed.key_span(context.path, entry)
            import difflib  # only when a suggestion is made

            close = difflib.get_close_matches(entry.key, SPEC_KEYS, n=1, cutoff=0.75)
            fixes = []
            hint = ""
            if close and parsed.get(close[0]) is None:
                hint = f"; did you mean `{close[0]}`?"
                fixes.append(Fix(f"Rename the key to `{close[0]}`", (TextEdit(span, close[0]),)))
            yield self.diagnostic(
                span,
                f"unknown front-matter key `{entry.key}`: the Agent Skills specification defines "
                f"{', '.join(SPEC_KEYS)}{hint}",
                fixes=fixes,
            )
