"""What one lint is: units of work, the workspace-wide rules over their facts,
then filtering.

A lint of some targets in one workspace (:func:`lint_targets`):

1. **Probe units**: each linted probe's checks (rules with the probe scope)
   and its :class:`~skill_eval.linter.records.ProbeFacts` (the map step of
   the workspace-wide rules). Probes that are only compared with the linted
   ones (a pre-commit run on a few files) get their facts alone. Units come
   from the cache when their answers still hold (:mod:`.cache`), else are
   computed here or in worker processes (:mod:`.execution`).
2. **File units**: each SKILL.md's and output-spec.md's checks.
3. **The workspace pass**: rules with the workspace scope, over every
   probe's facts (the reduce step).
4. **Filtering**: config (select, ignore, per-file ignores), each probe's
   ``x-skill-eval-disable``, ``<!-- skill-eval: ... -->`` directives; then
   sorted and deduplicated.

:func:`lint_paths` is what the CLI calls: discovery, then :func:`lint_targets`
per workspace root. The language server calls :func:`lint_targets` with its
own session (an overlay reader of unsaved buffers) and :func:`lint_probe_chunks`
for its start-up scan.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Config
from .diagnostics import Diagnostic
from .records import Dependencies, ProbeFacts, UnitResult
from .reader import FileSystemReader, Reader
from .session import LintSession, session_query
from .textfile import Span, TextDocument
from .workspace import PROBE_FILE, Exclusion, Targets, absolute, discover, find_workspace_root, sorted_paths

if TYPE_CHECKING:  # pragma: no cover
    from .cache import Cache
    from .rules import Rule
    from .rules.base import Scope

class LintResult:
    """Diagnostics of one run, sorted, and the files it checked (their paths
    as strings: only how many is reported)."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []
        self.checked: set[str] = set()
        self.sessions: list[LintSession] = []

    def __repr__(self) -> str:
        return f"LintResult({len(self.diagnostics)} diagnostics, {len(self.checked)} files checked)"


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


# -- units ----------------------------------------------------------------------------


PROBE, FACTS, SKILL, SPEC, WORKSPACE, SUITE = "probe", "facts", "skill", "spec", "workspace", "suite"
"""Kinds of unit: a probe linted (and its facts), a probe's facts alone, a
SKILL.md, an output-spec.md, the workspace-wide rules of one lint (cached
only)."""

Unit = tuple[str, Path]
"""``(kind, path)``: the probe.json, SKILL.md or output-spec.md of a unit."""


class Plan:
    """The rules of a lint, by what they check: built once per run (and once
    per worker process) from the config and the scopes asked for."""

    def __init__(self, config: Config, rules: Sequence[Rule] | None = None, scopes: frozenset[Scope] | None = None) -> None:
        from .rules.base import Scope

        rules = enabled_rules(config) if rules is None else list(rules)
        wanted = frozenset(Scope) if scopes is None else scopes
        self.rules = rules
        self.probe_rules = [r for r in rules if Scope.PROBE in r.scopes()] if Scope.PROBE in wanted else []
        self.skill_rules = [r for r in rules if Scope.SKILL in r.scopes()] if Scope.SKILL in wanted else []
        self.spec_rules = [r for r in rules if Scope.OUTPUT_SPEC in r.scopes()] if Scope.OUTPUT_SPEC in wanted else []
        self.workspace_rules = [r for r in rules if Scope.WORKSPACE in r.scopes()] if Scope.WORKSPACE in wanted else []
        self.suite_rules = [r for r in rules if Scope.SUITE in r.scopes()] if Scope.SUITE in wanted else []
        self.fact_rules = fact_rules(rules)
        """Every enabled rule that compares probes: a probe's facts hold all of
        theirs whatever the scopes, so that facts kept in a session (or the
        cache) serve any later lint."""

    def codes(self) -> tuple[tuple[str, ...], frozenset[Scope] | None]:
        """What rebuilds this plan in another process, with the config."""
        from .rules.base import Scope

        scopes = frozenset(scope for scope, rules in ((Scope.PROBE, self.probe_rules), (Scope.SKILL, self.skill_rules),
                                                      (Scope.OUTPUT_SPEC, self.spec_rules),
                                                      (Scope.WORKSPACE, self.workspace_rules),
                                                      (Scope.SUITE, self.suite_rules)) if rules)
        return tuple(rule.code for rule in self.rules), scopes


