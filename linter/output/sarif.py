"""``--output-format sarif``: SARIF 2.1.0, built with Microsoft's ``sarif-om`` and serialized
with ``jschema-to-python`` (as cfn-lint does)."""

from __future__ import annotations

import os
from pathlib import Path, PurePath
from typing import Sequence
from urllib.parse import quote

from ..diagnostics import Diagnostic, Severity
from . import UsageError, display_path, encodable_json

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


INSTALL_LINE = "pip install 'sarif-om>=1.0.4' 'jschema-to-python>=1.2.3'"
"""What to run when the SARIF libraries are missing (pyproject's dependencies)."""


def artifact_uri(path: Path) -> str:
    """The ``artifactLocation.uri`` of ``path`` (SARIF 2.1.0 §3.10.2): :func:`~.display_path`'s
    path percent-encoded as a relative reference, or a ``file:`` URI when absolute."""
    text = display_path(path)
    if os.path.isabs(text):
        return Path(text).as_uri()
    return quote(os.fsencode(PurePath(text).as_posix()), safe="/")


def render(diagnostics: Sequence[Diagnostic]) -> str:
    """The SARIF log of ``diagnostics``, with every rule's description."""
    try:
        import sarif_om as om
        from jschema_to_python.to_json import to_json
    except ImportError as error:
        raise UsageError(
            f"--output-format sarif needs sarif-om and jschema-to-python ({error.name or error} cannot be "
            f"imported): {INSTALL_LINE}"
        ) from None
    from skill_eval import __version__

    from ..rules import REGISTRY

    rules = [
        om.ReportingDescriptor(
            id=rule.code, name=rule.name, help_uri=rule.doc_url(), properties={"tags": list(rule.tags)},
            short_description=om.MultiformatMessageString(text=rule.summary() or rule.name),
            full_description=om.MultiformatMessageString(text=rule.doc_sections().get("What it does", rule.name)),
            help=om.MultiformatMessageString(text=rule.documentation(), markdown=rule.documentation()),
            default_configuration=om.ReportingConfiguration(level=_LEVEL[rule.severity]),
        )
        for rule in REGISTRY
    ]
    index = {rule.code: i for i, rule in enumerate(REGISTRY)}

    def location(span, message=None):
        region = om.Region(start_line=span.start.line, start_column=span.start.column, end_line=span.end.line,
                           end_column=span.end.column)
        return om.Location(
            physical_location=om.PhysicalLocation(
                artifact_location=om.ArtifactLocation(uri=artifact_uri(span.path)), region=region),
            message=om.Message(text=message) if message else None,
        )

    results = [om.Result(rule_id=d.code, rule_index=index.get(d.code, -1), level=_LEVEL[d.severity],
                         message=om.Message(text=d.message), locations=[location(d.span)],
                         related_locations=[location(r.span, r.message) for r in d.related] or None)
               for d in diagnostics]
    driver = om.ToolComponent(name="skill-eval", version=__version__,
                              information_uri="https://github.com/skill-eval/skill-eval", rules=rules)
    run = om.Run(tool=om.Tool(driver=driver), results=results)
    return encodable_json(to_json(om.SarifLog(version="2.1.0", schema_uri=SARIF_SCHEMA, runs=[run])))
