"""Probes as the runner sees them: resolved through the engine, hashed, checked.

Probes are found and read with the linter's own :class:`LintSession`, so the
runner resolves artifacts, skills and output specs exactly as the linter does
(fixture-format.md, "Layout"). A probe that cannot be run yields a
:class:`ProbeError`: one line naming the file and the fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable, Sequence

from skill_eval.linter.config import Config, ConfigError, load_config
from skill_eval.linter.context import FileProblem, LintSession, ProbeContext
from skill_eval.linter.outputspec import OutputSpec
from skill_eval.linter.reader import FileSystemReader
from skill_eval.linter.runs import runs_folder, sha256_bytes, suite_folder, suite_runs_files
from skill_eval.linter.textfile import TextDocument
from skill_eval.linter.workspace import PROBE_FILE, absolute, discover, find_workspace_root


class ProbeError(Exception):
    """A probe or workspace that cannot be used; the message names the file and the fix."""


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

    def records(self) -> list[dict[str, Any]]:
        """Every record of this probe id in its suite (all versions, agents)."""
        from skill_eval.linter.runs import read_runs_file

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
        return self.folder / "transcripts"


class Workspace:
    """A workspace root, its config and a lint session to read probes with."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self.session = LintSession(root, config, FileSystemReader())

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
            found |= discover(absolute(raw), reader).probes
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
        return load_probe(self.session.probe(json_path), need_skill=need_skill, need_spec=need_spec)

    def load_all(self, json_paths: Iterable[Path], **needs: bool) -> tuple[list[Probe], list[str]]:
        """Probes that can be used, and one error line per probe that cannot."""
        probes, errors = [], []
        for path in json_paths:
            try:
                probes.append(self.load(path, **needs))
            except ProbeError as error:
                errors.append(str(error))
        return probes, errors


def _problem(path: Path, problem: FileProblem | None, what: str, fix: str) -> ProbeError:
    if isinstance(problem, FileProblem):
        return ProbeError(f"{path}: {what}: {problem.message}; {problem.fix}")
    return ProbeError(f"{path}: {what}; {fix}")


def load_probe(context: ProbeContext, *, need_skill: bool = True, need_spec: bool = True) -> Probe:
    """A :class:`Probe` from a lint context, or :class:`ProbeError`."""
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
    skill_path = skill_ref if isinstance(skill_ref, Path) else None
    if skill_path is not None:
        skill_document = context.skill_document
        if isinstance(skill_document, TextDocument):
            skill_bytes = context.session.reader.read_bytes(skill_path)
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
        probe_bytes=context.session.reader.read_bytes(path),
        artifact_path=artifact.path,
        artifact_bytes=context.session.reader.read_bytes(artifact.path),
        skill_path=skill_path,
        skill_bytes=skill_bytes,
        output_spec_path=spec_ref if isinstance(spec_ref, Path) else None,
        output_spec=spec,
        suite=suite_folder(skill_path, path.parent),
    )


__all__ = ["Probe", "ProbeError", "Workspace", "load_probe", "PROBE_FILE"]