def dependencies(session: LintSession, queries: Iterable[tuple]) -> Dependencies:
    """``{(query, answer): stat signature or None}`` for ``queries`` as the
    session answered them."""
    deps = {}
    for query in queries:
        if query[0] == "content":
            answer, signature = session.content_answer(query[1], query[2])
        else:
            answer, signature = session.answer(query), None
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


# -- a lint ---------------------------------------------------------------------------


def lint_paths(
    paths: Sequence[Path | str],
    *,
    config: Config | None = None,
    config_path: Path | None = None,
    reader: Reader | None = None,
    overrides: dict | None = None,
    jobs: int = 1,
    cache: bool = False,
    start_method: str | None = None,
) -> LintResult:
    """Lint ``paths`` (files or folders), each under its own workspace root.

    ``config`` replaces config discovery; otherwise the root's config file (or
    ``config_path``) is read and ``overrides`` (config-file keys, as the
    command line gives them) applied on top of it, in the one order of
    :func:`~skill_eval.linter.config.resolve_config`. ``jobs`` > 1 shares
    the work among ``jobs`` worker processes (:mod:`.execution`; the
    result is the same); ``cache`` reads and writes ``.skill-eval-cache/`` at
    each workspace root (:mod:`.cache`; the result is the same).
    Raises :class:`~skill_eval.linter.config.ConfigError` and
    :class:`FileNotFoundError` for unusable input; rule crashes never escape.
    """
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
        walked = whole.get(root)
        ordered = _ordered(targets)
        if walked is not None:
            only_walked = (targets.probes, targets.skills, targets.output_specs) == (walked.probes, walked.skills, walked.output_specs)
            session = LintSession(root, root_config, reader, ordered[0], targets.skills | targets.output_specs,
                                  pruned_folders=walked.pruned, walked_links=walked.links if only_walked else None,
                                  observe=cache)
        elif _has_workspace_rules(root_config):
            # The workspace-wide rules compare the targets with every probe of
            # the workspace (a pre-commit run on a few files): walk it once, as
            # a lint of all of it would, so that the session knows its folders
            # and links (what the walk listed resolves without a stat: the
            # cache's check of every other probe's facts) and its runs folders.
            walked = _discover(root, root, reader, root_config)
            inside = (targets.probes <= walked.probes and targets.skills <= walked.skills
                      and targets.output_specs <= walked.output_specs)
            # A target the walk did not list (named on the command line inside
            # an excluded or tool folder) finds its SKILL.md by looking, not
            # in the walk's list of them.
            session = LintSession(root, root_config, reader, sorted_paths(walked.probes),
                                  walked.skills | walked.output_specs if inside else None,
                                  pruned_folders=walked.pruned, walked_links=walked.links if inside else None,
                                  observe=cache)
        else:
            session = LintSession(root, root_config, reader, observe=cache)
        result.sessions.append(session)
        store = None
        if cache:
            from .cache import Cache

            store = Cache.open(session)
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
            diagnostics, checked = lint_targets(session, targets, jobs=jobs, cache=store, start_method=start_method,
                                                ordered=ordered)
            if whole_run:
                store.save(prune=True)
                store.record_run(run_targets, diagnostics, checked, frozenset(map(str, ordered[0])))
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


def _has_workspace_rules(config: Config) -> bool:
    """Whether ``config`` enables a workspace-wide rule."""
    from .rules import REGISTRY
    from .rules.base import Scope

    return any(Scope.WORKSPACE in rule.scopes() for rule in REGISTRY if config.is_enabled(rule.code))


