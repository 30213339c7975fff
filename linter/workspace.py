"""Where things are: the workspace root and the fixtures below a path.

fixture-format.md, "Layout": the workspace root is the folder holding
``skill-eval.toml``, a ``pyproject.toml`` with ``[tool.skill-eval]``, or
``.git``, nearest above the linted path; else (an extension, docs/format.md)
the folder of the nearest ``SKILL.md`` at or above it, so that a probe linted
alone finds its skill as a lint of the whole skill does; else the linted path
itself.
"""

from __future__ import annotations

import fnmatch
import operator
import os
from collections.abc import Iterable
from pathlib import Path

from .config import has_pyproject_section
from .reader import Reader
from .suites import SUITE_NAMES, is_named_suite, is_walked_suite

PROBE_FILE = "probe.json"
SKILL_FILE = "SKILL.md"
OUTPUT_SPEC_FILE = "output-spec.md"
FIXTURE_NAMES = frozenset({PROBE_FILE, SKILL_FILE, OUTPUT_SPEC_FILE})
WALKED_NAMES = FIXTURE_NAMES | SUITE_NAMES
"""What a folder walk looks for: the fixtures and skill-creator suites
(:mod:`.suites`: ``evals.json`` and trigger sets in an ``evals`` folder)."""
CONFIG_FILES = frozenset({"skill-eval.toml", "pyproject.toml"})


def absolute(path: Path | str) -> Path:
    """``path`` made absolute and normalized, without resolving symlinks."""
    return Path(os.path.normpath(os.path.abspath(path)))


def find_workspace_root(path: Path) -> Path:
    """The workspace root for ``path`` (a file or a folder)."""
    path = absolute(path)
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        if (folder / "skill-eval.toml").is_file():
            return folder
        pyproject = folder / "pyproject.toml"
        if pyproject.is_file() and has_pyproject_section(pyproject):
            return folder
        if (folder / ".git").exists():
            return folder
    for folder in (start, *start.parents):
        if (folder / SKILL_FILE).is_file():
            return folder
    return start


class Targets:
    """What to lint below some paths: probe files, skills and output specs.

    A plain class, not a dataclass: importing :mod:`dataclasses` adds to every
    start (docs/performance.md)."""

    __slots__ = ("probes", "skills", "output_specs", "pruned", "links", "suites")

    def __init__(
        self,
        probes: set[Path] | None = None,
        skills: set[Path] | None = None,
        output_specs: set[Path] | None = None,
        pruned: list[str] | None = None,
        links: list[str] | None = None,
    ) -> None:
        self.probes: set[Path] = set() if probes is None else probes
        self.skills: set[Path] = set() if skills is None else skills
        self.output_specs: set[Path] = set() if output_specs is None else output_specs
        self.pruned = pruned
        """When these came from walking a folder: the folders that walk left out
        by name (``runs``, ``node_modules``...), for :func:`~skill_eval.linter.run_records.runs_files_in`."""
        self.suites: set[Path] = set()
        """skill-creator suites (``evals.json``, trigger sets: :mod:`.suites`)."""
        self.links = links
        """When these came from walking a folder: every symbolic link that walk
        listed (for :class:`~skill_eval.linter.context.LintSession`, which
        then resolves a file the walk listed as no link without a ``stat``)."""

    def __repr__(self) -> str:
        return f"Targets({len(self.probes)} probes, {len(self.skills)} skills, {len(self.output_specs)} output specs)"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Targets):
            return NotImplemented
        return (self.probes, self.skills, self.output_specs, self.pruned, self.links, self.suites) == (
            other.probes, other.skills, other.output_specs, other.pruned, other.links, other.suites)

    def update(self, other: "Targets") -> None:
        self.probes |= other.probes
        self.skills |= other.skills
        self.output_specs |= other.output_specs
        self.suites |= other.suites


def sorted_paths(paths: Iterable[Path]) -> list[Path]:
    """``sorted(paths)`` in the order ``Path`` comparison gives (part by part),
    several times faster: comparing two ``Path`` objects runs Python code,
    comparing their ``parts`` tuples does not (docs/performance.md)."""
    return sorted(paths, key=_parts)


