"""What one lint is: units of work, the workspace-wide rules over their facts,
then filtering (the steps: docs/architecture.md, "The flow of one lint").

:func:`lint_paths` is what the CLI calls: discovery, then :func:`lint_targets`
per workspace root. The language server calls :func:`lint_targets` with its
own session and :func:`lint_probe_chunks` for its start-up scan.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Config
from .diagnostics import Diagnostic
from .execution import run_in_chunks
from .records import Dependencies, ProbeFacts, UnitResult
from .reader import FileSystemReader, Reader
from .session import LintSession, session_query
from .textfile import TextDocument
from .workspace import (OUTPUT_SPEC_FILE, PROBE_FILE, SKILL_FILE, Exclusion, Targets, absolute, discover,
                        find_workspace_root, sorted_paths)

if TYPE_CHECKING:  # pragma: no cover
    from .cache import Cache
    from .rules import Rule
    from .rules.base import Scope


@dataclass
class LintResult:
    """Diagnostics of one run, sorted, the files it checked (their paths as
    strings: only how many is reported) and its sessions."""

    diagnostics: list[Diagnostic] = field(default_factory=list)
    checked: set[str] = field(default_factory=set)
    sessions: list[LintSession] = field(default_factory=list)


def enabled_rules(config: Config) -> list[Rule]:
    """Instances of the registered rules that ``config`` selects."""
    from .rules import REGISTRY

    return [rule() for rule in REGISTRY if config.is_enabled(rule.code)]


def fact_rules(rules: Iterable[Rule]) -> list[Rule]:
    """Of ``rules``, the workspace-wide ones that compare probes through facts."""
    from .rules.base import Scope

    return [rule for rule in rules if Scope.WORKSPACE in rule.scopes() and rule.compares_probes()]


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


PROBE, FACTS, SKILL, SPEC, WORKSPACE, SUITE = "probe", "facts", "skill", "spec", "workspace", "suite"
"""Kinds of unit: a probe linted (and its facts), a probe's facts alone, a
SKILL.md, an output-spec.md, the workspace-wide rules (cached only), a suite."""

Unit = tuple[str, Path]
"""``(kind, path)``: the probe.json, SKILL.md or output-spec.md of a unit."""


class Plan:
    """The enabled rules of a lint, by what they check: built once per run
    (and once per worker process) from the config and the scopes asked for."""

    def __init__(self, config: Config, scopes: frozenset[Scope] | None = None) -> None:
        from .rules.base import Scope

        self.scopes = frozenset(Scope) if scopes is None else scopes
        """The scopes whose checks run: with the config, what rebuilds this plan in a worker."""
        self.rules = enabled_rules(config)
        scope_of = {PROBE: Scope.PROBE, SKILL: Scope.SKILL, SPEC: Scope.OUTPUT_SPEC, SUITE: Scope.SUITE,
                    WORKSPACE: Scope.WORKSPACE}
        self.checks = {kind: [rule for rule in self.rules if scope in rule.scopes() and scope in self.scopes]
                       for kind, scope in scope_of.items()}
        """Kind of unit -> the rules that check it, in the order of a chunk's passes."""
        self.fact_rules = fact_rules(self.rules)
        """Every enabled rule that compares probes, whatever the scopes: facts
        kept in a session (or the cache) then serve any later lint."""


def dependencies(session: LintSession, queries: Iterable[tuple]) -> Dependencies:
    """``{(query, answer): stat signature or None}`` for ``queries`` as the
    session answered them."""
    deps = {}
    for query in queries:
        answer, signature = session.answer(query)
        deps[(query, answer)] = signature
    return deps


def _run(rule: Rule, context, path: Path, probe_folder: Path | None) -> list[Diagnostic]:
    """``rule.check(context)``, with any crash turned into SE000 for ``path``."""
    try:
        found = list(rule.check(context))
    except Exception as error:  # noqa: BLE001 - a crashing rule must not stop the run
        import traceback

        from .rules.files.se000_internal_error import InternalError

        return [InternalError.from_exception(rule, error, path, traceback.format_exc())]
    if found and probe_folder is not None:
        found = [d if d.probe is not None else d._replace(probe=probe_folder) for d in found]
    return found


