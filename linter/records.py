"""The typed records of a unit's lint (:class:`UnitResult`, with a probe's
:class:`ProbeFacts`): what the one codec (:data:`~skill_eval.linter.cache.CODEC`)
carries from worker processes and keeps in the cache."""

from __future__ import annotations

from typing import Any, Optional, Union

from .diagnostics import Diagnostic, Record

Problem = tuple[str, str, str, str, int, int]
"""A file problem as a query's answer (``FileProblem.answer``)."""

Ref = Union[str, Problem, None]
"""Where a probe's reference leads: a path's text, a problem, or nothing named."""


class FactValues(dict):
    """Rule code -> that rule's :meth:`~skill_eval.linter.rules.base.Rule.probe_facts`:
    the codec decodes each value as its rule's
    :attr:`~skill_eval.linter.rules.base.Rule.facts_type`."""


class ProbeFacts(Record):
    """What the engine keeps of one probe (``compute_probe_facts``): the map
    step of the workspace-wide rules, and the language server's reverse index."""

    values: FactValues
    """Rule code -> the rule's :meth:`~skill_eval.linter.rules.base.Rule.probe_facts`
    (``None``: nothing to compare)."""
    refs: tuple[Ref, Ref, Ref]
    """Where the artifact, skill and output spec are (``LintSession.probe_refs``)."""
    disabled: frozenset[str]
    """The codes probe.json's ``x-skill-eval-disable`` turns off."""
    errors: dict[str, Diagnostic]
    """Rule code -> SE000 for probe.json when the rule's ``probe_facts`` crashed."""
    digest: bytes = b""
    """A digest of all the above (the cache keeps the workspace-wide rules'
    findings while every probe's stays the same)."""


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
    """When recorded for the cache: every query the unit asked, with its
    answer and (for a file's content) the file's ``stat`` signature."""
