"""What rules read: one lint session per workspace root, and a context per
probe, skill, output spec and workspace.

Everything is computed lazily and at most once per session: a rule that
needs the window of a probe asks ``context.window``; the SKILL.md behind it is
read through the session's reader and parsed once however many probes use it.
"""

from __future__ import annotations

import errno
import os
from ._cached import cached_property
from pathlib import Path
from typing import Any, Iterable, Iterator, NamedTuple

from .config import Config
from .markdown import Heading, MarkdownDocument, Window, parse_markdown
from .outputspec import OutputSpec, parse_output_spec
from .probejson import ProbeJson, pointer
from .quotes import QuoteMatch, find_quote
from .reader import FileTooLarge, NotRegularFile, Reader
from .textfile import Span, TextDocument, UnreadableFile
from .workspace import OUTPUT_SPEC_FILE, PROBE_FILE, SKILL_FILE, Exclusion


RECORDS_MAX_SIZE = 64 * 1024 * 1024
"""The size limit of the files the calibration rules read (runs files,
frozen.json) when ``max-file-size`` is lower: a runs file holds one record per
start, and may well pass the text files' 1 MiB."""


def _encodable(name: str) -> bool:
    """Whether ``name`` can be given to the operating system (a lone
    surrogate that is no escaped byte cannot)."""
    if name.isascii():
        return True
    try:
        os.fsencode(name)
    except UnicodeError:
        return False
    return True


class FileProblem(NamedTuple):
    """A file that cannot be used, and why.

    ``kind`` is ``missing``, ``unreadable`` (SE005), ``outside`` the workspace
    (SE004) or ``loop`` (a symbolic-link loop, reported as unreadable).
    """

    path: Path
    kind: str
    message: str
    fix: str
    line: int = 1
    column: int = 1

    @property
    def span(self) -> Span:
        return Span.at(self.path, self.line, self.column, self.line, self.column)


