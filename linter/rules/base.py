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
from ..textfile import Span, printable

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
    SUITE = "suite"
    """one :class:`~skill_eval.linter.suites.SuiteContext` per skill-creator
    suite (``evals.json``, a trigger set)"""


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
    facts_type: ClassVar[Any] = Any
    """The type of what :meth:`probe_facts` returns (``None`` included): the
    codec that carries facts from workers and keeps them in the cache
    decodes them as this type (``Any``: as plain lists, dicts and scalars)."""

    @classmethod
    def scopes(cls) -> tuple[Scope, ...]:
        return cls.scope if isinstance(cls.scope, tuple) else (cls.scope,)

    def check(self, context) -> Iterable[Diagnostic]:  # pragma: no cover - abstract
        """The findings of this rule in ``context`` (its type follows :attr:`scope`).
        A workspace-wide check reads other probes through
        ``context.probe_facts(self)`` (see :meth:`probe_facts`). A rule keeps
        nothing between calls: an instance may check any number of contexts,
        of any number of runs, in any order."""
        raise NotImplementedError

    def probe_facts(self, probe) -> Any:
        """For a workspace-wide rule that compares probes (the map step, as
        pylint's ``get_map_data``): what it compares of one probe (a
        ``ProbeContext``), as a small value of plain data (it travels between
        processes and into the cache), or ``None`` when the probe has nothing
        to compare. It may read the probe's own files (probe.json and the
        files it references), nothing else. Its ``check`` (the reduce step)
        gets every probe's facts from ``WorkspaceContext.probe_facts(self)``,
        computed wherever each probe was linted."""
        return None

    @classmethod
    def compares_probes(cls) -> bool:
        """Whether this rule defines :meth:`probe_facts`."""
        return cls.probe_facts is not Rule.probe_facts

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
        """Build a diagnostic of this rule. Its messages are made
        :func:`~skill_eval.linter.textfile.printable`: a name quoted from a
        path or a probe.json can hold a lone surrogate, which no report,
        JSON or LSP message can carry."""
        related = tuple(related)
        if not message.isascii() or any(not item.message.isascii() for item in related):
            message = printable(message)
            related = tuple(item._replace(message=printable(item.message)) for item in related)
        return Diagnostic(
            code=self.code,
            name=self.name,
            severity=severity or self.severity,
            message=message,
            span=span,
            related=related,
            fixes=tuple(fixes),
            probe=probe,
        )

    @classmethod
    def documentation(cls) -> str:
        """The rule's docstring, dedented: its one documentation source.
        (:mod:`inspect` is imported here, not at start-up: it and the modules
        it imports are slow to import, for the docs and hovers only;
        docs/performance.md.)"""
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