def lint_paths(
    paths: Sequence[Path | str],
    *,
    config: Config | None = None,
    config_path: Path | None = None,
    reader: Reader | None = None,
    overrides: dict | None = None,
    jobs: int = 1,
    cache: bool = False,
) -> LintResult:
    """Lint ``paths`` (files or folders), each under its own workspace root.

    ``config`` replaces config discovery; otherwise the root's config file (or
    ``config_path``) is read with ``overrides`` (config-file keys) on top
    (:func:`~skill_eval.linter.config.resolve_config`). ``jobs`` worker
    processes (:mod:`.execution`) and the ``cache`` (:mod:`.cache`) leave the
    result the same. Raises :class:`~skill_eval.linter.config.ConfigError`
    and :class:`FileNotFoundError` for unusable input; rule crashes never escape.
    """
    from .cache import Cache
    from .config import resolve_config

    reader = reader or FileSystemReader()
    by_root: dict[Path, Targets] = {}
    whole: dict[Path, Targets] = {}
    configs: dict[Path, Config] = {}
    for raw in paths:
        path = absolute(raw)
        if not reader.is_file(path) and not reader.is_dir(path):
            raise FileNotFoundError(f"{raw}: no such file or folder")
        root = find_workspace_root(path)
        if root not in configs:  # before the walk: its exclude/extend-exclude leave folders out
            configs[root] = config or resolve_config(root, config_path, [("command line", overrides)] if overrides else ())
        discovered = _discover(path, root, reader, configs[root])
        by_root.setdefault(root, Targets()).update(discovered)
        if path == root:
            whole[root] = discovered
    result = LintResult()
    for root, targets in sorted(by_root.items()):
        root_config = configs[root]
        ordered = _ordered(targets)
        walked = whole.get(root)
        if walked is None and Plan(root_config).checks[WORKSPACE]:
            # The workspace-wide rules compare the targets with every probe (a
            # pre-commit run on a few files): walk the workspace once, so that
            # the session knows its probes, folders, links and runs folders.
            walked = _discover(root, root, reader, root_config)
        if walked is None:
            session = LintSession(root, root_config, reader, observe=cache)
        else:  # a target the walk did not list (named in an excluded folder) finds its SKILL.md by
            # looking (no walk's table nor links spare its stat calls) and is compared with every probe
            inside = (targets.probes <= walked.probes and targets.skills <= walked.skills
                      and targets.output_specs <= walked.output_specs)
            probes = ordered[0] if targets.probes == walked.probes else sorted_paths(walked.probes | targets.probes)
            session = LintSession(root, root_config, reader, probes, walked.skills | walked.output_specs if inside else None,
                                  pruned_folders=walked.pruned, walked_links=walked.links if inside else None,
                                  observe=cache)
        result.sessions.append(session)
        store = Cache.open(session) if cache else None
        # A lint of the whole workspace, walked: entries it did not use are of
        # files that are gone, and its findings are worth a run record.
        whole_run = store is not None and root in whole and session._walked_links is not None
        replayed = None
        if whole_run:
            run_targets = _targets_digest(ordered, targets.suites)
            replayed = store.replay(run_targets)
        if replayed is not None:
            diagnostics, checked = replayed
        else:
            diagnostics, checked = lint_targets(session, targets, jobs=jobs, cache=store)
            if whole_run:
                store.record_run(run_targets, diagnostics, checked, frozenset(map(str, ordered[0])))
                store.save(prune=True)
        if store is not None:
            store.save()
            store.close()
        result.diagnostics.extend(diagnostics)
        result.checked |= checked
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