class LintSession:
    """Shared state of one lint run over one workspace root."""

    def __init__(
        self,
        root: Path,
        config: Config,
        reader: Reader,
        probe_paths: list[Path] | None = None,
        walked_fixtures: set[Path] | None = None,
        pruned_folders: list[str] | None = None,
        walked_links: list[str] | None = None,
    ) -> None:
        """``probe_paths``, when the caller already walked the whole workspace,
        spares :attr:`all_probe_paths` a second walk; ``walked_fixtures`` (every
        SKILL.md and output-spec.md that walk found) spares :meth:`nearest` a
        ``stat`` in each folder without one; ``pruned_folders`` (the folders it
        left out by name) spares the calibration rules a walk for the runs
        files; ``walked_links`` (every symbolic link it listed), given when
        the fixtures are exactly those that walk found, spares :meth:`resolve`
        an ``lstat`` for each file in a folder of theirs that is no link (~2
        per probe). All describe the files as they are for this session (the
        CLI's); a long-lived session leaves them out."""
        self.root = root
        self.config = config
        self.reader = reader
        self._documents: dict[Path, TextDocument | FileProblem] = {}
        self._raw: dict[Path, bytes | None] = {}
        self._probes: dict[Path, ProbeContext] = {}
        self._skills: dict[Path, SkillContext] = {}
        self._output_specs: dict[Path, OutputSpecContext] = {}
        self._nearest: dict[tuple[str, str], Path | None] = {}
        self._resolved: dict[tuple[Path, str], Path | FileProblem] = {}
        self._resolved_found: dict[Path, Path | FileProblem] = {}
        if probe_paths is not None:
            self.__dict__["all_probe_paths"] = list(probe_paths)
        self._walked_fixtures = walked_fixtures
        self.pruned_folders = pruned_folders
        self._walked_links = None if walked_links is None else frozenset(walked_links)
        self._real_folders: dict[str, str] = {}

    @cached_property
    def resolved_root(self) -> Path:
        return Path(os.path.realpath(self.root))

    def load(self, path: Path, resolved: bool = False) -> TextDocument | FileProblem:
        """Read and decode ``path`` once per session, through :meth:`read_safely`
        (``resolved``: the caller got ``path`` from :meth:`resolve`, which
        already required it inside the workspace)."""
        cached = self._documents.get(path)
        if cached is None:
            cached = self._documents[path] = self._load(path, resolved)
        return cached

    def read_raw(self, path: Path) -> bytes | None:
        """``path``'s bytes through :meth:`read_safely` (bounded by
        :data:`RECORDS_MAX_SIZE`), or ``None`` when it cannot be read (then
        :meth:`raw_problem` tells why); once per session (the probes of a
        suite share its frozen.json, which most suites do not have)."""
        raw = self.raw_problem(path)
        return raw if isinstance(raw, bytes) else None

    def raw_problem(self, path: Path) -> bytes | FileProblem:
        """What :meth:`read_raw` read: the bytes, or why they could not be read."""
        try:
            return self._raw[path]
        except KeyError:
            pass
        raw = self._raw[path] = self.read_safely(path, max(self.config.max_file_size, RECORDS_MAX_SIZE))
        return raw

    def read_safely(self, path: Path, limit: int, resolved: bool = False) -> bytes | FileProblem:
        """The one way the engine reads a file of the workspace: ``path``'s
        bytes, or why it is not read. Its real path must be inside the
        workspace root (``outside`` otherwise, and nothing is opened: a link
        out of a stranger's repository must not leak a file), it must be a
        regular file (a FIFO, a device or a folder is ``unreadable``, never
        waited on) of at most ``limit`` bytes (checked with ``fstat`` before
        reading; at most ``limit`` + 1 bytes are ever read). Read through the
        session's reader, so an editor's unsaved buffer counts.
        ``resolved``: the caller got ``path`` from :meth:`resolve`."""
        if not resolved and not self._walked_inside(path):
            found = self._resolve(path.parent, path.name, remember=False)
            if isinstance(found, FileProblem):
                return found
        try:
            return self.reader.read_bytes(path, limit)
        except FileNotFoundError:
            return FileProblem(path, "missing", f"{path.name} does not exist", "create it or fix the path")
        except IsADirectoryError:
            return FileProblem(path, "unreadable", f"{path.name} is a folder, not a file", "point at a file")
        except NotRegularFile as error:
            return FileProblem(path, "unreadable", f"{path.name} {error.strerror}", "replace it with a regular file")
        except FileTooLarge as error:
            return FileProblem(path, "unreadable", f"file is {error.size:,} bytes, over the {error.limit:,}-byte size limit",
                               "shorten the file, or raise `max-file-size` in skill-eval.toml")
        except OSError as error:
            if error.errno == errno.ELOOP:
                return FileProblem(path, "loop", f"{path.name} is a symbolic-link loop", "replace the link with a file")
            if error.errno in (errno.ENOTDIR, errno.ENAMETOOLONG):
                return FileProblem(path, "missing", f"{path.name} does not exist", "create it or fix the path")
            return FileProblem(path, "unreadable", f"cannot read {path.name}: {error.strerror or error}", "check the file's permissions")
        except ValueError:  # a NUL in the path, or a name the file system cannot encode: no such file
            return FileProblem(path, "missing", f"{path.name!r} cannot name a file", "fix the path")

    def _walked_inside(self, path: Path) -> bool:
        """Whether the CLI's walk listed ``path`` as no link in a folder it
        walked (so inside the workspace), told without making a ``Path``
        (:meth:`_resolve`'s first test, for the walked files themselves)."""
        if self._walked_links is None:
            return False
        text = str(path)
        return text not in self._walked_links and os.path.dirname(text) in self._walked_folders

    def _load(self, path: Path, resolved: bool) -> TextDocument | FileProblem:
        raw = self.read_safely(path, self.config.max_file_size, resolved)
        if isinstance(raw, FileProblem):
            return raw
        try:
            return TextDocument.from_bytes(path, raw, self.config.max_file_size)
        except UnreadableFile as error:
            return FileProblem(path, "unreadable", error.reason, error.fix, error.line, error.column)

    def resolve(self, base: Path, relative: str, remember: bool = True) -> Path | FileProblem:
        """``relative`` (from probe.json) joined to ``base``; a problem if it leaves
        the workspace (symlinks resolved first) or loops. Memoized: probes that
        share a SKILL.md share its resolution; a probe's own default artifact
        (``question.md`` in its folder) is resolved once, so not remembered
        (``remember=False``; 10,000 entries were ~1.5 MB in a language server)."""
        if not remember:
            return self._resolved.get((base, relative)) or self._resolve(base, relative, remember=False)
        key = (base, relative)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = self._resolve(base, relative)
        return found

    def resolve_found(self, path: Path) -> Path | FileProblem:
        """:meth:`resolve` of a file found by :meth:`nearest`, memoized by its
        path (the probes that find one SKILL.md share it)."""
        found = self._resolved_found.get(path)
        if found is None:
            found = self._resolved_found[path] = self._resolve(path.parent, path.name)
        return found

    def _resolve(self, base: Path, relative: str, remember: bool = True) -> Path | FileProblem:
        if "\x00" in relative or not _encodable(relative):
            # no file can have this name: os calls would raise ValueError
            return FileProblem(base / relative.replace("\x00", "\\0"), "missing", f"{relative!r} cannot name a file",
                               "fix the path")
        if os.sep in relative or relative in (".", "..") or (os.altsep and os.altsep in relative):
            joined = Path(os.path.normpath(os.path.join(base, relative)))
        else:
            joined = base / relative  # a plain file name: already normal
        if self._walked_links is not None:
            text = str(joined)
            if text not in self._walked_links and os.path.dirname(text) in self._walked_folders:
                return joined  # in a folder the walk listed, and no link there: inside the workspace
        try:
            real = self._realpath(str(joined), remember)
        except OSError as error:
            if error.errno == errno.ELOOP:
                return FileProblem(joined, "loop", f"{relative} is a symbolic-link loop", "replace the link with a file")
            return FileProblem(joined, "missing", f"{relative} cannot be found: {error.strerror or error}", "fix the path")
        except (RuntimeError, ValueError):
            return FileProblem(joined, "loop", f"{relative} is a symbolic-link loop", "replace the link with a file")
        root = str(self.resolved_root)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            return FileProblem(joined, "outside", f"{relative} resolves outside the workspace root {self.root}",
                               "keep skills, specs and artifacts inside the workspace")
        return joined

    def _realpath(self, path: str, remember_folder: bool = True) -> str:
        """``os.path.realpath`` with the real paths of folders memoized: probes
        share their ancestors, so each new folder costs one ``lstat``
        (``remember_folder=False``: the file's own folder is not remembered,
        its ancestors are)."""
        parent, name = os.path.split(path)
        if not name:
            return parent
        real_parent = self._real_folders.get(parent)
        if real_parent is None:
            real_parent = self._realpath(parent)
            if remember_folder:
                self._real_folders[parent] = real_parent
        candidate = os.path.join(real_parent, name)
        return os.path.realpath(candidate) if os.path.islink(candidate) else candidate

    def takes_directives(self, path: Path, fixture_paths: set[Path] | None = None) -> bool:
        """Whether ``path`` honours ``<!-- skill-eval: ... -->`` directives: SKILL.md
        and output-spec files do; an artifact never does (it travels to the agent
        byte for byte, so a directive there would leak the defect).

        ``fixture_paths`` is :attr:`markdown_fixture_paths`, when the caller has it."""
        if path.name in (SKILL_FILE, OUTPUT_SPEC_FILE):
            return True
        if path.suffix.lower() != ".md":
            return False
        return path in (self.markdown_fixture_paths if fixture_paths is None else fixture_paths)

    @property
    def markdown_fixture_paths(self) -> set[Path]:
        """Skill and output-spec paths that probes of this session reference."""
        paths = set()
        for probe in self._probes.values():
            for key in ("skill_ref", "output_spec_ref"):
                ref = probe.__dict__.get(key)
                if isinstance(ref, Path):
                    paths.add(ref)
        return paths

    def nearest(self, start: Path, name: str, remember: bool = True) -> Path | None:
        """The nearest ``name`` walking up from ``start`` to the workspace root
        (memoized per folder: sibling probes share the walk). A probe asks
        for its own folder once, so it passes ``remember=False``: only the
        folders above, which siblings share, are remembered."""
        return self._nearest_below(str(start), name, remember)

    def _nearest_below(self, folder: str, name: str, remember: bool) -> Path | None:
        """:meth:`nearest` on folder names (memo keys are strings: hashing and
        comparing ``Path`` objects runs Python code, and a walk up made a
        ``Path`` per folder). A file the CLI's walk found is returned as the
        walk's own ``Path``."""
        key = (folder, name)
        if key in self._nearest:
            return self._nearest[key]
        candidate = os.path.join(folder, name)
        walked = self._walked_by_name if name in (SKILL_FILE, OUTPUT_SPEC_FILE) else None
        found = walked.get(candidate) if walked is not None else Path(candidate)
        if found is not None and not self.reader.is_file(found):
            found = None  # e.g. a dangling link the walk listed
        if found is None and folder != self._root_text and folder.startswith(self._root_prefix):
            found = self._nearest_below(os.path.dirname(folder), name, True)
        if remember:
            self._nearest[key] = found
        return found

    @cached_property
    def _walked_folders(self) -> frozenset[str]:
        """The folders of the walked fixtures (only with ``walked_links``):
        folders the walk listed, below the workspace root and reached
        without following a link, so their real paths are inside it."""
        paths = self.all_probe_paths + list(self._walked_fixtures or ())
        return frozenset(os.path.dirname(str(path)) for path in paths)

    @cached_property
    def _walked_by_name(self) -> dict[str, Path] | None:
        """The walked SKILL.md and output-spec files by their path's text."""
        return None if self._walked_fixtures is None else {str(path): path for path in self._walked_fixtures}

    @cached_property
    def _root_text(self) -> str:
        return str(self.root)

    @cached_property
    def _root_prefix(self) -> str:
        return str(self.root).rstrip(os.sep) + os.sep

    def probe(self, json_path: Path) -> "ProbeContext":
        context = self._probes.get(json_path)
        if context is None:
            context = self._probes[json_path] = ProbeContext(self, json_path)
        return context

    def skill(self, path: Path) -> "SkillContext":
        context = self._skills.get(path)
        if context is None:
            context = self._skills[path] = SkillContext(self, path)
        return context

    def output_spec(self, path: Path) -> "OutputSpecContext":
        context = self._output_specs.get(path)
        if context is None:
            context = self._output_specs[path] = OutputSpecContext(self, path)
        return context

    @cached_property
    def exclusion(self) -> Exclusion:
        """What the config's ``exclude``/``extend-exclude`` leave out of walks."""
        return Exclusion.of(self.config, self.root)

    @cached_property
    def all_probe_paths(self) -> list[Path]:
        """Every probe.json of the workspace (for workspace-wide checks)."""
        return list(self.reader.walk_files(self.root, frozenset({PROBE_FILE}), exclude=self.exclusion or None))

    def probe_paths_below(self, folder: Path) -> list[Path]:
        """Every probe.json under ``folder``: filtered from :attr:`all_probe_paths`
        when the workspace was already walked, else walked from ``folder``."""
        if "all_probe_paths" not in self.__dict__:
            return list(self.reader.walk_files(folder, frozenset({PROBE_FILE}), exclude=self.exclusion or None))
        prefix = str(folder).rstrip(os.sep) + os.sep
        return [path for path in self.all_probe_paths if str(path).startswith(prefix)]

    def forget(self, path: Path) -> None:
        """Drop what this session cached about ``path`` after its content changed
        (an editor buffer, or the file on disk), or it was created or deleted.

        Its text is read again on next use, and every context that read it (a
        probe whose probe.json, artifact, skill or output spec it is; the skill or
        output spec itself; output specs, whose skills are found around them) is
        rebuilt. A created or deleted SKILL.md or output-spec.md can change which
        file the probes below its folder find by walking up, so those are dropped
        too; a created or deleted probe.json changes the workspace's probe list.
        The language server keeps one session per workspace root and calls this
        instead of re-reading the whole workspace on every edit.
        """
        self.forget_many((path,))

    def forget_many(self, paths: Iterable[Path]) -> None:
        """:meth:`forget` each of ``paths``, in one pass over the caches (a
        deleted folder of 1,000 probes forgets ~2,000 files: one pass each over
        the ~10,000 probes of a large workspace took minutes)."""
        paths = set(paths)
        if not paths:
            return
        for path in paths:
            self._documents.pop(path, None)
            self._raw.pop(path, None)
            self._skills.pop(path, None)
            self._output_specs.pop(path, None)
        walked = [path.parent for path in paths if path.name in (SKILL_FILE, OUTPUT_SPEC_FILE)]
        if walked:
            self._output_specs.clear()
            self._nearest.clear()
        for memo in (self._resolved, self._resolved_found):
            for key in [key for key, found in memo.items() if found in paths or getattr(found, "path", None) in paths]:
                del memo[key]
        walked_below = tuple(str(folder) + os.sep for folder in walked)
        for key, probe in list(self._probes.items()):
            cached = probe.__dict__
            if (
                key in paths
                or cached.get("artifact_ref") in paths
                or cached.get("skill_ref") in paths
                or cached.get("output_spec_ref") in paths
                or (walked_below and (str(probe.folder) + os.sep).startswith(walked_below))
            ):
                del self._probes[key]
        if any(path.name == PROBE_FILE for path in paths):
            self.__dict__.pop("all_probe_paths", None)


