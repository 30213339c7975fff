"""Probes as the runner sees them: resolved through the engine, hashed, checked.

Probes are found and read with the linter's own :class:`LintSession`, so the
runner resolves artifacts, skills and output specs exactly as the linter does
(fixture-format.md, "Layout"). A probe that cannot be run yields a
:class:`ProbeError`: one line naming the file and the fix.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from skill_eval.linter.config import Config, ConfigError, load_config
from skill_eval.linter.context import FileProblem, LintSession, ProbeContext
from skill_eval.linter.outputspec import OutputSpec
from skill_eval.linter.reader import TOOL_FOLDERS, FileSystemReader, FileTooLarge, read_regular_file
from skill_eval.linter.run_records import runs_folder, sha256_bytes, suite_folder, suite_runs_files
from skill_eval.linter.textfile import TextDocument
from skill_eval.linter.workspace import PROBE_FILE, Exclusion, absolute, discover, find_workspace_root


class ProbeError(Exception):
    """A probe or workspace that cannot be used; the message names the file and the fix."""


MAX_SKILL_TREE = 64 * 1024 * 1024
"""Bytes a skill folder may hold besides what :func:`read_skill_tree` leaves
out: all of it is hashed for the rep identity and copied for the treatment."""

SKILL_TREE_SKIPPED = TOOL_FOLDERS | {"evals"}
"""Folder names :func:`read_skill_tree` never descends into: the suite's
``evals/`` and the engine's VCS and tool folders (besides virtual
environments and folders holding a probe.json)."""


def tree_sha256(files: Iterable[tuple[str, bytes]]) -> str:
    """sha256 over ``(relative path, bytes)`` pairs, in any order: each path
    (UTF-8, ``/``-separated) and its bytes, length-prefixed, sorted by path.
    Two folders hash alike exactly when they hold the same files with the same
    bytes (a rename, a new file or a removed one changes it too)."""
    digest = hashlib.sha256()
    for name, data in sorted((name.encode("utf-8", "surrogateescape"), data) for name, data in files):
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


@dataclass(frozen=True, eq=False)
class SkillTree:
    """The files of a skill folder as the treatment's copy holds them (read
    once per run: the copy is made from these bytes, so what was hashed is
    what the agent gets)."""

    folder: Path
    files: tuple[tuple[str, bytes, int], ...]
    """``(relative path, bytes, mode)`` of every file, sorted by path."""
    holds_probe: bool = False
    """The skill folder itself holds a probe.json (no copy can be made that
    leaves the answer key out)."""

    @cached_property
    def sha256(self) -> str:
        """:func:`tree_sha256` of :attr:`files`: the record's ``skill_tree_sha256``."""
        return tree_sha256((name, data) for name, data, _mode in self.files)


def read_skill_tree(folder: Path, limit: int = MAX_SKILL_TREE) -> SkillTree:
    """Every file of the skill ``folder`` but ``evals/`` folders, folders
    holding a probe.json (probes, their transcripts), VCS and tool folders
    (:data:`~skill_eval.linter.reader.TOOL_FOLDERS`: ``.git``,
    ``node_modules``, caches), virtual environments and anything that is not
    a regular file: symbolic links are never
    followed (a link cannot bring a file from outside the workspace into the
    hash or the copy), FIFOs and devices are never opened. Each file is read
    through the engine's :func:`read_regular_file`, bounded by what remains of
    ``limit`` (the folder's total). :class:`ProbeError` names the file when
    one cannot be read or the folder is over ``limit``."""
    files: list[tuple[str, bytes, int]] = []
    total = 0
    holds_probe = False
    pending = [(str(folder), "")]
    while pending:
        current, prefix = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            raise ProbeError(f"{current}: cannot list the skill folder ({error.strerror or error}); "
                             "check its permissions") from None
        names = {entry.name for entry in entries}
        if "pyvenv.cfg" in names:
            continue  # a virtual environment
        if PROBE_FILE in names:
            if prefix:
                continue  # a probe (or its transcripts): the answer key
            holds_probe = True
        for entry in entries:
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in SKILL_TREE_SKIPPED:
                        pending.append((entry.path, f"{prefix}{entry.name}/"))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue  # a FIFO, a socket, a device: nothing an agent could be given
                data = read_regular_file(entry.path, limit - total)
                mode = entry.stat(follow_symlinks=False).st_mode & 0o777
            except FileTooLarge:
                raise ProbeError(f"{folder}: the skill folder holds over {limit:,} bytes besides evals/ "
                                 f"(at {entry.path}); move large files out of it (the treatment gets a copy "
                                 "per start)") from None
            except OSError as error:
                raise ProbeError(f"{entry.path}: cannot read this file of the skill folder "
                                 f"({error.strerror or error}); fix its permissions or move it out of "
                                 f"{folder}") from None
            total += len(data)
            files.append((prefix + entry.name, data, mode))
    files.sort(key=lambda item: item[0].encode("utf-8", "surrogateescape"))
    return SkillTree(folder, tuple(files), holds_probe)


