"""What a rule reports: diagnostics, related locations and fixes, as frozen ``msgspec``
records that the one codec (:data:`~skill_eval.linter.cache.CODEC`) carries and caches."""

from __future__ import annotations

import enum
from pathlib import Path

import msgspec

from .textfile import Position, Span


class Severity(str, enum.Enum):
    """A diagnostic's severity; rules.md's ``sev`` column."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Record(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """A frozen record of the codec (no cycle, so untracked by the garbage collector), with
    the ``_replace`` of the named tuples these were."""

    def _replace(self, **changes):
        return msgspec.structs.replace(self, **changes)


class TextEdit(Record):
    """Replace ``span`` (1-based, end exclusive) with ``new_text``."""

    span: Span
    new_text: str


class Fix(Record):
    """A change that resolves a diagnostic: ``--fix`` and "fix all" apply ``safe`` ones only."""

    title: str
    edits: tuple[TextEdit, ...]
    safe: bool = False


class Related(Record):
    """Another location that helps explain a diagnostic."""

    span: Span
    message: str


class Diagnostic(Record):
    """One finding of one rule in one file."""

    code: str
    name: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()
    probe: Path | None = None
    """The probe folder the finding belongs to, if any (for per-probe suppression)."""

    @property
    def path(self) -> Path:
        return self.span.path

    @property
    def start(self) -> Position:
        return self.span.start

    @property
    def end(self) -> Position:
        return self.span.end

    def sort_key(self) -> tuple:
        return (str(self.path), self.start.line, self.start.column, self.code, self.message)