class ProbeContext:
    """One probe: its probe.json and, lazily, everything it references."""

    def __init__(self, session: LintSession, json_path: Path) -> None:
        self.session = session
        self.json_path = json_path
        self.folder = json_path.parent

    @property
    def config(self) -> Config:
        return self.session.config

    @cached_property
    def document(self) -> TextDocument | FileProblem:
        """probe.json's text, or why it cannot be read."""
        return self.session.load(self.json_path)

    @cached_property
    def probe(self) -> ProbeJson | None:
        """The parsed probe.json (``None`` if it cannot be read)."""
        document = self.document
        return ProbeJson.parse(document) if isinstance(document, TextDocument) else None

    @cached_property
    def data(self) -> dict[str, Any] | None:
        """probe.json's object, when it parses to one."""
        probe = self.probe
        return probe.data if probe is not None and isinstance(probe.data, dict) else None

    def get(self, key: str, kind: type | tuple[type, ...]) -> Any:
        """``data[key]`` when present and of ``kind`` (bools are not ints), else ``None``."""
        data = self.data
        if data is None:
            return None
        value = data.get(key)
        if isinstance(value, bool) and kind in (int, (int,)):
            return None
        return value if isinstance(value, kind) else None

    @property
    def probe_id(self) -> str | None:
        return self.get("id", str)

    @property
    def version(self) -> int:
        value = self.get("version", int)
        return value if value is not None else 1

    @cached_property
    def disabled_codes(self) -> frozenset[str]:
        """Codes in probe.json's ``x-skill-eval-disable``."""
        value = self.get("x-skill-eval-disable", list)
        return frozenset(v.strip().upper() for v in value or () if isinstance(v, str))

    # -- positions in probe.json ------------------------------------------------

    def value_span(self, *parts: str | int) -> Span:
        """The span of the value at ``parts`` (e.g. ``"defects", 0, "quote"``)."""
        if self.probe is None:
            return Span.file_start(self.json_path)
        return self.probe.value_span(pointer(*parts))

    def key_span(self, *parts: str | int) -> Span:
        if self.probe is None:
            return Span.file_start(self.json_path)
        return self.probe.key_span(pointer(*parts))

    # -- referenced files -------------------------------------------------------

    def _reference(self, key: str, default_name: str | None, walk_name: str | None) -> Path | FileProblem | None:
        if self.data is None:
            return None
        value = self.data.get(key)
        if isinstance(value, str) and value.strip():
            return self.session.resolve(self.folder, value)
        if value is not None:
            return None  # a schema violation, reported by SE002
        if default_name is not None:
            return self.session.resolve(self.folder, default_name, remember=False)
        found = self.session.nearest(self.folder, walk_name, remember=False) if walk_name else None
        if found is None:
            return FileProblem(self.folder / walk_name, "missing",
                               f"no {walk_name} found in this probe's folder or above it (up to the workspace root)",
                               f"add a {walk_name} or set `{key}` in probe.json")
        return self.session.resolve_found(found)

    @cached_property
    def artifact_ref(self) -> Path | FileProblem | None:
        """The artifact's path (``question``, default ``question.md``)."""
        return self._reference("question", "question.md", None)

    @cached_property
    def skill_ref(self) -> Path | FileProblem | None:
        return self._reference("skill", None, SKILL_FILE)

    @cached_property
    def output_spec_ref(self) -> Path | FileProblem | None:
        return self._reference("output_spec", None, OUTPUT_SPEC_FILE)

    def _loaded(self, ref: Path | FileProblem | None) -> TextDocument | FileProblem | None:
        if ref is None or isinstance(ref, FileProblem):
            return ref
        return self.session.load(ref, resolved=True)

    @cached_property
    def artifact_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.artifact_ref)

    @property
    def artifact(self) -> TextDocument | None:
        """The artifact's text, when it can be read."""
        document = self.artifact_document
        return document if isinstance(document, TextDocument) else None

    @cached_property
    def skill_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.skill_ref)

    @property
    def skill(self) -> MarkdownDocument | None:
        """The parsed SKILL.md, when it can be read."""
        document = self.skill_document
        return parse_markdown(document.text) if isinstance(document, TextDocument) else None

    @cached_property
    def output_spec_document(self) -> TextDocument | FileProblem | None:
        return self._loaded(self.output_spec_ref)

    @property
    def output_spec(self) -> OutputSpec | None:
        document = self.output_spec_document
        return parse_output_spec(document.text) if isinstance(document, TextDocument) else None

    # -- anchoring ----------------------------------------------------------------

    @property
    def step_heading(self) -> str | None:
        return self.get("step_heading", str)

    @cached_property
    def heading_matches(self) -> list[Heading] | None:
        """Headings ``step_heading`` names (``None`` when there is no skill or heading)."""
        skill, step_heading = self.skill, self.step_heading
        if skill is None or step_heading is None or not step_heading.strip():
            return None
        return skill.find_headings(step_heading)

    @cached_property
    def window(self) -> Window | None:
        """The SKILL.md section the probe exercises, when it resolves to one."""
        matches = self.heading_matches
        if not matches or len(matches) != 1:
            return None
        return self.skill.window(matches[0])

    def heading_span(self, heading: Heading) -> Span:
        """The span of ``heading`` in SKILL.md."""
        return Span.at(self.skill_document.path, heading.line, heading.column, heading.line, heading.end_column)

    # -- defects --------------------------------------------------------------------

    @cached_property
    def defects(self) -> list[tuple[int, dict[str, Any]]]:
        """``(index, defect)`` for every defect entry that is an object."""
        value = self.get("defects", list)
        return [(i, d) for i, d in enumerate(value or ()) if isinstance(d, dict)]

    @cached_property
    def quote_matches(self) -> dict[int, QuoteMatch]:
        """Defect index -> where its quote occurs in the artifact (string quotes only)."""
        artifact = self.artifact
        if artifact is None:
            return {}
        return {i: find_quote(artifact.text, d["quote"]) for i, d in self.defects if isinstance(d.get("quote"), str)}

    @property
    def present_count(self) -> int:
        """How many defects are present (their quote found exactly once)."""
        return sum(1 for match in self.quote_matches.values() if match.found)

    @cached_property
    def graded_fields(self) -> list[tuple[int, str]]:
        """``(defect index, field name)`` for every field a ``caught_when`` names."""
        fields = []
        for index, defect in self.defects:
            caught_when = defect.get("caught_when")
            if isinstance(caught_when, dict):
                fields.extend((index, name) for name in caught_when)
        return fields