@dataclass(frozen=True)
class Probe:
    """Everything the runner needs of one probe, read once."""

    json_path: Path
    probe_id: str
    version: int
    kind: str | None
    band: dict[str, int] | None
    defects: tuple[dict[str, Any], ...]
    probe_bytes: bytes
    artifact_path: Path
    artifact_bytes: bytes
    skill_path: Path | None
    skill_bytes: bytes | None
    output_spec_path: Path | None
    output_spec: OutputSpec | None
    suite: Path
    skill_tree: SkillTree | None = None
    """The skill folder's files (:func:`read_skill_tree`); ``None`` without a
    skill, or when it could not be read and the caller did not need it."""
    input_files: tuple[tuple[str, bytes], ...] = field(default=(), repr=False)
    """Input files laid out beside the artifact, ``(relative path, bytes)``:
    a skill-creator eval's ``files`` (:mod:`skill_eval.evals.suites`)."""
    session: LintSession | None = field(default=None, compare=False, repr=False)
    """The lint session the probe was read with: :meth:`read_file` reads the
    probe's other files (transcripts) through it."""

    def read_file(self, path: Path, what: str, limit: int | None = None) -> bytes:
        """``path``'s bytes through the engine's one safe read
        (:func:`read_in_workspace`), bounded by ``limit`` (default: the
        config's ``max-file-size``)."""
        if self.session is None:
            raise ProbeError(f"{path}: cannot read {what}: the probe was not read from a workspace")
        return read_in_workspace(self.session, path, what, limit)

    @property
    def folder(self) -> Path:
        return self.json_path.parent

    @cached_property
    def probe_sha256(self) -> str:
        return sha256_bytes(self.probe_bytes)

    @cached_property
    def artifact_sha256(self) -> str:
        return sha256_bytes(self.artifact_bytes)

    @cached_property
    def skill_sha256(self) -> str | None:
        return sha256_bytes(self.skill_bytes) if self.skill_bytes is not None else None

    @property
    def skill_tree_sha256(self) -> str | None:
        """sha256 over every file of the skill folder the treatment's copy
        holds (:func:`read_skill_tree`, :func:`tree_sha256`): part of a rep's
        identity, so an edit of any file of the skill (a reference, a script,
        not only SKILL.md) makes earlier reps another identity."""
        return self.skill_tree.sha256 if self.skill_tree is not None else None

    def records(self) -> list[dict[str, Any]]:
        """Every record of this probe id in its suite (all versions, agents)."""
        from .records import read_runs_file

        return [record for path in suite_runs_files(self.suite) for _line, record in read_runs_file(path).records
                if record.get("probe") == self.probe_id]

    @property
    def runs_folder(self) -> Path:
        return runs_folder(self.suite)

    @property
    def defect_ids(self) -> list[str]:
        return [str(d.get("id")) for d in self.defects]

    @property
    def transcripts_folder(self) -> Path:
        if self.json_path.name != PROBE_FILE:  # a skill-creator eval: transcripts/<eval-id>/ beside its suite
            return self.folder / "transcripts" / self.probe_id
        return self.folder / "transcripts"