def _ordered(targets: Targets) -> tuple[list[Path], list[Path], list[Path]]:
    """The probes, SKILL.md and output-spec files of ``targets``, each in
    :func:`~skill_eval.linter.workspace.sorted_paths` order: sorted once per
    lint (a sort of a large workspace's probes is not cheap: docs/performance.md)."""
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
    rules: Sequence[Rule] | None = None,
    scopes: frozenset[Scope] | None = None,
    *,
    jobs: int = 1,
    cache: Cache | None = None,
    start_method: str | None = None,
    ordered: tuple[list[Path], list[Path], list[Path]] | None = None,
) -> tuple[list[Diagnostic], set[str]]:
    """Run ``rules`` (default: the enabled ones) over ``targets`` in ``session``;
    ``scopes``, when given, limits the run to rules' checks of those scopes.
    ``ordered``: the targets' paths as :func:`_ordered` gives them, when the
    caller sorted them already.
    The facts of every probe the run reads are kept in ``session.probe_facts``.
    Returns the findings (filtered, sorted, deduplicated) and the files checked."""
    plan = Plan(session.config, rules, scopes)
    if rules is not None:
        cache = None  # the cache holds what the config's rules find, not a chosen few's
    probes, skills, specs = ordered if ordered is not None else _ordered(targets)
    compare = bool(probes and plan.workspace_rules and plan.fact_rules)
    units: list[Unit] = [(PROBE, path) for path in probes] if plan.probe_rules or compare else []
    if compare:
        linted = set(probes)
        units.extend((FACTS, path) for path in session.all_probe_paths if path not in linted)
    units.extend((SKILL, path) for path in skills if plan.skill_rules)
    units.extend((SPEC, path) for path in specs if plan.spec_rules)
    suites = sorted_paths(targets.suites)
    units.extend((SUITE, path) for path in suites if plan.suite_rules)
    results = run_units(session, units, plan, jobs=jobs, cache=cache, start_method=start_method)
    diagnostics: list[Diagnostic] = []
    for unit in units:
        found = results[unit].diagnostics
        if found and unit[0] != FACTS:
            diagnostics.extend(found)
    if probes and plan.workspace_rules:
        diagnostics.extend(_workspace_pass(session, probes, plan, cache))
    checked = {str(path) for path in probes} | {str(path) for path in skills} | {str(path) for path in specs}
    checked.update(str(path) for path in suites)
    for path in probes:
        facts = session.probe_facts.get(path)
        artifact = facts.refs[0] if facts is not None else None
        if isinstance(artifact, str):
            checked.add(artifact)
    if cache is None:
        return finish(session, diagnostics, probes, skills, specs), checked
    asked: set[tuple] = set()
    session.record_into(asked)  # what filtering reads (directives) goes into the run record
    try:
        reported = finish(session, diagnostics, probes, skills, specs)
    finally:
        session.record_into(None)
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
    if cache is not None:
        session.record_into(queries)
    try:
        if cache is not None:  # the facts' digest is only ever read from the cache
            session.query("facts", linted)
        workspace = WorkspaceContext(session, probes)
        diagnostics: list[Diagnostic] = []
        for rule in plan.workspace_rules:
            diagnostics.extend(_run(rule, workspace, session.root, None))
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
    if any(d.path.suffix.lower() == ".md" and d.path.name not in ("SKILL.md", "output-spec.md") for d in diagnostics):
        # Only a finding in a custom-named .md can need this set (is that file a
        # skill or spec, which honours directives, or an artifact, which does not?).
        fixture_paths = {str(path) for path in (*skills, *specs)}
        for path in probes:
            fixture_paths.update(ref for ref in session.probe_refs(path)[1:] if isinstance(ref, str))
    kept = [d for d in diagnostics if _is_reported(d, session, fixture_paths)]
    kept.sort(key=Diagnostic.sort_key)
    return _dedupe(kept)


