"""Running the rules: discovery, dispatch by scope, SE000, suppression, filtering.

``lint_paths`` is what the CLI calls; ``lint_targets`` is what the language
server calls with its own session (an overlay reader of unsaved buffers).
"""

from __future__ import annotations

import bisect
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .config import Config, load_config
from .context import LintSession, WorkspaceContext, probe_facts_of
from .diagnostics import Diagnostic
from .markdown import parse_markdown
from .reader import FileSystemReader, Reader
from .rules import REGISTRY, Rule
from .rules.base import Scope
from .rules.files.se000_internal_error import InternalError
from .textfile import Span, TextDocument
from .workspace import Exclusion, Targets, absolute, discover, find_workspace_root, sorted_paths

if TYPE_CHECKING:
    from .task_sharing import Helpers


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
    return [rule() for rule in REGISTRY if config.is_enabled(rule.code)]


def lint_paths(
    paths: Sequence[Path | str],
    *,
    config: Config | None = None,
    config_path: Path | None = None,
    reader: Reader | None = None,
    overrides: dict | None = None,
    jobs: int = 1,
) -> LintResult:
    """Lint ``paths`` (files or folders), each under its own workspace root.

    ``config`` replaces config discovery; otherwise the root's config file (or
    ``config_path``) is read and ``overrides`` applied on top of it.
    ``jobs`` > 1 shares the lint of a workspace with enough work
    (:data:`SHARE_MIN_WORK`) between this process and ``jobs`` - 1 forked
    helpers; the result is the same.
    Raises :class:`~skill_eval.linter.config.ConfigError` and
    :class:`FileNotFoundError` for unusable input; rule crashes never escape.
    """
    reader = reader or FileSystemReader()
    helpers = _EarlyHelpers(jobs)
    try:
        return _lint_paths(paths, config, config_path, reader, overrides, jobs, helpers)
    finally:
        helpers.close()


def _lint_paths(
    paths: Sequence[Path | str],
    config: Config | None,
    config_path: Path | None,
    reader: Reader,
    overrides: dict | None,
    jobs: int,
    early: _EarlyHelpers,
) -> LintResult:
    """:func:`lint_paths`, forking helpers with ``early`` as soon as a folder
    walk finds enough probes to share: the first workspace whose lint is
    shared takes them; any other forks helpers of its own."""
    by_root: dict[Path, Targets] = {}
    whole: dict[Path, Targets] = {}
    configs: dict[Path, Config] = {}
    for raw in paths:
        path = absolute(raw)
        if not reader.is_file(path) and not reader.is_dir(path):
            raise FileNotFoundError(f"{raw}: no such file or folder")
        root = find_workspace_root(path)
        if root not in configs:
            configs[root] = config or load_config(root, config_path)
            if overrides:
                configs[root] = configs[root].with_overrides(**overrides)
        discovered = discover(path, reader, early.on_found, Exclusion.of(configs[root], root))
        by_root.setdefault(root, Targets()).update(discovered)
        if path == root:
            whole[root] = discovered
    result = LintResult()
    for root, targets in sorted(by_root.items()):
        root_config = configs[root]
        if root in whole:
            walked = whole[root]
            only_walked = (targets.probes, targets.skills, targets.output_specs) == (walked.probes, walked.skills, walked.output_specs)
            session = LintSession(root, root_config, reader, sorted_paths(targets.probes), targets.skills | targets.output_specs,
                                  pruned_folders=walked.pruned, walked_links=walked.links if only_walked else None)
        else:
            session = LintSession(root, root_config, reader)
        result.sessions.append(session)
        if jobs > 1 and _workers_pay_off(session, targets) and _can_fork():
            diagnostics, checked = _lint_in_workers(session, targets, jobs, early.take())
        else:
            diagnostics, checked = lint_targets(session, targets)
        result.diagnostics.extend(diagnostics)
        result.checked |= checked
    result.diagnostics.sort(key=Diagnostic.sort_key)
    return result


