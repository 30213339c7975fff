"""SE502 frozen-case-edited."""

from __future__ import annotations

from ...diagnostics import Fix, Related, Severity, TextEdit
from ...run_records import sha256_bytes
from ...textfile import TextDocument
from ..base import Rule, Scope
from ._records import frozen_case, line_span_of


class FrozenCaseEdited(Rule):
    """## What it does
    Reports a probe version listed in `evals/frozen.json` whose probe.json or
    artifact no longer has the SHA-256 recorded when it was frozen
    (`skill-eval freeze`).

    ## Why is this bad?
    The seed: "Freeze the chosen development cases before any separately
    authorized comparison." A frozen case edited in place is no longer the case
    that was chosen, yet it keeps its id and version, so every result recorded
    against it silently changes meaning. The seed is explicit that a change is
    a new case: "A new development variant is a separate version, not
    permission to erase an unfavorable case."

    ## Example
    `frozen.json` lists `euphemized-coverage` version 1; afterwards the
    third criterion's evidence line in question.md is reworded, and probe.json
    still says `"version": 1`.

    ## Fix
    Restore the frozen files from version control; or, to keep the new text,
    make it a new variant: bump `"version"` in probe.json (the quick fix) and
    freeze that version when it is chosen.
    """

    code = "SE502"
    name = "frozen-case-edited"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("calibration",)

    def check(self, context):
        found = frozen_case(context)
        if found is None:
            return
        frozen_file, raw, case = found
        changed = []
        session = context.session
        if isinstance(context.document, TextDocument) and _sha256(session, context.json_path) != case.get("probe_sha256"):
            changed.append(context.json_path.name)
        artifact = context.artifact_document
        if isinstance(artifact, TextDocument) and _sha256(session, artifact.path) != case.get("artifact_sha256"):
            changed.append(artifact.path.name)
        if not changed:
            return
        has_version = context.data is not None and "version" in context.data and context.get("version", int) is not None
        span = context.value_span("version") if has_version else context.value_span("id")
        fixes = []
        edit = context.edit_span("version") if has_version else None
        if edit is not None:
            fixes.append(Fix(f"Bump version to {context.version + 1} (a new variant is a new version)",
                             (TextEdit(edit, str(context.version + 1)),)))
        when = f" on {case['frozen_at'][:10]}" if isinstance(case.get("frozen_at"), str) else ""
        yield self.diagnostic(
            span,
            f"{context.probe_id!r} v{context.version} was frozen{when} but its {' and '.join(changed)} changed since; "
            "restore the frozen files or bump \"version\" to make a new variant",
            related=[Related(line_span_of(frozen_file, raw, f'"{context.probe_id}"'), "frozen here")],
            fixes=fixes,
        )


def _sha256(session, path) -> str | None:
    """SHA-256 of the file's bytes as the session reads them (safely, and an
    unsaved buffer first), ``None`` when they cannot be read."""
    raw = session.read_raw(path)
    return None if raw is None else sha256_bytes(raw)