def _discover(path: Path, root: Path, reader: Reader, config: Config) -> Targets:
    """:func:`~skill_eval.linter.workspace.discover` of ``path`` in the
    workspace ``root``, with the suites that the config's ``[suites] paths``
    globs name (:func:`~skill_eval.linter.suites.configured_suites`)."""
    exclude = Exclusion.of(config, root)
    found = discover(path, reader, exclude=exclude)
    if config.suite_globs:  # [suites] paths: suites by the config's globs (linter/suites.py)
        from .suites import configured_suites

        found.suites |= configured_suites(path, root, config.suite_globs, exclude or None)
    return found


def _ordered(targets: Targets) -> tuple[list[Path], list[Path], list[Path]]:
    """The probes, SKILL.md and output-spec files of ``targets``, each in
    :func:`~skill_eval.linter.workspace.sorted_paths` order."""
    return sorted_paths(targets.probes), sorted_paths(targets.skills), sorted_paths(targets.output_specs)


def _targets_digest(ordered: tuple[list[Path], list[Path], list[Path]], suites: Iterable[Path] = ()) -> str:
    """A digest of what a lint covers (its probes, SKILL.md and output-spec
    files, :func:`_ordered`): a run record serves only a lint of the same."""
    from ._hashing import blake2b

    digest = blake2b(digest_size=16)
    for kind, paths in zip(("probes", "skills", "specs"), ordered):
        digest.update(kind.encode() + b"\0")
        digest.update(b"".join([str(path).encode("utf-8", "surrogateescape") + b"\0" for path in paths]))
    digest.update(b"suites\0" + b"".join(sorted(str(path).encode("utf-8", "surrogateescape") + b"\0" for path in suites)))
    return digest.hexdigest()


def lint_targets(
    session: LintSession,
    targets: Targets,
    scopes: frozenset[Scope] | None = None,
    *,
    jobs: int = 1,
    cache: Cache | None = None,
) -> tuple[list[Diagnostic], set[str]]:
    """Run the enabled rules over ``targets`` in ``session``; ``scopes``, when
    given, limits the run to rules' checks of those scopes. The facts of every probe the run reads are kept in ``session.probe_facts``.
    Returns the findings (filtered, sorted, deduplicated) and the files checked."""
    plan = Plan(session.config, scopes)
    probes, skills, specs = _ordered(targets)
    compare = bool(probes and plan.checks[WORKSPACE] and plan.fact_rules)
    units: list[Unit] = [(PROBE, path) for path in probes] if plan.checks[PROBE] or compare else []
    if compare:
        linted = set(probes)
        units.extend((FACTS, path) for path in session.all_probe_paths if path not in linted)
    units.extend((SKILL, path) for path in skills if plan.checks[SKILL])
    units.extend((SPEC, path) for path in specs if plan.checks[SPEC])
    suites = sorted_paths(targets.suites)
    units.extend((SUITE, path) for path in suites if plan.checks[SUITE])
    chunks = run_in_chunks(session, units, plan, workers=jobs if jobs > 1 else 0, cache=cache)
    results = dict(itertools.chain.from_iterable(chunks))
    diagnostics = [d for unit in units if unit[0] != FACTS for d in results[unit].diagnostics or ()]
    if probes and plan.checks[WORKSPACE]:
        diagnostics.extend(_workspace_pass(session, probes, plan, cache))
    checked = {str(path) for path in itertools.chain(probes, skills, specs, suites)}
    for path in probes:
        facts = session.probe_facts.get(path)
        artifact = facts.refs[0] if facts is not None else None
        if isinstance(artifact, str):
            checked.add(artifact)
    asked: set[tuple] = set()
    session.record_into(asked if cache is not None else None)  # what filtering reads (directives): for the run record
    try:
        reported = finish(session, diagnostics, probes, skills, specs)
    finally:
        session.record_into(None)
    if cache is not None:
        cache.note_filtering(dependencies(session, asked))
    return reported, checked