def lint_probe_chunks(
    session: LintSession,
    probe_paths: Sequence[Path],
    *,
    workers: int = 0,
    cache: Cache | None = None,
    start_method: str | None = None,
) -> Iterator[tuple[list[Path], list[Diagnostic]]]:
    """Every rule's probe checks over ``probe_paths``, in chunks: ``(probe
    paths, their findings as :func:`lint_targets` reports them)`` as each
    chunk is done, in no fixed order (the language server's start-up scan,
    which reports progress between chunks). Probes come from ``cache`` when
    it still holds them; the rest are linted in ``workers`` worker processes
    (none: here), so that what they load stays there. Their facts are kept
    in ``session.probe_facts`` (the workspace-wide rules read them there)."""
    from .execution import SERIAL_CHUNK
    from .rules.base import Scope

    plan = Plan(session.config, None, frozenset({Scope.PROBE}))
    pending: list[Unit] = []
    cached: list[tuple[Unit, UnitResult]] = []
    for path in sorted_paths(probe_paths):
        unit = (PROBE, path)
        found = cache.lookup(unit) if cache is not None else None
        if found is None:
            pending.append(unit)
        else:
            session.probe_facts[path] = found.facts
            cached.append((unit, found))
    chunks = [cached[start:start + SERIAL_CHUNK] for start in range(0, len(cached), SERIAL_CHUNK)]
    computed = lint_in_chunks(session, pending, plan, workers=workers, record=cache is not None,
                              start_method=start_method)
    for chunk in chunks:
        yield _finished_chunk(session, chunk)
    for chunk in computed:
        if cache is not None:
            for unit, result in chunk:
                cache.store(unit, result)
        yield _finished_chunk(session, chunk)


def _finished_chunk(session: LintSession, chunk: list[tuple[Unit, UnitResult]]) -> tuple[list[Path], list[Diagnostic]]:
    paths = [unit[1] for unit, _result in chunk]
    found = [d for _unit, result in chunk for d in result.diagnostics or ()]
    return paths, finish(session, found, paths)


def run_units(
    session: LintSession,
    units: Sequence[Unit],
    plan: Plan,
    *,
    jobs: int = 1,
    cache: Cache | None = None,
    start_method: str | None = None,
) -> dict[Unit, UnitResult]:
    """Every unit's result: from ``cache`` when its answers still hold, else
    computed (in ``jobs`` worker processes when that pays off,
    :func:`~skill_eval.linter.execution.run_in_chunks`). Probe facts are
    kept in ``session.probe_facts`` as they come; the output-spec units,
    which read them, are linted last, here."""
    results: dict[Unit, UnitResult] = {}
    pending: list[Unit] = []
    specs: list[Unit] = []
    facts_only = not plan.probe_rules
    # output-spec units last: their cached answers name the probes' references,
    # read from the facts the probes before them left in the session
    for unit in sorted(units, key=lambda unit: unit[0] == SPEC):
        if unit[0] == FACTS or (facts_only and unit[0] == PROBE):
            known = session.probe_facts.get(unit[1])
            if known is not None:  # computed earlier in this session (the language server's)
                results[unit] = UnitResult(None if unit[0] == FACTS else (), known)
                continue
        found = cache.lookup(unit) if cache is not None else None
        if found is None:
            (specs if unit[0] == SPEC else pending).append(unit)
        else:
            results[unit] = found
            if found.facts is not None:
                session.probe_facts[unit[1]] = found.facts
    workers = jobs if jobs > 1 else 0
    computed = lint_in_chunks(session, pending, plan, workers=workers, record=cache is not None, start_method=start_method)
    for chunk in itertools.chain(computed, lint_in_chunks(session, specs, plan, record=cache is not None)):
        for unit, result in chunk:
            results[unit] = result
            if cache is not None:
                cache.store(unit, result)
    return results


def lint_in_chunks(
    session: LintSession,
    units: Sequence[Unit],
    plan: Plan,
    *,
    workers: int = 0,
    record: bool = False,
    start_method: str | None = None,
) -> Iterator[list[tuple[Unit, UnitResult]]]:
    """``[(unit, result), ...]`` per chunk of ``units`` as each is done,
    linted here or, when the work pays for them
    (:data:`~skill_eval.linter.execution.PARALLEL_MIN_WORK`), in ``workers``
    worker processes. Probe facts are kept in ``session.probe_facts``."""
    from .execution import run_in_chunks

    for chunk in run_in_chunks(session, units, plan, workers=workers, record=record, start_method=start_method):
        for unit, result in chunk:
            if result.facts is not None:
                session.probe_facts[unit[1]] = result.facts
        yield chunk