class _FileContext:
    """One markdown fixture file read through the session."""

    def __init__(self, session: LintSession, path: Path) -> None:
        self.session = session
        self.path = path

    @property
    def config(self) -> Config:
        return self.session.config

    @cached_property
    def document(self) -> TextDocument | FileProblem:
        return self.session.load(self.path)


class SkillContext(_FileContext):
    """One SKILL.md."""

    @property
    def markdown(self) -> MarkdownDocument | None:
        document = self.document
        return parse_markdown(document.text) if isinstance(document, TextDocument) else None


class OutputSpecContext(_FileContext):
    """One output-spec.md and the skills that teach its fields."""

    @property
    def spec(self) -> OutputSpec | None:
        document = self.document
        return parse_output_spec(document.text) if isinstance(document, TextDocument) else None

    @cached_property
    def skills(self) -> list[MarkdownDocument]:
        """The SKILL.md nearest above this spec, plus any a probe below names."""
        paths: list[Path] = []
        nearest = self.session.nearest(self.path.parent, SKILL_FILE)
        if nearest is not None:
            paths.append(nearest)
        for probe_path in self.session.probe_paths_below(self.path.parent):
            probe = self.session.probe(probe_path)
            if probe.output_spec_ref == self.path and isinstance(probe.skill_ref, Path) and probe.skill_ref not in paths:
                paths.append(probe.skill_ref)
        documents = []
        for path in paths:
            loaded = self.session.load(path)
            if isinstance(loaded, TextDocument):
                documents.append(parse_markdown(loaded.text))
        return documents