def _workspace_pass(session: LintSession, probes: list[Path], plan: Plan, cache: Cache | None) -> tuple[Diagnostic, ...]:
    """The workspace-wide rules' findings for the linted ``probes``, over
    every probe's facts (in ``session.probe_facts``): from the cache when
    the facts (:func:`_facts_digest`) and everything else the rules read
    are as recorded, else computed (and recorded)."""
    from ._hashing import blake2b
    from .context import WorkspaceContext

    linted = blake2b("\0".join(map(str, probes)).encode("utf-8", "surrogateescape"), digest_size=16).hexdigest()
    unit = (WORKSPACE, Path(f"{session.root}#{linted}"))
    found = cache.lookup(unit) if cache is not None else None
    if found is not None:
        return found.diagnostics
    queries: set[tuple] = set()
    workspace = WorkspaceContext(session, probes)
    try:
        if cache is not None:  # the facts' digest is only ever read from the cache
            session.record_into(queries)
            session.query("facts", linted)
        diagnostics = [d for rule in plan.checks[WORKSPACE] for d in _run(rule, workspace, session.root, None)]
        diagnostics.extend(workspace.fact_errors)
    finally:
        session.record_into(None)
    if cache is not None:
        cache.store(unit, UnitResult(tuple(diagnostics), None, dependencies(session, queries)))
    return tuple(diagnostics)


@session_query("facts")
def _facts_digest(session: LintSession, linted: str) -> str:
    """A digest of every probe's facts, in the workspace's order (and of the
    linted probes, ``linted`` being their digest): the workspace-wide rules'
    input besides what they read themselves."""
    from ._hashing import blake2b
    from .context import compute_probe_facts, with_digest

    digest = blake2b(linted.encode(), digest_size=16)
    known = session.probe_facts
    rules = None
    for path in session.all_probe_paths:
        facts = known.get(path)
        if facts is None:
            rules = rules or fact_rules(enabled_rules(session.config))
            facts = known[path] = compute_probe_facts(session.probe(path), rules)
        elif not facts.digest:
            facts = known[path] = with_digest(facts)
        digest.update(str(path).encode("utf-8", "surrogateescape") + b"\0" + facts.digest)
    return digest.hexdigest()


def finish(session: LintSession, diagnostics: list[Diagnostic], probes: Iterable[Path] = (),
           skills: Iterable[Path] = (), specs: Iterable[Path] = ()) -> list[Diagnostic]:
    """``diagnostics`` of a lint of ``probes``, ``skills`` and ``specs``
    filtered (config, per-probe ``x-skill-eval-disable``, directives), sorted
    and deduplicated."""
    fixture_paths: set[str] = set()
    if any(d.path.suffix.lower() == ".md" and d.path.name not in (SKILL_FILE, OUTPUT_SPEC_FILE) for d in diagnostics):
        # Only a finding in a custom-named .md can need this set (is that file a
        # skill or spec, which honours directives, or an artifact, which does not?).
        fixture_paths = {str(path) for path in (*skills, *specs)}
        for path in probes:
            fixture_paths.update(ref for ref in session.probe_refs(path)[1:] if isinstance(ref, str))
    kept = [d for d in diagnostics if _is_reported(d, session, fixture_paths)]
    unique: dict[tuple, Diagnostic] = {}
    for diagnostic in sorted(kept, key=Diagnostic.sort_key):
        unique.setdefault((diagnostic.code, diagnostic.span, diagnostic.message), diagnostic)
    return list(unique.values())


