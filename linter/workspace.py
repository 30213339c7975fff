"""Where things are: the workspace root (:func:`find_workspace_root`) and the fixtures below a path."""

from __future__ import annotations

import fnmatch
import operator
import os
from collections.abc import Iterable
from pathlib import Path

import msgspec

from .config import has_pyproject_section
from .reader import Reader
from .suites import SUITE_NAMES, is_named_suite, is_walked_suite

PROBE_FILE = "probe.json"
SKILL_FILE = "SKILL.md"
OUTPUT_SPEC_FILE = "output-spec.md"
FIXTURE_NAMES = frozenset({PROBE_FILE, SKILL_FILE, OUTPUT_SPEC_FILE})
WALKED_NAMES = FIXTURE_NAMES | SUITE_NAMES
"""What a folder walk looks for: the fixtures and skill-creator suites (:mod:`.suites`)."""
CONFIG_FILES = frozenset({"skill-eval.toml", "pyproject.toml"})


def absolute(path: Path | str) -> Path:
    """``path`` made absolute and normalized, without resolving symlinks."""
    return Path(os.path.normpath(os.path.abspath(path)))


def find_workspace_root(path: Path) -> Path:
    """The workspace root of ``path`` (docs/format.md): the nearest folder above it holding
    ``skill-eval.toml``, a ``pyproject.toml`` with ``[tool.skill-eval]``, or ``.git``; else that
    of the nearest ``SKILL.md``; else ``path`` itself (a file's folder)."""
    path = absolute(path)
    start = path if path.is_dir() else path.parent
    for folder in (start, *start.parents):
        pyproject = folder / "pyproject.toml"
        if ((folder / "skill-eval.toml").is_file() or (pyproject.is_file() and has_pyproject_section(pyproject))
                or (folder / ".git").exists()):
            return folder
    return next((folder for folder in (start, *start.parents) if (folder / SKILL_FILE).is_file()), start)


class Targets(msgspec.Struct):
    """What to lint below some paths: probe files, skills, output specs and skill-creator suites."""

    probes: set[Path] = msgspec.field(default_factory=set)
    skills: set[Path] = msgspec.field(default_factory=set)
    output_specs: set[Path] = msgspec.field(default_factory=set)
    pruned: list[str] | None = None
    """From a folder walk: the folders it left out by name (for ``run_records.runs_files_in``)."""
    links: list[str] | None = None
    """From a folder walk: every symbolic link it listed."""
    suites: set[Path] = msgspec.field(default_factory=set)

    def update(self, other: "Targets") -> None:
        """Add the fixtures of ``other`` to these."""
        self.probes |= other.probes
        self.skills |= other.skills
        self.output_specs |= other.output_specs
        self.suites |= other.suites


def sorted_paths(paths: Iterable[Path]) -> list[Path]:
    """``sorted(paths)``, faster by comparing their ``parts`` (docs/performance.md)."""
    return sorted(paths, key=operator.attrgetter("parts"))


class Exclusion:
    """The config's ``exclude`` and ``extend-exclude`` globs as a test of a path a folder walk
    meets (true: leave it out): one without ``/`` matches a name, one with ``/`` the path
    relative to the workspace root."""

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

    A folder: every fixture and skill-creator suite below it. A suite file or
    a probe.json: itself. A SKILL.md or output-spec.md: itself and every probe
    below its folder. A config file: everything below its folder. Any other
    file: the probe of its folder, if any. ``exclude`` leaves out what a folder
    walk meets; a file named explicitly is linted all the same, as ruff does.
    """
    walk_exclude = exclude if exclude else None
    path = absolute(path)
    targets = Targets()
    if reader.is_dir(path):
        targets.pruned, targets.links = [], []
        by_name = {PROBE_FILE: targets.probes, SKILL_FILE: targets.skills, OUTPUT_SPEC_FILE: targets.output_specs}
        for found in reader.walk_files(path, WALKED_NAMES, targets.pruned, targets.links, walk_exclude):
            fixtures = by_name.get(found.name)
            if fixtures is not None:
                fixtures.add(found)
            elif is_walked_suite(found):
                targets.suites.add(found)
        return targets
    name = path.name
    if name in CONFIG_FILES:
        return discover(path.parent, reader, exclude=exclude)
    if name == PROBE_FILE:
        targets.probes.add(path)
    elif is_named_suite(path) and reader.is_file(path):
        targets.suites.add(path)
    elif name in (SKILL_FILE, OUTPUT_SPEC_FILE):
        (targets.skills if name == SKILL_FILE else targets.output_specs).add(path)
        targets.probes.update(reader.walk_files(path.parent, frozenset({PROBE_FILE}), exclude=walk_exclude))
    else:
        sibling = path.parent / PROBE_FILE
        if reader.is_file(sibling):
            targets.probes.add(sibling)
    return targets

