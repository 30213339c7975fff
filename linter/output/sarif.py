"""``--output-format sarif``: SARIF 2.1.0 for GitHub code scanning and other viewers.

Built with Microsoft's ``sarif-om`` object model and serialized with
``jschema-to-python`` (the pair cfn-lint uses), rather than hand-written
dictionaries; both are dependencies of the base install, imported only when
this format is chosen. Where they are missing (an install without
dependencies), :class:`SarifUnavailable` says what to install.
"""

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


class SarifUnavailable(UsageError):
    """The SARIF libraries cannot be imported; the message holds the install line."""


def artifact_uri(path: Path, base: Path | None = None) -> str:
    """The ``artifactLocation.uri`` of ``path``: a URI reference (SARIF 2.1.0
    §3.10.2, RFC 3986) that reads back as :func:`~.display_path`'s path.

    A relative path (below ``base``, or climbing out of it with ``..``) stays
    a relative reference; an absolute one (another drive than ``base``'s)
    becomes a ``file:`` URI (:meth:`pathlib.PurePath.as_uri`). Every byte of
    the path (UTF-8 on most systems; a name's undecodable bytes as they are
    on disk) but ``/`` and RFC 3986's unreserved characters is percent-encoded,
    as ``as_uri`` does: ``#``, ``?``, ``%``, spaces, newlines and non-ASCII
    letters cannot end the path or change it, and a ``:`` in the first
    segment cannot read as a scheme."""
    text = display_path(path, base)
    if os.path.isabs(text):
        return Path(text).as_uri()
    return quote(os.fsencode(PurePath(text).as_posix()), safe="/")


def render(diagnostics: Sequence[Diagnostic], base: Path | None = None) -> str:
    try:
        import sarif_om as om
        from jschema_to_python.to_json import to_json
    except ImportError as error:
        raise SarifUnavailable(
            f"--output-format sarif needs sarif-om and jschema-to-python ({error.name or error} cannot be "
            f"imported): {INSTALL_LINE}"
        ) from None
    from skill_eval import __version__

    from ..rules import REGISTRY

    rules = [
        om.ReportingDescriptor(
            id=rule.code,
            name=rule.name,
            short_description=om.MultiformatMessageString(text=rule.summary() or rule.name),
            full_description=om.MultiformatMessageString(text=rule.doc_sections().get("What it does", rule.name)),
            help=om.MultiformatMessageString(text=rule.documentation(), markdown=rule.documentation()),
            help_uri=rule.doc_url(),
            default_configuration=om.ReportingConfiguration(level=_LEVEL[rule.severity]),
            properties={"tags": list(rule.tags)},
        )
        for rule in REGISTRY
    ]
    index = {rule.code: i for i, rule in enumerate(REGISTRY)}

    def location(span, message=None):
        return om.Location(
            physical_location=om.PhysicalLocation(
                artifact_location=om.ArtifactLocation(uri=artifact_uri(span.path, base)),
                region=om.Region(
                    start_line=span.start.line,
                    start_column=span.start.column,
                    end_line=span.end.line,
                    end_column=span.end.column,
                ),
            ),
            message=om.Message(text=message) if message else None,
        )

    results = [
        om.Result(
            rule_id=d.code,
            rule_index=index.get(d.code, -1),
            level=_LEVEL[d.severity],
            message=om.Message(text=d.message),
            locations=[location(d.span)],
            related_locations=[location(r.span, r.message) for r in d.related] or None,
        )
        for d in diagnostics
    ]
    log = om.SarifLog(
        version="2.1.0",
        schema_uri=SARIF_SCHEMA,
        runs=[
            om.Run(
                tool=om.Tool(
                    driver=om.ToolComponent(
                        name="skill-eval",
                        version=__version__,
                        information_uri="https://github.com/skill-eval/skill-eval",
                        rules=rules,
                    )
                ),
                results=results,
            )
        ],
    )
    return encodable_json(to_json(log))
