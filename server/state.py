"""The engine side of the language server: one long-lived lint state per
workspace root.

Nothing here imports pygls or lsprotocol: positions stay the engine's (1-based
lines, 1-based code-point columns, end exclusive) and the adapter converts them.

How it stays cheap on a large tree:

* one :class:`~skill_eval.linter.context.LintSession` per root lives as long as
  the root's config; an edited buffer or a changed file is dropped from it with
  :meth:`LintSession.forget_many`, so everything else stays parsed;
* a reverse index (file -> probes reading it) says which probes an edit of a
  SKILL.md, output-spec.md, artifact or probe.json affects: only those are
  linted again, with :func:`~skill_eval.linter.engine.lint_targets`;
* diagnostics are stored per *unit* (a probe, a skill, an output spec) and
  gathered per file when published, so re-linting one probe replaces exactly
  its findings.

Rules with the workspace scope (SE006, ...) compare a probe with every other
one: they run separately over the affected probes plus the probes they
currently flag (and the probes their findings point at), and over the whole
workspace when the server is idle (:meth:`WorkspaceState.workspace_pass`).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator, Mapping

from ..linter.config import Config
from ..linter.context import LintSession
from ..linter.diagnostics import Diagnostic
from ..linter.engine import default_jobs, enabled_rules, lint_probe_chunks, lint_targets
from .overlay import OverlayReader
from ..linter.rules.base import Scope
from ..linter.textfile import TextDocument
from ..linter.workspace import (
    OUTPUT_SPEC_FILE,
    PROBE_FILE,
    SKILL_FILE,
    Exclusion,
    Targets,
    absolute,
    discover,
)
from ..linter.suites import configured_suites, is_named_suite, is_walked_suite

CHUNK = 64
"""Probes linted per engine call during a scan (progress is reported between chunks)."""

LOCAL, WIDE = "local", "workspace"
"""Which pass produced a stored unit's diagnostics."""

CALIBRATION_FILES = ("frozen.json",)

PROBE_CHECKS = frozenset({Scope.PROBE})
SKILL_CHECKS = frozenset({Scope.SKILL})
SPEC_CHECKS = frozenset({Scope.OUTPUT_SPEC})
WORKSPACE_CHECKS = frozenset({Scope.WORKSPACE})
SUITE_CHECKS = frozenset({Scope.SUITE})
"""What each kind of unit of the state runs: every rule's checks of that scope
(a probe's findings, SE501's reused examples included, are re-linted with
the probe; the workspace-wide checks run over every probe's facts)."""
"""Files outside the fixture index that calibration rules read (with ``evals/runs``)."""


@dataclass
class Changes:
    """What a state update asks the adapter to publish.

    ``files``: files whose diagnostics changed or that have or had any;
    ``always``: files to publish even if nothing changed (the probe.json of
    every re-linted probe, so a client sees each dependent re-published);
    ``cleared``: files that no longer exist (publish an empty list).
    """

    files: set[Path] = field(default_factory=set)
    always: set[Path] = field(default_factory=set)
    cleared: set[Path] = field(default_factory=set)

    def update(self, other: "Changes") -> None:
        self.files |= other.files
        self.always |= other.always
        self.cleared |= other.cleared

    def all(self) -> set[Path]:
        return self.files | self.always | self.cleared


def is_calibration_file(path: Path) -> bool:
    """Whether ``path`` is an eval-run record file or frozen.json."""
    parts = path.parts
    return path.name in CALIBRATION_FILES or any(
        parts[i] == "evals" and parts[i + 1] == "runs" for i in range(len(parts) - 1)
    )


def release_free_memory() -> None:
    """Hand the C heap's free memory back to the system (glibc's
    ``malloc_trim``; nothing elsewhere). A scan allocates and frees much
    that a long-lived server would otherwise keep resident: the workers'
    pickled results and the cache's records of what each unit read (the
    resident memory after a cold scan drops markedly: docs/performance.md)."""
    import gc
    import sys

    gc.collect()  # cyclic garbage first: arenas it empties can go back too
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):  # not glibc (musl has no malloc_trim)
        pass