class _EarlyHelpers:
    """The helpers of a parallel :func:`lint_paths`, forked while discovery is
    still walking the workspace, as soon as what it has found is work enough
    to share (:meth:`on_found`, :data:`SHARE_MIN_WORK`): they import what
    linting needs (:func:`_prepare_helper`, ~70 ms) while this process walks
    on, loads the config and cuts the tasks, instead of after. Not forked on
    speculation: with a helper waiting, a small workspace's lint was ~10%
    slower (copy-on-write faults, and the two CPUs of a VM slowing each
    other)."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self.helpers: Helpers | None = None
        self.used = jobs < 2 or not _can_fork()

    def on_found(self, found: Targets) -> None:
        """Called by :func:`~skill_eval.linter.workspace.discover` with what
        its walk has found so far, after each fixture."""
        if not self.used and _work(found) >= SHARE_MIN_WORK:
            from .task_sharing import Helpers

            self.used = True
            self.helpers = Helpers(self.jobs - 1, start=_start_chunk_tasks, prepare=_prepare_helper)

    def take(self) -> Helpers | None:
        """The helpers, for the first workspace that shares its lint (``None``
        for any other, or when none were forked)."""
        helpers, self.helpers, self.used = self.helpers, None, True
        return helpers

    def close(self) -> None:
        """Dismiss helpers no workspace took."""
        if self.helpers is not None:
            self.helpers.close()
            self.helpers = None


def _prepare_helper() -> None:
    """What a helper imports while it waits for its tasks: what the tasks
    would import on first use (markdown-it, with the parser built, PyYAML,
    json-source-map), ~70 ms of each process's start that the helper spends
    while this process is still walking the workspace, not after."""
    from .markdown import _parser

    _parser()
    import json_source_map  # noqa: F401
    import yaml  # noqa: F401


PARALLEL_MIN_PROBES = 200
"""From this many probes, the language server's scan forks workers, and a
run on a few files of a workspace shares the loading of every probe's facts
(:func:`_workers_pay_off`)."""

SHARE_MIN_WORK = 120
"""A run of ``skill-eval-lint`` shares its lint with helpers (``jobs`` > 1)
from this much work on (:func:`_work`). Measured with helpers forked while
discovery walks (alternating runs, 15-21 each, on trees of
``make_bench_corpus.py``): they paid off at 25 probes of 10 skills (0.297 ->
0.276 s) and 120 probes of one skill (0.323 -> 0.305 s), broke even at 60 of
one skill, and cost time at 10 probes of 10 skills (0.217 -> 0.223 s) and 30
of one skill (0.223 -> 0.242 s)."""

SKILL_WORK = 10
"""What parsing one SKILL.md weighs in :func:`_work`, in probes (~9 ms
against ~0.8 ms for a probe's checks)."""


def _work(targets: Targets) -> int:
    """The work of linting ``targets``, in probes: each probe, and
    :data:`SKILL_WORK` for each SKILL.md."""
    return len(targets.probes) + SKILL_WORK * len(targets.skills)


def _workers_pay_off(session: LintSession, targets: Targets) -> bool:
    """Whether to share the lint with helpers: for work enough
    (:data:`SHARE_MIN_WORK`), or for a few probes in a large workspace whose
    probes the workspace-wide rules compare them with (a pre-commit run on
    three files of a thousand-probe workspace spends most of its time
    loading the other probes' facts)."""
    if _work(targets) >= SHARE_MIN_WORK:
        return True
    if not targets.probes or not any(rule.uses_probe_facts for rule in enabled_rules(session.config)):
        return False
    return len(session.all_probe_paths) >= PARALLEL_MIN_PROBES


def default_jobs() -> int:
    """The CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _can_fork() -> bool:
    """Whether this platform forks (POSIX); asked without importing
    :mod:`multiprocessing` (~30 ms), which offers ``fork`` exactly there."""
    return hasattr(os, "fork")


def _fork_pool(session: LintSession, workers: int, tasks: list):
    """A pool of ``workers`` processes forked from this one, inheriting ``session``
    and ``tasks``: a task is sent to a worker as its index in ``tasks`` (pickling
    thousands of paths per task to a process that already has them cost ~0.1 s
    at 1,000 probes). Forked as
    :func:`~skill_eval.linter.task_sharing.forking` describes."""
    import multiprocessing

    from .task_sharing import forking

    global _WORKER_SESSION, _WORKER_TASKS
    with forking():
        _WORKER_SESSION, _WORKER_TASKS = session, tasks
        try:
            return multiprocessing.get_context("fork").Pool(workers)
        finally:
            _WORKER_SESSION, _WORKER_TASKS = None, []


_WORKER_SESSION: LintSession | None = None
"""The session a forked worker inherits from the parent (set just before forking)."""

_WORKER_TASKS: list[tuple[Targets, frozenset, Sequence]] = []
"""The tasks a forked worker inherits: ``(targets, scopes, rule codes)`` for
:func:`_lint_probes_task`."""


def _lint_probes_task(index: int) -> tuple[int, list[Diagnostic]]:
    """Task ``index`` of :data:`_WORKER_TASKS` for :func:`lint_probes_in_workers`:
    the index (results arrive out of order) and the chunk's diagnostics under
    the given rules."""
    targets, scopes, codes = _WORKER_TASKS[index]
    rules = [rule for rule in enabled_rules(_WORKER_SESSION.config) if rule.code in codes]
    return index, lint_targets(_WORKER_SESSION, targets, rules, scopes=scopes)[0]


def _lint_in_workers(session: LintSession, targets: Targets, jobs: int, helpers: Helpers | None = None) -> tuple[list[Diagnostic], set[str]]:
    """Lint ``targets`` in this process and ``jobs`` - 1 forked helpers (those
    given, forked early, or new ones; see
    :class:`~skill_eval.linter.task_sharing.Helpers`), with the same result
    as :func:`lint_targets`.

    Map, then reduce. The workspace's probes are cut into contiguous chunks
    (neighbours share a SKILL.md, so each worker parses few skills), largest
    first (:func:`_guided_chunks`); each output-spec.md is checked in the
    chunk holding the first probe below its folder (the probes its checks
    read are loaded there anyway), every SKILL.md in the first chunk a helper
    takes (:func:`_chunk_tasks`). A worker lints the probes,
    skills and specs of its chunk that are among ``targets``, and computes the
    :meth:`~skill_eval.linter.rules.base.Rule.probe_facts` of all its probes
    for the workspace-wide rules that compare probes through them (reused
    scenarios, duplicate ids, erased cases): the linted probes are compared
    with every probe of the workspace, so a run on three files of a large
    workspace is mostly this. This process folds the facts in as each chunk
    arrives and runs the workspace-wide rules over them at the end: no probe
    is loaded twice, where a task per workspace-wide rule loaded every probe
    (and parsed every SKILL.md) once more, ~0.5 s of CPU at 1,000 probes.

    A helper gets the session and the tasks pickled (~2 ms here at 1,000
    probes); its results come back pickled and are merged, deduped and sorted
    here.
    """
    rules = enabled_rules(session.config)
    wide = [rule for rule in rules if Scope.WORKSPACE in rule.scopes()]
    by_code = {rule.code: rule for rule in wide if rule.uses_probe_facts}
    # every probe of the workspace when facts are wanted: the linted ones are compared with all
    probes = sorted_paths(set(session.all_probe_paths) | targets.probes if by_code else targets.probes)
    tasks = _chunk_tasks(probes, targets, jobs, facts_wanted=bool(by_code))
    index_of = {str(path): number for number, path in enumerate(probes)}
    diagnostics: list[Diagnostic] = []
    seen: set[str] = set()
    facts: dict[str, dict[Path, object]] = {code: {} for code in by_code}
    refs: set[str] = set()
    if helpers is None:
        from .task_sharing import Helpers

        helpers = Helpers(jobs - 1, start=_start_chunk_tasks)
    results = helpers.share((session, tasks), len(tasks))
    try:
        for rule in wide:  # while the helpers start
            _ahead_of_check(rule.prepare, session)
        for _index, (found, checked_here, chunk_facts, refs_here) in results:  # as each chunk is done
            diagnostics.extend(found)
            seen.update(checked_here)
            for code, pairs in chunk_facts.items():
                pairs = [(probes[index_of[path]], value) for path, value in pairs]
                facts[code].update(pairs)
                _ahead_of_check(by_code[code].absorb_facts, pairs, len(probes), len(targets.probes))
            refs.update(refs_here)
    finally:
        results.close()
    fixture_paths = set(targets.skills) | set(targets.output_specs) | set(map(Path, refs))
    diagnostics.extend(_workspace_diagnostics(session, sorted_paths(targets.probes), wide, facts, fixture_paths))
    diagnostics.sort(key=Diagnostic.sort_key)
    return _dedupe(diagnostics), seen


def _ahead_of_check(step, *args) -> None:
    """Run ``step`` (a rule's ``prepare`` or ``absorb_facts``), which only gets
    ahead of work its ``check`` would do anyway: if it crashes, ``check`` does
    that work, and reports the crash as SE000 if it recurs there."""
    try:
        step(*args)
    except Exception:  # noqa: BLE001, S110 - check() redoes it and reports a crash
        pass


def _chunk_tasks(probes: list[Path], targets: Targets, jobs: int, facts_wanted: bool) -> list[tuple]:
    """The tasks of :func:`_lint_in_workers`, one per chunk of ``probes``
    (:func:`_guided_chunks`): ``(what to lint, scopes, probes whose facts to
    compute)``. A chunk lints its probes that are among ``targets``, and the
    output-spec files of ``targets`` whose folder holds its first probe (the
    probes its checks read are loaded there anyway); a spec with no probe
    below goes to a last task of its own. Every SKILL.md of ``targets`` goes
    to the last task, the first a helper takes: their checks read only the
    front matter, with PyYAML, which helpers import while they wait for
    their tasks (:func:`_prepare_helper`), so this process need not (~20
    ms)."""
    bounds = _guided_chunks(len(probes), jobs)
    chunks = [Targets(probes=targets.probes.intersection(probes[start:end])) for start, end in bounds]
    chunk_of = [number for number, (start, end) in enumerate(bounds) for _ in range(start, end)]
    by_text = sorted((str(path), number) for number, path in enumerate(probes))
    leftover = Targets()
    for path in sorted_paths(targets.output_specs):
        folder = str(path.parent).rstrip(os.sep) + os.sep
        first = bisect.bisect_left(by_text, (folder,))
        below = first < len(by_text) and by_text[first][0].startswith(folder)
        (chunks[chunk_of[by_text[first][1]]] if below else leftover).output_specs.add(path)
    tasks = [(chunk, _LOCAL_SCOPES, probes[start:end] if facts_wanted else ()) for chunk, (start, end) in zip(chunks, bounds)]
    if leftover.output_specs or not tasks:
        tasks.append((leftover, _LOCAL_SCOPES, ()))
    tasks[-1][0].skills.update(targets.skills)
    return tasks


_LOCAL_SCOPES = frozenset({Scope.PROBE, Scope.SKILL, Scope.OUTPUT_SPEC})


def _guided_chunks(count: int, jobs: int, smallest: int = 16) -> list[tuple[int, int]]:
    """``(start, end)`` of contiguous chunks of ``count`` probes for ``jobs``
    workers, in probe order, largest at both ends and smallest in the middle
    ("guided" scheduling from two ends: in
    :meth:`~skill_eval.linter.task_sharing.Helpers.share` the first worker
    takes chunks from the front, the others from the back). Chunk sizes are
    the remaining probes over ``2 * jobs``, down to ``smallest``, dealt to the
    two ends in turn. Big chunks keep per-task costs low; small ones last keep
    one worker from finishing a long chunk while the others wait (with equal
    chunks of an eighth of the probes that wait was up to a chunk's length,
    ~0.1 s at 1,000 probes); from two ends each worker's chunks are
    neighbours, so a SKILL.md is rarely parsed by two workers."""
    import math

    sizes = []
    remaining = count
    while remaining > 0:
        size = min(remaining, max(smallest, math.ceil(remaining / (2 * jobs))))
        sizes.append(size)
        remaining -= size
    front, back = sizes[0::2], sizes[1::2]
    bounds = []
    start = 0
    for size in front + back[::-1]:
        bounds.append((start, start + size))
        start += size
    return bounds


def _start_chunk_tasks(order: tuple[LintSession, list[tuple]]) -> Callable[[int], tuple]:
    """The runner of the tasks of :func:`_lint_in_workers` in a process given
    ``order``, ``(session, tasks)``: :func:`_lint_chunk_task` by index."""
    session, tasks = order
    return lambda index: _lint_chunk_task(session, tasks[index])


def _lint_chunk_task(session: LintSession, task: tuple) -> tuple[list[Diagnostic], list[str], dict[str, list], list[str]]:
    """One chunk of :func:`_lint_in_workers`, ``(targets, scopes, probes whose
    facts to compute)``: its diagnostics, the files it checked, its probes'
    facts for the workspace-wide rules (by code) and the SKILL.md/output-spec
    paths its probes name (paths as strings: cheaper to pickle)."""
    targets, scopes, facts_for = task
    rules = enabled_rules(session.config)
    diagnostics, checked = lint_targets(session, targets, rules, scopes=scopes)
    compared = [session.probe(path) for path in facts_for]
    errors: list[Diagnostic] = []
    facts = {
        rule.code: [(str(probe.json_path), probe_facts_of(rule, probe, errors)) for probe in compared]
        for rule in rules if Scope.WORKSPACE in rule.scopes() and rule.uses_probe_facts
    }
    diagnostics.extend(d for d in errors if _is_reported(d, session, set()))
    probes = [session.probe(path) for path in sorted_paths(targets.probes)]
    refs = [str(ref) for probe in probes for ref in (probe.skill_ref, probe.output_spec_ref) if isinstance(ref, Path)]
    return diagnostics, list(checked), facts, refs


def _workspace_diagnostics(
    session: LintSession, probe_paths: list[Path], rules: Sequence[Rule], facts: dict, fixture_paths: set[Path]
) -> list[Diagnostic]:
    """The workspace-scope findings of ``rules`` for the linted ``probe_paths``,
    over the facts the workers computed (a rule without facts reads the probes
    here), filtered as :func:`lint_targets` filters."""
    workspace = WorkspaceContext(session, [session.probe(path) for path in probe_paths], facts)
    found: list[Diagnostic] = []
    for rule in rules:
        found.extend(_run(rule, workspace, session.root, None))
    found.extend(workspace.fact_errors)
    return [d for d in found if _is_reported(d, session, fixture_paths)]


def lint_probes_in_workers(
    session: LintSession,
    probe_paths: Sequence[Path],
    rules: Sequence[Rule],
    workers: int,
    chunk: int = 64,
) -> Iterator[tuple[list[Path], list[Diagnostic]]]:
    """Run ``rules``' probe checks over ``probe_paths`` in ``workers`` forked
    processes; iterate ``(chunk of probe paths, their diagnostics)`` as each
    chunk finishes (in no fixed order), for a caller that reports progress.

    The workers start at once: the caller may do other work (the language
    server runs the workspace-wide rules) before it iterates. Each chunk's
    diagnostics are exactly what :func:`lint_targets` gives for it. The
    workers inherit ``session`` (its reader, unsaved buffers included) as it is
    at the call; what they load stays in them, so the caller's session is not
    warmed (nor its memory grown). With ``workers`` = 0, fewer than
    :data:`PARALLEL_MIN_PROBES` probes or no ``fork``, the chunks are linted
    in this process, lazily.
    """
    paths = sorted_paths(probe_paths)
    chunks = [paths[i : i + chunk] for i in range(0, len(paths), chunk)]
    if workers < 1 or len(paths) < PARALLEL_MIN_PROBES or not _can_fork():
        return ((part, lint_targets(session, Targets(probes=set(part)), rules, scopes=_PROBE_SCOPE)[0]) for part in chunks)
    codes = tuple(rule.code for rule in rules)
    tasks = [(Targets(probes=set(part)), _PROBE_SCOPE, codes) for part in chunks]
    pool = _fork_pool(session, workers, tasks)
    results = pool.imap_unordered(_lint_probes_task, range(len(tasks)))
    return PoolResults(pool, results, chunks)


_PROBE_SCOPE = frozenset({Scope.PROBE})


class PoolResults:
    """What :func:`lint_probes_in_workers` returns when it forked workers: their
    results by chunk; the pool ends with the iteration or with :meth:`close`
    (a caller that stops early)."""

    def __init__(self, pool, results, chunks: list[list[Path]]) -> None:
        self._pool = pool
        self._results = results
        self._chunks = chunks

    def __iter__(self) -> PoolResults:
        return self

    def __next__(self) -> tuple[list[Path], list[Diagnostic]]:
        try:
            index, diagnostics = next(self._results)
        except BaseException:
            self.close()
            raise
        return self._chunks[index], diagnostics

    def close(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None


def lint_targets(
    session: LintSession,
    targets: Targets,
    rules: Sequence[Rule] | None = None,
    scopes: frozenset[Scope] | None = None,
) -> tuple[list[Diagnostic], set[str]]:
    """Run ``rules`` (default: the enabled ones) over ``targets`` in ``session``;
    ``scopes``, when given, limits the run to rules' checks of those scopes."""
    rules = enabled_rules(session.config) if rules is None else rules
    probes = [session.probe(path) for path in sorted_paths(targets.probes)]
    skills = [session.skill(path) for path in sorted_paths(targets.skills)]
    specs = [session.output_spec(path) for path in sorted_paths(targets.output_specs)]
    diagnostics: list[Diagnostic] = []
    workspace = WorkspaceContext(session, probes)
    for rule in rules:
        for scope in rule.scopes():
            if scopes is not None and scope not in scopes:
                continue
            if scope is Scope.PROBE:
                for probe in probes:
                    diagnostics.extend(_run(rule, probe, probe.json_path, probe.folder))
            elif scope is Scope.SKILL:
                for skill in skills:
                    diagnostics.extend(_run(rule, skill, skill.path, None))
            elif scope is Scope.OUTPUT_SPEC:
                for spec in specs:
                    diagnostics.extend(_run(rule, spec, spec.path, None))
            elif scope is Scope.WORKSPACE and probes:
                diagnostics.extend(_run(rule, workspace, session.root, None))
    diagnostics.extend(workspace.fact_errors)
    checked = {str(p.json_path) for p in probes} | {str(s.path) for s in skills} | {str(s.path) for s in specs}
    for probe in probes:
        for ref in (probe.artifact_ref,):
            if isinstance(ref, Path):
                checked.add(str(ref))
    fixture_paths: set[Path] | None = None
    if any(d.path.suffix.lower() == ".md" and d.path.name not in ("SKILL.md", "output-spec.md") for d in diagnostics):
        # Only a finding in a custom-named .md can need this set (is that file a
        # skill or spec, which honours directives, or an artifact, which does not?).
        fixture_paths = {s.path for s in skills} | {s.path for s in specs}
        for probe in probes:
            fixture_paths.update(ref for ref in (probe.skill_ref, probe.output_spec_ref) if isinstance(ref, Path))
    kept = [d for d in diagnostics if _is_reported(d, session, fixture_paths or set())]
    kept.sort(key=Diagnostic.sort_key)
    return _dedupe(kept), checked


def _run(rule: Rule, context, path: Path, probe_folder: Path | None) -> list[Diagnostic]:
    """``rule.check(context)``, with any crash turned into SE000 for ``path``."""
    try:
        found = list(rule.check(context))
    except Exception as error:  # noqa: BLE001 - a crashing rule must not stop the run
        import traceback

        return [InternalError.from_exception(rule, error, path, traceback.format_exc())]
    if found and probe_folder is not None:
        found = [d if d.probe is not None else _with_probe(d, probe_folder) for d in found]
    return found


def _with_probe(diagnostic: Diagnostic, folder: Path) -> Diagnostic:
    return diagnostic._replace(probe=folder)


def _is_reported(diagnostic: Diagnostic, session: LintSession, fixture_paths: set[Path]) -> bool:
    """Apply config (select/ignore/per-file-ignores) and suppressions."""
    config = session.config
    if not config.is_enabled(diagnostic.code, diagnostic.path, session.root):
        return False
    if diagnostic.probe is not None:
        probe = session.probe(diagnostic.probe / "probe.json")
        if diagnostic.code in probe.disabled_codes:
            return False
    if diagnostic.code != "SE000" and session.takes_directives(diagnostic.path, fixture_paths):
        loaded = session.load(diagnostic.path)
        if isinstance(loaded, TextDocument) and "skill-eval" in loaded.text:
            if parse_markdown(loaded.text).is_suppressed(diagnostic.code, diagnostic.start.line):
                return False
    return True


def _dedupe(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    seen = set()
    unique = []
    for diagnostic in diagnostics:
        key = (diagnostic.code, diagnostic.span, diagnostic.message)
        if key not in seen:
            seen.add(key)
            unique.append(diagnostic)
    return unique


__all__ = ["LintResult", "Span", "enabled_rules", "lint_paths", "lint_probes_in_workers", "lint_targets"]