_parts = operator.attrgetter("parts")


class Exclusion:
    """The config's ``exclude`` and ``extend-exclude`` patterns, as a test of
    one path a folder walk meets (a folder or a fixture file): true to leave
    it out. The globs of ``per-file-ignores`` (:mod:`fnmatch`): a pattern
    without ``/`` matches a file or folder name anywhere below the root
    (``drafts``, ``*.wip``); one with ``/`` matches the path relative to the
    workspace root (``skills/legacy``, ``skills/*/evals/probes/old-*``; a
    leading or trailing ``/`` is ignored). VCS and tool folders
    (:data:`~skill_eval.linter.reader.TOOL_FOLDERS`) are left out always."""

    __slots__ = ("root", "names", "paths")

    def __init__(self, root: Path, patterns: Iterable[str]) -> None:
        self.root = os.fspath(root)
        cleaned = [pattern.strip().strip("/") for pattern in patterns if pattern.strip().strip("/")]
        self.names = tuple(p for p in cleaned if "/" not in p)
        self.paths = tuple(p for p in cleaned if "/" in p)

    @classmethod
    def of(cls, config, root: Path) -> "Exclusion":
        """The exclusion ``config`` (a :class:`~skill_eval.linter.config.Config`) asks for below ``root``."""
        return cls(root, (*config.exclude, *config.extend_exclude))

    def __bool__(self) -> bool:
        return bool(self.names or self.paths)

    def __call__(self, path: str) -> bool:
        name = os.path.basename(path)
        if any(fnmatch.fnmatchcase(name, pattern) for pattern in self.names):
            return True
        if self.paths:
            relative = os.path.relpath(path, self.root).replace(os.sep, "/")
            return any(fnmatch.fnmatchcase(relative, pattern) for pattern in self.paths)
        return False


def discover(path: Path, reader: Reader, exclude: Exclusion | None = None) -> Targets:
    """The fixtures ``path`` stands for.

    A folder: every probe.json, SKILL.md and output-spec.md below it, and
    the skill-creator suites in its ``evals`` folders (:func:`~skill_eval.linter.suites.is_walked_suite`).
    A suite file (:func:`~skill_eval.linter.suites.is_named_suite`): that suite. A
    probe.json: its probe. A SKILL.md or output-spec.md: that file and every
    probe below its folder (they depend on it). Any other file: the probe of
    its folder, if it has one (a changed question.md re-checks its probe). A
    config file (skill-eval.toml, pyproject.toml): everything below its folder,
    since a config change can change every finding.

    ``exclude`` (the config's
    ``exclude``/``extend-exclude``) leaves out what a folder walk meets; a
    file named explicitly is linted all the same, as ruff does.
    """
    walk_exclude = exclude if exclude else None
    path = absolute(path)
    targets = Targets()
    if reader.is_dir(path):
        targets.pruned, targets.links = [], []
        for found in reader.walk_files(path, WALKED_NAMES, targets.pruned, targets.links, walk_exclude):
            _add(targets, found)
        return targets
    name = path.name
    if name in CONFIG_FILES:
        return discover(path.parent, reader, exclude=exclude)
    if name == PROBE_FILE:
        targets.probes.add(path)
    elif is_named_suite(path) and reader.is_file(path):
        targets.suites.add(path)
    elif name in (SKILL_FILE, OUTPUT_SPEC_FILE):
        _add(targets, path)
        targets.probes.update(reader.walk_files(path.parent, frozenset({PROBE_FILE}), exclude=walk_exclude))
    else:
        sibling = path.parent / PROBE_FILE
        if reader.is_file(sibling):
            targets.probes.add(sibling)
    return targets


def _add(targets: Targets, path: Path) -> None:
    if path.name == PROBE_FILE:
        targets.probes.add(path)
    elif path.name == SKILL_FILE:
        targets.skills.add(path)
    elif path.name == OUTPUT_SPEC_FILE:
        targets.output_specs.add(path)
    elif is_walked_suite(path):
        targets.suites.add(path)