class WorkspaceState:
    """Lint state of one workspace root: session, units, stored diagnostics, index."""

    def __init__(
        self, root: Path, config: Config, buffers: Mapping[Path, str], scope: Iterable[Path] = (), jobs: int | None = None,
        cache: bool = True,
    ) -> None:
        """``jobs``: worker processes for the start-up scan's probe checks
        (default: the CPUs this process may use; 1 lints in this process);
        ``cache``: the scan reads and writes the workspace's
        ``.skill-eval-cache/`` (:mod:`skill_eval.linter.cache`)."""
        self.root = root
        self.jobs = default_jobs() if jobs is None else jobs
        self.cache = cache
        self.buffers = buffers
        self.scope: set[Path] = {absolute(folder) for folder in scope}
        self.reader = OverlayReader(buffers)
        self.probes: set[Path] = set()
        self.skills: set[Path] = set()
        self.specs: set[Path] = set()
        self.suites: set[Path] = set()
        """skill-creator suites (``evals.json``, trigger sets: :mod:`skill_eval.linter.suites`)."""
        self.store: dict[tuple[str, Path], list[Diagnostic]] = {}
        self.by_file: dict[Path, set[tuple[str, Path]]] = {}
        self.probe_files: dict[Path, tuple[Path, ...]] = {}
        """probe.json -> (probe.json, artifact, skill, output spec) it reads (missing ones too)."""
        self.dependents: dict[Path, set[Path]] = {}
        """file -> probe.json of the probes reading it (a probe.json is not listed
        as read by its own probe: one set per probe cost memory for nothing;
        docs/performance.md)."""
        self._scanned_elsewhere = False
        """Whether the last scan linted the probes in worker processes or took
        them from the cache (see :meth:`warm_up`)."""
        self._relinted_while_scanning: set[Path] | None = None
        """During a scan: probes an edit re-linted (the scan's findings for them are older)."""
        self.configure(config)

    # -- configuration -------------------------------------------------------------

    def configure(self, config: Config) -> None:
        """Start a new session with ``config`` (stored diagnostics are kept until re-linted)."""
        self.config = config
        self.session = LintSession(self.root, config, self.reader)
        self.rules = enabled_rules(config)
        self.workspace_rules = [rule for rule in self.rules if Scope.WORKSPACE in rule.scopes()]

    # -- discovery -----------------------------------------------------------------

    def discover(self) -> Targets:
        """Every fixture in the state's scope (its folders, or the root)."""
        targets = Targets()
        for folder in sorted(self.scope or {self.root}):
            if self.reader.is_dir(folder):
                exclude = Exclusion.of(self.config, self.root)
                targets.update(discover(folder, self.reader, exclude=exclude))
                targets.suites |= configured_suites(folder, self.root, self.config.suite_globs, exclude or None)
        return targets

    def is_unit(self, path: Path) -> bool:
        return path in self.probes or path in self.skills or path in self.specs or path in self.suites

    def owns(self, path: Path) -> bool:
        """Whether ``path`` lies in this state's root."""
        return path == self.root or self.root in path.parents

    # -- linting -------------------------------------------------------------------

    def scan(self) -> Iterator[tuple[int, int, Changes]]:
        """Lint every unit of the scope; yields ``(done, total, changes)`` per chunk.

        The probes' checks come from the cache where it still holds them, the
        rest from worker processes (so that what they load stays there: this
        process keeps the findings and each probe's facts); then the SKILL.md
        and output-spec units and the workspace-wide rules run here, over the
        facts."""
        targets = self.discover()
        self.probes |= targets.probes
        self.skills |= targets.skills
        self.specs |= targets.output_specs
        self.suites |= targets.suites
        probes = sorted(self.probes)
        if not self.scope and "all_probe_paths" not in self.session.__dict__:
            self.session.all_probe_paths = probes  # the whole workspace was just walked
        others = sorted(self.skills) + sorted(self.specs) + sorted(self.suites)
        self.session.adopt_paths(others)  # findings loaded from workers and the cache name these very Paths
        total = len(probes) + len(others)
        done = 0
        self._relinted_while_scanning = set()
        cache = None
        if self.cache:
            from ..linter.cache import Cache

            self.session.observe = True
            cache = Cache.open(self.session)
        results = None
        try:
            # As many workers as CPUs: this process only merges their results.
            workers = self.jobs if self.jobs > 1 else 0
            results = lint_probe_chunks(self.session, probes, workers=workers, cache=cache)
            self._scanned_elsewhere = bool(probes) and (bool(workers) or cache is not None)
            for chunk, diagnostics in results:
                done += len(chunk)
                # A probe an edit re-linted meanwhile has newer findings than these.
                stale = self._relinted_while_scanning
                if stale:
                    chunk = [path for path in chunk if path not in stale]
                    diagnostics = [d for d in diagnostics if d.probe is None or d.probe / PROBE_FILE not in stale]
                changes = self._store_probe_findings(sorted(chunk), diagnostics, announce=False) if chunk else Changes()
                yield done, total, changes
            changes = self._lint_others(others, cache)
            if cache is not None:
                cache.save()
            yield total, total, changes
        finally:
            self._relinted_while_scanning = None
            self.session.observe = False
            self.session.observed().clear()
            close = getattr(results, "close", None)
            if close is not None:
                close()
            cache = results = None
            release_free_memory()

    def warm_up(self) -> Changes:
        """Lint a probe in this process after a scan whose probe lint ran in
        workers (an open probe if any, else the first), so that what every
        probe's lint builds once per process (phrase matchers, the schema
        validator, parsed skills and specs) exists before the first edit
        arrives rather than delaying it (docs/performance.md)."""
        if not self._scanned_elsewhere or not self.probes:
            return Changes()
        self._scanned_elsewhere = False
        opened = sorted(
            probe for probe in self.probes
            if any(file in self.buffers for file in self.probe_files.get(probe, (probe,)))
        )
        return self.lint_probes(opened[:16] or [min(self.probes)], announce=False)

    def _lint_others(self, others: list[Path], cache=None) -> Changes:
        """The SKILL.md and output-spec units, then the workspace-wide rules over every probe."""
        changes = Changes()
        for path in others:
            changes.update(self.lint_file_unit(path, cache))
        changes.update(self.workspace_pass(None, cache))
        return changes

    def lint_probes(self, paths: Iterable[Path], announce: bool = True) -> Changes:
        """Run the local rules over the probes ``paths``; store their findings.

        ``announce`` publishes every linted probe.json even when its findings
        did not change (after an edit, so a client sees each dependent
        re-published); the start-up scan leaves it off, since a client holds
        no diagnostics yet and an empty list for each clean probe would only
        cost serialization."""
        paths = sorted(set(paths))
        if not paths:
            return Changes()
        diagnostics, _checked = lint_targets(self.session, Targets(probes=set(paths)), scopes=PROBE_CHECKS)
        return self._store_probe_findings(paths, diagnostics, announce)

    def _store_probe_findings(self, paths: list[Path], diagnostics: list[Diagnostic], announce: bool) -> Changes:
        """Store the local rules' findings for the probes ``paths`` (sorted) and index them."""
        changes = Changes()
        found: dict[Path, list[Diagnostic]] = {path: [] for path in paths}
        for diagnostic in diagnostics:
            unit = diagnostic.probe / PROBE_FILE if diagnostic.probe is not None else None
            if unit not in found:  # a probe-scope finding without its probe: keep it with the first
                unit = paths[0]
            found[unit].append(diagnostic)
        for path in paths:
            self._index_probe(path)
            changes.files |= self._set((LOCAL, path), found[path])
            if announce:
                changes.always.add(path)
        return changes

    def lint_file_unit(self, path: Path, cache=None) -> Changes:
        """Run the rules' checks of one SKILL.md or output-spec.md unit."""
        if path.name == SKILL_FILE:
            targets, scopes = Targets(skills={path}), SKILL_CHECKS
        elif path in self.suites:
            targets, scopes = Targets(), SUITE_CHECKS
            targets.suites.add(path)
        else:
            targets, scopes = Targets(output_specs={path}), SPEC_CHECKS
        diagnostics, _checked = lint_targets(self.session, targets, scopes=scopes, cache=cache)
        return Changes(files=self._set((LOCAL, path), diagnostics))

    def workspace_pass(self, probes: set[Path] | None, cache=None) -> Changes:
        """Run the workspace-scope rules over ``probes`` (``None``: all of them),
        plus the probes they flag now and the probes their findings point at.
        ``cache`` (the start-up scan's): the full pass's findings come from it
        while every probe's facts and what the rules read are as recorded."""
        changes = Changes()
        if not self.workspace_rules:
            return changes
        if probes is None:
            subset = set(self.probes)
            full = True
        else:
            flagged = {unit for (kind, unit), found in self.store.items() if kind == WIDE and found and unit in self.probes}
            subset = (set(probes) | flagged) & self.probes
            full = False
        diagnostics = self._run_workspace_rules(subset, cache if full else None)
        if not full:
            hops = set()
            for diagnostic in diagnostics:
                for related in diagnostic.related:
                    hops |= self.dependents.get(related.span.path, set())
                    if related.span.path in self.probes:
                        hops.add(related.span.path)
            hops = (hops & self.probes) - subset
            if hops:
                subset |= hops
                diagnostics = self._run_workspace_rules(subset)
        found: dict[tuple[str, Path], list[Diagnostic]] = {(WIDE, path): [] for path in subset}
        if full:
            found[(WIDE, self.root)] = []
        for diagnostic in diagnostics:
            unit = diagnostic.probe / PROBE_FILE if diagnostic.probe is not None else diagnostic.path
            key = (WIDE, unit) if (WIDE, unit) in found else (WIDE, self.root)
            found.setdefault(key, []).append(diagnostic)
        for key, items in found.items():
            changes.files |= self._set(key, items)
        return changes

    def _run_workspace_rules(self, probes: set[Path], cache=None) -> list[Diagnostic]:
        if not probes:
            return []
        diagnostics, _checked = lint_targets(self.session, Targets(probes=probes), scopes=WORKSPACE_CHECKS, cache=cache)
        return diagnostics

    # -- changes -------------------------------------------------------------------

    def changed(self, paths: Iterable[Path], wide: bool = True) -> Changes:
        """``paths`` have new content (a buffer edit, a save, a change on disk):
        forget them and re-lint every unit that reads them."""
        paths = set(paths)
        self.session.forget_many(paths)
        probes: set[Path] = set()
        file_units: set[Path] = set()
        for path in paths:
            probes |= self.dependents.get(path, set())
        self.session.forget_facts(probes)
        for path in paths:
            if path.name == PROBE_FILE and (path in self.probes or self._in_scope(path)):
                self.probes.add(path)
                probes.add(path)
            if path.name == SKILL_FILE or path in self.skills:
                if path in self.skills or self._in_scope(path):
                    self.skills.add(path)
                    file_units.add(path)
                file_units |= self._specs_reading_skill(path)
            if path.name == OUTPUT_SPEC_FILE and (path in self.specs or self._in_scope(path)):
                self.specs.add(path)
                file_units.add(path)
            if path in self.suites or (is_named_suite(path) and is_walked_suite(path) and self._in_scope(path)):
                self.suites.add(path)
                file_units.add(path)
            if self.suites and path.name != PROBE_FILE and path not in self.dependents:
                file_units |= self.suites  # a suite reads its skill's name and description, and its evals' files
        changes = self.lint_probes(probes)
        if self._relinted_while_scanning is not None:
            self._relinted_while_scanning |= probes
        for path in sorted(file_units):
            changes.update(self.lint_file_unit(path))
        if wide:
            changes.update(self.workspace_pass(probes))
        return changes

    def created(self, paths: Iterable[Path]) -> Changes:
        """Files appeared on disk: new units, and probes that now find a nearer
        SKILL.md / output-spec.md or a missing artifact."""
        affected: set[Path] = set(paths)
        for path in paths:
            if path.name in (SKILL_FILE, OUTPUT_SPEC_FILE):
                below = str(path.parent) + os.sep
                affected |= {probe for probe in self.probes if str(probe).startswith(below)}
        return self.changed(affected)  # which forgets them all

    def removed(self, paths: Iterable[Path]) -> Changes:
        """Files (or folders) disappeared: drop their units and stored findings,
        and re-lint every probe that read them."""
        changes = Changes()
        known = self.probes | self.skills | self.specs | self.suites | set(self.dependents) | set(self.by_file)
        paths = set(paths)
        gone = paths & known
        folders = tuple(str(path) + os.sep for path in paths - gone)
        if folders:  # a deleted folder (or an unknown file): everything known below it
            gone |= {known_path for known_path in known if str(known_path).startswith(folders)}
        self.session.forget_many(gone)
        affected: set[Path] = set()
        for path in gone:
            affected |= self.dependents.get(path, set())
            if path.name in (SKILL_FILE, OUTPUT_SPEC_FILE):
                below = str(path.parent) + os.sep
                affected |= {probe for probe in self.probes if str(probe).startswith(below)}
            if self.is_unit(path):
                self.probes.discard(path)
                self.skills.discard(path)
                self.specs.discard(path)
                self.suites.discard(path)
                for kind in (LOCAL, WIDE):
                    changes.files |= self._set((kind, path), [])
                self._unindex_probe(path)
            changes.cleared.add(path)
        affected -= gone
        changes.update(self.changed(affected))  # which forgets them
        changes.files -= gone
        changes.always -= gone
        return changes

    def relint_all(self) -> Changes:
        """Re-lint every unit in a fresh session (after a config or calibration change)."""
        self.configure(self.config)
        changes = Changes()
        for _done, _total, step in self.scan():
            changes.update(step)
        changes.update(self.warm_up())
        return changes

    # -- queries -------------------------------------------------------------------

    def diagnostics_for(self, path: Path) -> list[Diagnostic]:
        """The findings located in ``path``, as the CLI would report them (sorted, deduplicated)."""
        seen = set()
        result = []
        for key in self.by_file.get(path, ()):
            for diagnostic in self.store.get(key, ()):
                if diagnostic.path != path:
                    continue
                identity = (diagnostic.code, diagnostic.span, diagnostic.message)
                if identity not in seen:
                    seen.add(identity)
                    result.append(diagnostic)
        result.sort(key=Diagnostic.sort_key)
        return result

    def all_diagnostics(self) -> dict[Path, list[Diagnostic]]:
        return {path: found for path in sorted(self.by_file) if (found := self.diagnostics_for(path))}

    def files_with_diagnostics(self) -> set[Path]:
        return set(self.by_file)

    def document(self, path: Path) -> TextDocument | None:
        """``path``'s text as the engine sees it (the buffer if open)."""
        loaded = self.session.load(path)
        return loaded if isinstance(loaded, TextDocument) else None

    def probes_reading(self, path: Path) -> set[Path]:
        """probe.json of every probe that reads ``path`` (its artifact, skill, spec)."""
        return set(self.dependents.get(path, set()))

    # -- internals -----------------------------------------------------------------

    def _in_scope(self, path: Path) -> bool:
        if not self.owns(path):
            return False
        return not self.scope or any(folder == path or folder in path.parents for folder in self.scope)

    def _specs_reading_skill(self, skill: Path) -> set[Path]:
        """Output specs whose SE107 check reads ``skill``: those below its folder,
        and those of the probes using it."""
        specs = {spec for spec in self.specs if skill.parent in spec.parents}
        for probe in self.dependents.get(skill, ()):
            files = self.probe_files.get(probe, ())
            if len(files) > 3 and files[3] in self.specs:
                specs.add(files[3])
        return specs

    def _set(self, key: tuple[str, Path], diagnostics: list[Diagnostic]) -> set[Path]:
        """Store a unit's findings; return the files that had or have some."""
        old = self.store.get(key, [])
        touched = {d.path for d in old} | {d.path for d in diagnostics}
        if diagnostics:
            self.store[key] = diagnostics
        else:
            self.store.pop(key, None)
        for path in {d.path for d in old} - {d.path for d in diagnostics}:
            keys = self.by_file.get(path)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self.by_file[path]
        for path in {d.path for d in diagnostics}:
            self.by_file.setdefault(path, set()).add(key)
        return touched

    def _index_probe(self, path: Path) -> None:
        self._unindex_probe(path)
        files = [path]
        path_of = self.session.path_of  # one Path per file, not one per probe naming it
        for ref in self.session.probe_refs(path):
            if isinstance(ref, str):
                files.append(path_of(ref))
            elif isinstance(ref, tuple):  # a problem: the file it names
                files.append(path_of(ref[1]))
            else:
                files.append(path)
        self.probe_files[path] = tuple(files)
        for file in set(files) - {path}:
            self.dependents.setdefault(file, set()).add(path)

    def _unindex_probe(self, path: Path) -> None:
        for file in self.probe_files.pop(path, ()):
            probes = self.dependents.get(file)
            if probes is not None:
                probes.discard(path)
                if not probes:
                    del self.dependents[file]