class WorkspaceContext:
    """All probes being linted, and every probe of the workspace."""

    def __init__(
        self, session: LintSession, probes: list[ProbeContext], facts: dict[str, dict[Path, Any]] | None = None
    ) -> None:
        """``facts``: per rule code, :meth:`Rule.probe_facts` already computed
        for some probes (by the parallel CLI's workers, which linted them)."""
        self.session = session
        self.probes = probes
        self._facts = facts or {}
        self.fact_errors: list = []
        """SE000 diagnostics of probes whose facts a rule failed to compute here."""

    def probe_facts(self, rule) -> Iterator[tuple[Path, Any]]:
        """``(probe.json path, facts)`` for every probe of the workspace whose
        ``rule.probe_facts`` is not ``None``, in the order of
        :meth:`all_probes`: the facts given at construction, else computed
        here from the probe (a crash is SE000 for that probe, in
        :attr:`fact_errors`, and the probe is left out)."""
        known = self._facts.get(rule.code, {})
        for path in self.session.all_probe_paths:
            facts = known[path] if path in known else probe_facts_of(rule, self.session.probe(path), self.fact_errors)
            if facts is not None:
                yield path, facts

    @property
    def config(self) -> Config:
        return self.session.config

    def all_probes(self) -> Iterator[ProbeContext]:
        """Every probe of the workspace, linted or not."""
        for path in self.session.all_probe_paths:
            yield self.session.probe(path)


def probe_facts_of(rule, probe: ProbeContext, errors: list) -> Any:
    """``rule.probe_facts(probe)``; if the rule crashes, SE000 for the probe's
    probe.json is appended to ``errors`` and the probe has no facts (it is
    not compared), so every other probe still is."""
    try:
        return rule.probe_facts(probe)
    except Exception as error:  # noqa: BLE001 - a crashing rule must not stop the run
        import traceback

        from .rules.files.se000_internal_error import InternalError

        errors.append(InternalError.from_exception(rule, error, probe.json_path, traceback.format_exc()))
        return None
