"""The files a probe references, shared by SE003, SE004 and SE005."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ...context import FileProblem
from ...textfile import Span, TextDocument

if TYPE_CHECKING:  # pragma: no cover
    from ...context import ProbeContext


class Reference(NamedTuple):
    """One file a probe references: its probe.json key and how it is found."""

    key: str
    role: str
    default_name: str | None
    """The file used when the key is absent (``None``: found by walking up)."""
    attribute: str
    """The :class:`ProbeContext` attribute holding the loaded document or problem."""

    def problem(self, context: "ProbeContext") -> FileProblem | None:
        """Why the reference cannot be used, or ``None`` when it can (or is unset)."""
        loaded = getattr(context, self.attribute)
        return loaded if isinstance(loaded, FileProblem) else None


REFERENCES = (
    Reference("question", "artifact", "question.md", "artifact_document"),
    Reference("skill", "skill", None, "skill_document"),
    Reference("output_spec", "output spec", None, "output_spec_document"),
)


def first_line_span(context: "ProbeContext") -> Span:
    """probe.json's first line (a whole-file anchor)."""
    document = context.document
    first = document.lines[0] if isinstance(document, TextDocument) else ""
    return Span.at(context.json_path, 1, 1, 1, max(len(first), 1) + 1)


def reference_span(context: "ProbeContext", reference: Reference) -> Span:
    """Where a problem with ``reference`` is reported in probe.json: the key's
    value when it is set, else ``step_heading`` for the skill, else the first line."""
    value = context.get(reference.key, str)
    if value is not None and value.strip():
        return context.value_span(reference.key)
    if reference.key == "skill" and context.get("step_heading", str) is not None:
        return context.value_span("step_heading")
    return first_line_span(context)


def relative_name(context: "ProbeContext", path: Path) -> str:
    """``path`` relative to the workspace root (for messages that do not depend
    on where the workspace is checked out)."""
    root = context.session.root
    try:
        return Path(os.path.relpath(path, root)).as_posix()
    except ValueError:
        return path.as_posix()
