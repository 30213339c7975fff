"""The base class of every rule and the contexts rules read.

A rule is a class in a module of its own, named after the rule (ruff's
layout). Its metadata is data (``code``, ``name``, ``severity``, ``tags``,
``scope``) and its docstring, with the sections *What it does*, *Why is this
bad?*, *Example* and *Fix*, is the single source of its documentation: the
``skill-eval-lint rule CODE`` text, the editor's hover and ``docs/rules/``.
"""

from __future__ import annotations

import enum
import re
from typing import Any, ClassVar, Iterable

from ..diagnostics import Diagnostic, Fix, Related, Severity
from ..textfile import Span

class Scope(str, enum.Enum):
    """What a rule's ``check`` receives."""

    PROBE = "probe"
    """one :class:`~skill_eval.linter.context.ProbeContext` per probe"""
    SKILL = "skill"
    """one :class:`~skill_eval.linter.context.SkillContext` per SKILL.md"""
    OUTPUT_SPEC = "output_spec"
    """one :class:`~skill_eval.linter.context.OutputSpecContext` per output-spec.md"""
    WORKSPACE = "workspace"
    """one :class:`~skill_eval.linter.context.WorkspaceContext` for all probes at once"""


DOC_SECTIONS = ("What it does", "Why is this bad?", "Example", "Fix")


class Rule:
    """Base class; subclasses set the metadata and implement :meth:`check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    severity: ClassVar[Severity]
    scope: ClassVar[Scope | tuple[Scope, ...]]
    """One scope, or several: ``check`` is then called with each kind of
    context (dispatch on ``isinstance``)."""
    tags: ClassVar[tuple[str, ...]] = ()
    uses_probe_facts: ClassVar[bool] = False
    """A workspace-wide rule that compares probes only through
    :meth:`probe_facts` (read with ``WorkspaceContext.probe_facts``): the
    parallel CLI computes the facts in the workers that lint the probes, and
    runs the rule over them in the main process, which then never loads the
    probes itself."""

    @classmethod
    def scopes(cls) -> tuple[Scope, ...]:
        return cls.scope if isinstance(cls.scope, tuple) else (cls.scope,)

    def check(self, context) -> Iterable[Diagnostic]:  # pragma: no cover - abstract
        raise NotImplementedError

    def prepare(self, session) -> None:
        """For a workspace-wide rule: read ahead, into ``session``'s caches,
        what it reads of the workspace besides the probes (the eval runs'
        records). The parallel CLI calls this while its workers lint the
        probes; by default there is nothing to read."""

    def absorb_facts(self, pairs: list[tuple[Any, Any]], expected: int, linted: int) -> None:
        """For a rule that :attr:`uses_probe_facts`: digest a batch of
        ``(probe.json path, facts)`` ahead of :meth:`check` (the parallel CLI
        passes each worker's batch as it arrives, ``expected`` being the number
        of probes in all, ``linted`` how many of them are linted);
        :meth:`check` still receives every fact. By default there is nothing
        to digest."""

    def probe_facts(self, probe) -> Any:
        """For a rule that :attr:`uses_probe_facts`: what it compares of one
        probe (a ``ProbeContext``), as a small picklable value, or ``None``
        when the probe has nothing to compare."""
        raise NotImplementedError(f"{type(self).__name__} sets uses_probe_facts but does not define probe_facts")  # pragma: no cover

    def diagnostic(
        self,
        span: Span,
        message: str,
        *,
        related: Iterable[Related] = (),
        fixes: Iterable[Fix] = (),
        probe=None,
        severity: Severity | None = None,
    ) -> Diagnostic:
        """Build a diagnostic of this rule."""
        return Diagnostic(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            span=span,
            related=tuple(related),
            fixes=tuple(fixes),
            probe=probe,
        )

    @classmethod
    def documentation(cls) -> str:
        """The rule's docstring, dedented: its one documentation source.
        (:mod:`inspect` is imported here, not at start-up: ~10 ms with the
        modules it imports, for the docs and hovers only.)"""
        import inspect

        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def summary(cls) -> str:
        """The first sentence of *What it does*."""
        section = cls.doc_sections().get("What it does", "")
        first = re.split(r"(?<=\.)\s", " ".join(section.split()), maxsplit=1)[0]
        return first

    @classmethod
    def doc_sections(cls) -> dict[str, str]:
        """The docstring split at its ``## Section`` headings."""
        sections: dict[str, str] = {}
        current = None
        for line in cls.documentation().splitlines():
            match = re.match(r"^##\s+(.*?)\s*$", line)
            if match:
                current = match.group(1)
                sections[current] = ""
            elif current is not None:
                sections[current] += line + "\n"
        return {key: value.strip() for key, value in sections.items()}

    @classmethod
    def doc_url(cls) -> str:
        from .. import DOCS_BASE_URL

        return f"{DOCS_BASE_URL}/{cls.code}.md"