def lint_units_here(session: LintSession, units: Sequence[Unit], plan: Plan, record: bool) -> list[tuple[Unit, UnitResult]]:
    """One chunk of :func:`lint_in_chunks`, in this process: each unit's
    result (its findings; a probe's facts; with ``record``, every query it
    asked, for the cache), computed rule by rule over the chunk (one rule's
    check over many contexts in a row, its code and data staying hot; see
    docs/performance.md), each unit's
    findings and queries kept apart. A recorded probe gets a fresh context,
    so that nothing it reads is served from a memo filled unrecorded."""
    from .context import compute_probe_facts

    found: dict[Unit, list[Diagnostic]] = {unit: [] for unit in units}
    queries: dict[Unit, set[tuple]] = {unit: set() for unit in units}
    contexts = {}
    for unit in units:
        kind, path = unit
        if kind == PROBE or kind == FACTS:
            contexts[unit] = session.fresh_probe(path) if record else session.probe(path)
        elif kind == SKILL:
            contexts[unit] = session.skill(path)
        elif kind == SUITE:
            from .suites import SuiteContext

            contexts[unit] = SuiteContext(session, path)
        else:
            contexts[unit] = session.output_spec(path)
    def group(kind: str) -> list[tuple]:
        return [(contexts[unit], found[unit], queries[unit], unit[1], contexts[unit].folder if kind == PROBE else None)
                for unit in units if unit[0] == kind]

    passes = ((plan.probe_rules, group(PROBE)), (plan.skill_rules, group(SKILL)), (plan.spec_rules, group(SPEC)),
              (plan.suite_rules, group(SUITE)))
    facts: dict[Unit, ProbeFacts] = {}
    record_into = session.record_into
    try:
        for rules, members in passes:
            for rule in rules:
                for context, bucket, asked, path, folder in members:
                    if record:
                        record_into(asked)
                    bucket.extend(_run(rule, context, path, folder))
        for unit in units:
            if unit[0] == PROBE or unit[0] == FACTS:
                if record:
                    session.record_into(queries[unit])
                facts[unit] = compute_probe_facts(contexts[unit], plan.fact_rules, digest=record)
    finally:
        session.record_into(None)
    results = []
    for unit in units:
        deps = dependencies(session, queries[unit]) if record else None
        results.append((unit, UnitResult(None if unit[0] == FACTS else tuple(found[unit]), facts.get(unit), deps)))
    return results


def _is_reported(diagnostic: Diagnostic, session: LintSession, fixture_paths: set[str]) -> bool:
    """Apply config (select/ignore/per-file-ignores) and suppressions."""
    config = session.config
    if not config.is_enabled(diagnostic.code, diagnostic.path, session.root):
        return False
    if diagnostic.probe is not None and diagnostic.code in _disabled_codes(session, diagnostic.probe / PROBE_FILE):
        return False
    if diagnostic.code != "SE000" and session.takes_directives(diagnostic.path, fixture_paths):
        loaded = session.load(diagnostic.path)
        if isinstance(loaded, TextDocument) and "skill-eval" in loaded.text:
            from .markdown import markdown_of

            if markdown_of(loaded).is_suppressed(diagnostic.code, diagnostic.start.line):
                return False
    return True


def _disabled_codes(session: LintSession, json_path: Path) -> frozenset[str]:
    """The codes a probe's probe.json turns off: from its facts when the run
    has them (no need to load it), else from its context."""
    facts = session.probe_facts.get(json_path)
    return facts.disabled if facts is not None else session.probe(json_path).disabled_codes


def _dedupe(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    unique = []
    for diagnostic in diagnostics:
        key = (diagnostic.code, diagnostic.span, diagnostic.message)
        if key not in seen:
            seen.add(key)
            unique.append(diagnostic)
    return unique


__all__ = ["LintResult", "Plan", "Span", "UnitResult", "enabled_rules", "lint_paths", "lint_targets", "lint_units_here"]