class Workspace:
    """A workspace root, its config and a lint session to read probes with."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.session = LintSession(root, config, FileSystemReader())
        self._skill_trees: dict[Path, SkillTree | ProbeError] = {}

    def skill_tree(self, folder: Path) -> SkillTree:
        """:func:`read_skill_tree` of ``folder``, once per workspace (the probes
        of a suite share their skill); :class:`ProbeError` when it cannot be read."""
        found = self._skill_trees.get(folder)
        if found is None:
            try:
                found = read_skill_tree(folder)
            except ProbeError as error:
                found = error
            self._skill_trees[folder] = found
        if isinstance(found, ProbeError):
            raise found
        return found

    @classmethod
    def open(cls, paths: Sequence[Path | str], config_path: Path | None = None) -> "Workspace":
        start = absolute(paths[0]) if paths else absolute(Path.cwd())
        if not start.exists():
            raise ProbeError(f"{paths[0]}: no such file or folder; pass a probe folder, a probe.json or a skill folder")
        root = find_workspace_root(start)
        for other in paths[1:]:
            other_path = absolute(other)
            if not other_path.exists():
                raise ProbeError(f"{other}: no such file or folder; pass a probe folder, a probe.json or a skill folder")
            if find_workspace_root(other_path) != root:
                raise ProbeError(f"{other}: belongs to another workspace than {paths[0]}; run each workspace separately")
        if config_path is not None and not Path(config_path).is_file():
            raise ProbeError(f"{config_path}: no such config file; fix the --config path")
        try:
            config = load_config(root, Path(config_path) if config_path else None)
        except ConfigError as error:
            raise ProbeError(f"{error}") from None
        return cls(root, config)

    def probe_paths(self, paths: Sequence[Path | str] = (), ids: Sequence[str] = ()) -> list[Path]:
        """probe.json files for ``paths`` (default: the whole workspace) and ``ids``."""
        found: set[Path] = set()
        reader = self.session.reader
        for raw in paths:
            found |= discover(absolute(raw), reader, exclude=Exclusion.of(self.config, self.root)).probes
        if ids:
            by_id: dict[str, list[Path]] = {}
            for path in self.session.all_probe_paths:
                probe_id = self.session.probe(path).probe_id
                if probe_id is not None:
                    by_id.setdefault(probe_id, []).append(path)
            for wanted in ids:
                if wanted not in by_id:
                    raise ProbeError(f"{self.root}: no probe with id {wanted!r} in this workspace; check the id in probe.json")
                found.update(by_id[wanted])
        if not paths and not ids:
            found = set(self.session.all_probe_paths)
        return sorted(found)

    def load(self, json_path: Path, *, need_skill: bool = True, need_spec: bool = True) -> Probe:
        return load_probe(self.session.probe(json_path), need_skill=need_skill, need_spec=need_spec,
                          skill_tree=self.skill_tree)

    def load_all(self, json_paths: Iterable[Path], **needs: bool) -> tuple[list[Probe], list[str]]:
        """Probes that can be used, and one error line per probe that cannot."""
        probes, errors = [], []
        for path in json_paths:
            try:
                probes.append(self.load(path, **needs))
            except ProbeError as error:
                errors.append(str(error))
        return probes, errors


def read_in_workspace(session: LintSession, path: Path, what: str, limit: int | None = None,
                      resolved: bool = False) -> bytes:
    """``path``'s bytes through :meth:`LintSession.read_safely`: its real path
    inside the workspace root (a symbolic link out of it is never opened), a
    regular file (a FIFO or a device is never waited on) of at most ``limit``
    bytes (default: the config's ``max-file-size``; no more is ever read).
    Otherwise :class:`ProbeError`, one line naming the file, what it is and
    the fix. ``resolved``: the session already resolved ``path`` inside the
    workspace (its probe.json, artifact or skill)."""
    raw = session.read_safely(path, session.config.max_file_size if limit is None else limit, resolved)
    if isinstance(raw, FileProblem):
        raise ProbeError(f"{path}: cannot read {what}: {raw.message}; {raw.fix}")
    return raw


def _problem(path: Path, problem: FileProblem | None, what: str, fix: str) -> ProbeError:
    if isinstance(problem, FileProblem):
        where = f" ({problem.path})" if problem.path != path else ""
        return ProbeError(f"{path}: {what}{where}: {problem.message}; {problem.fix}")
    return ProbeError(f"{path}: {what}; {fix}")


def load_probe(context: ProbeContext, *, need_skill: bool = True, need_spec: bool = True,
               skill_tree: Callable[[Path], SkillTree] = read_skill_tree) -> Probe:
    """A :class:`Probe` from a lint context, or :class:`ProbeError`.
    ``skill_tree(folder)`` reads the skill folder (:meth:`Workspace.skill_tree`
    shares one read among the probes of a workspace)."""
    path = context.json_path
    document = context.document
    if not isinstance(document, TextDocument):
        raise _problem(path, document, "cannot read probe.json", "")
    if context.probe is None or context.probe.syntax_error is not None:
        error = context.probe.syntax_error if context.probe else None
        where = f" (line {error.position.line}, column {error.position.column})" if error else ""
        raise ProbeError(f"{path}: probe.json is not valid JSON{where}; run `skill-eval lint` and fix it")
    if context.data is None:
        raise ProbeError(f"{path}: probe.json is not a JSON object; run `skill-eval lint` and fix it")
    probe_id = context.probe_id
    if not probe_id:
        raise ProbeError(f"{path}: probe.json has no string `id`; add one (e.g. \"id\": \"euphemized-coverage\")")
    artifact = context.artifact_document
    if not isinstance(artifact, TextDocument):
        raise _problem(path, artifact, "cannot read the artifact", "fix `question` in probe.json")
    defects = tuple(d for _i, d in context.defects)
    if not any((isinstance(d.get("caught_when"), dict) and d["caught_when"]) or d.get("judge") is not None
               for d in defects):
        raise ProbeError(f"{path}: no defect has a `caught_when` or a `judge`, so nothing would grade the answers; "
                         "add the discriminator")
    skill_ref = context.skill_ref
    skill_bytes = None
    tree = None
    skill_path = skill_ref if isinstance(skill_ref, Path) else None
    if skill_path is not None:
        skill_document = context.skill_document
        if isinstance(skill_document, TextDocument):
            skill_bytes = read_in_workspace(context.session, skill_path, "the skill", resolved=True)
            try:
                tree = skill_tree(skill_path.parent)
            except ProbeError:
                if need_skill:
                    raise
        elif need_skill:
            raise _problem(path, skill_document, "cannot read the skill", "fix `skill` in probe.json")
    elif need_skill:
        raise _problem(path, skill_ref, "this probe has no skill", "add a SKILL.md above it or set `skill` in probe.json")
    spec = context.output_spec
    spec_ref = context.output_spec_ref
    if spec is None and need_spec:
        raise _problem(path, spec_ref if isinstance(spec_ref, FileProblem) else context.output_spec_document,
                       "cannot read the output spec (the agent would not know which fields to answer)",
                       "add an output-spec.md or set `output_spec` in probe.json")
    band = context.get("band", dict)
    return Probe(
        json_path=path,
        probe_id=probe_id,
        version=context.version,
        kind=context.get("kind", str),
        band=dict(band) if band else None,
        defects=defects,
        probe_bytes=read_in_workspace(context.session, path, "probe.json"),
        artifact_path=artifact.path,
        artifact_bytes=read_in_workspace(context.session, artifact.path, "the artifact", resolved=True),
        skill_path=skill_path,
        skill_bytes=skill_bytes,
        output_spec_path=spec_ref if isinstance(spec_ref, Path) else None,
        output_spec=spec,
        suite=suite_folder(skill_path, path.parent),
        skill_tree=tree,
        session=context.session,
    )


__all__ = ["Probe", "ProbeError", "SkillTree", "Workspace", "load_probe", "read_in_workspace", "read_skill_tree", "tree_sha256", "PROBE_FILE"]
