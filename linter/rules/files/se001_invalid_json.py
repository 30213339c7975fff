"""SE001 invalid-json."""

from __future__ import annotations

from ...diagnostics import Severity
from ...textfile import Span
from ..base import Rule, Scope


class InvalidJson(Rule):
    """## What it does
    Reports a probe.json that does not parse as JSON, at the position of the
    parse error.

    ## Why is this bad?
    Nothing else about the probe can be checked or run: its step heading,
    defect count and discriminator are all unknown. The seed's rule 2 — "A
    drifted count makes every band assertion meaningless and nothing will
    catch it" — holds doubly for a count that cannot even be read.

    ## Example
    ```json
    {
      "id": "euphemized-coverage",
      "tier": 2,
    }
    ```
    The trailing comma makes the file invalid JSON.

    ## Fix
    Correct the syntax at the reported position (trailing commas, missing
    quotes or commas, comments are not JSON).
    """

    code = "SE001"
    name = "invalid-json"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("files", "json")

    def check(self, context):
        probe = context.probe
        if probe is None or probe.syntax_error is None:
            return
        error = probe.syntax_error
        line = error.position.line
        column = error.position.column
        yield self.diagnostic(
            Span.at(context.json_path, line, column, line, column + 1),
            f"probe.json is not valid JSON: {error.message} (line {line}, column {column})",
        )