def lint_probe_chunks(
    session: LintSession,
    probe_paths: Sequence[Path],
    *,
    workers: int = 0,
    cache: Cache | None = None,
) -> Iterator[tuple[list[Path], list[Diagnostic]]]:
    """Every rule's probe checks over ``probe_paths``, in chunks: ``(probe
    paths, their findings as :func:`lint_targets` reports them)`` as each
    chunk is done, in no fixed order (the language server's start-up scan).
    Probes come from ``cache`` when it still holds them; the rest are linted
    in ``workers`` worker processes (none: here). Their facts are kept in
    ``session.probe_facts``."""
    from .rules.base import Scope

    plan = Plan(session.config, frozenset({Scope.PROBE}))
    units = [(PROBE, path) for path in sorted_paths(probe_paths)]
    for chunk in run_in_chunks(session, units, plan, workers=workers, cache=cache):
        paths = [unit[1] for unit, _result in chunk]
        found = [d for _unit, result in chunk for d in result.diagnostics or ()]
        yield paths, finish(session, found, paths)


def lint_units_here(session: LintSession, units: Sequence[Unit], plan: Plan, record: bool) -> list[tuple[Unit, UnitResult]]:
    """One chunk of :func:`~skill_eval.linter.execution.run_in_chunks` computed here:
    each unit's result (with ``record``, every query it asked), rule by rule
    over the chunk. A recorded probe gets a fresh context, so that nothing it
    reads is served from a memo filled unrecorded."""
    from .context import compute_probe_facts

    found: dict[Unit, list[Diagnostic]] = {unit: [] for unit in units}
    queries: dict[Unit, set[tuple]] = {unit: set() for unit in units}
    contexts = {}
    for unit in units:
        kind, path = unit
        if kind in (PROBE, FACTS):
            contexts[unit] = session.fresh_probe(path) if record else session.probe(path)
        elif kind == SUITE:
            from .suites import SuiteContext

            contexts[unit] = SuiteContext(session, path)
        else:
            contexts[unit] = session.skill(path) if kind == SKILL else session.output_spec(path)
    facts: dict[Unit, ProbeFacts] = {}
    try:
        for kind, rules in plan.checks.items():
            members = [(contexts[unit], found[unit], queries[unit], unit[1],
                        contexts[unit].folder if kind == PROBE else None)
                       for unit in units if unit[0] == kind]
            for rule in rules:
                for context, bucket, asked, path, folder in members:
                    if record:
                        session.record_into(asked)
                    bucket.extend(_run(rule, context, path, folder))
        for unit in units:
            if unit[0] in (PROBE, FACTS):
                if record:
                    session.record_into(queries[unit])
                facts[unit] = compute_probe_facts(contexts[unit], plan.fact_rules, digest=record)
    finally:
        session.record_into(None)
    return [(unit, UnitResult(None if unit[0] == FACTS else tuple(found[unit]), facts.get(unit),
                              dependencies(session, queries[unit]) if record else None)) for unit in units]


def _is_reported(diagnostic: Diagnostic, session: LintSession, fixture_paths: set[str]) -> bool:
    """Apply config (select/ignore/per-file-ignores) and suppressions: a
    probe's ``x-skill-eval-disable`` read from its facts when the run has them."""
    if not session.config.is_enabled(diagnostic.code, diagnostic.path, session.root):
        return False
    if diagnostic.probe is not None:
        json_path = diagnostic.probe / PROBE_FILE
        facts = session.probe_facts.get(json_path)
        disabled = facts.disabled if facts is not None else session.probe(json_path).disabled_codes
        if diagnostic.code in disabled:
            return False
    # directives are honoured in a SKILL.md or output spec (``fixture_paths``: those the probes
    # reference), never in an artifact (it travels to the agent byte for byte)
    path = diagnostic.path
    if diagnostic.code != "SE000" and (path.name in (SKILL_FILE, OUTPUT_SPEC_FILE) or (
            path.suffix.lower() == ".md" and str(path) in fixture_paths)):
        loaded = session.load(path)
        if isinstance(loaded, TextDocument) and "skill-eval" in loaded.text:
            from .markdown import markdown_of

            if markdown_of(loaded).is_suppressed(diagnostic.code, diagnostic.start.line):
                return False
    return True


__all__ = ["LintResult", "Plan", "UnitResult", "enabled_rules", "lint_paths", "lint_targets",
           "lint_units_here"]
