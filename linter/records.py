"""The typed records of a unit's lint (:class:`UnitResult`, :class:`ProbeFacts`) that the
one codec (:data:`~skill_eval.linter.cache.CODEC`) carries and caches."""

from __future__ import annotations

from typing import Any, Optional, Union

from .diagnostics import Diagnostic, Record

Problem = tuple[str, str, str, str, int, int]
"""A file problem as a query's answer (``FileProblem.answer``)."""

Ref = Union[str, Problem, None]
"""Where a probe's reference leads: a path's text, a problem, or nothing named."""


class FactValues(dict):
    """Rule code -> that rule's ``probe_facts``, each decoded as its rule's ``facts_type``."""


class ProbeFacts(Record):
    """What the engine keeps of one probe: the workspace-wide rules' map step, and the server's reverse index."""

    values: FactValues
    """Rule code -> the rule's ``probe_facts`` (``None``: nothing to compare)."""
    refs: tuple[Ref, Ref, Ref]
    """Where the artifact, skill and output spec are (``LintSession.probe_refs``)."""
    disabled: frozenset[str]
    """The codes probe.json's ``x-skill-eval-disable`` turns off."""
    errors: dict[str, Diagnostic]
    """Rule code -> SE000 for probe.json when the rule's ``probe_facts`` crashed."""
    digest: bytes = b""
    """A digest of all the above (the cache keeps workspace-wide findings while every probe's stays)."""


Signature = tuple[int, int, int, int, int]
"""A file's ``stat`` signature (:meth:`~skill_eval.linter.reader.Reader.signature`)."""

Dependencies = dict[Any, Optional[Signature]]
"""``{(query, answer): stat signature or None}`` (``engine.dependencies``): a
query and its answer as one key, so that both decode as the tuples they were."""


class UnitResult(Record):
    """What linting one unit (a probe, a SKILL.md, ...) gives."""

    diagnostics: Optional[tuple[Diagnostic, ...]]
    """The unit's findings before filtering (``None`` for a facts-only unit)."""
    facts: Optional[ProbeFacts] = None
    """A probe's facts (``None`` for a SKILL.md or output-spec.md)."""
    deps: Optional[Dependencies] = None
    """For the cache: every query the unit asked, with its answer and (a file's content) the file's signature."""
