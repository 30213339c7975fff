"""One lint session per workspace root: every file the engine reads, read once
and safely, and (for the cache) a record of what each unit of work asked.

A session answers *queries* (a file's content, where a probe.json's path
leads, the nearest SKILL.md above a folder, the probes below one), each at
most once, and notes those a unit asks (:meth:`LintSession.record_into`) so
that the cache can tell later whether each answer is still the same
(:mod:`.cache`, docs/architecture.md).
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Callable, Hashable, Iterable
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from .config import Config
from .reader import FileTooLarge, NotRegularFile, OutsideRoot, Reader, is_below
from .textfile import Span, TextDocument, UnreadableFile
from .workspace import OUTPUT_SPEC_FILE, PROBE_FILE, SKILL_FILE, Exclusion

if TYPE_CHECKING:  # pragma: no cover
    from .context import OutputSpecContext, ProbeContext, SkillContext

RECORDS_MAX_SIZE = 64 * 1024 * 1024
"""The size limit of the files the calibration rules read (runs files,
frozen.json) when ``max-file-size`` is lower."""

RACY_SECONDS = 2
"""A file changed this recently before it was read gets no stat signature: a
later change within the same clock tick would keep its ``stat`` (git's "racily
clean" entries)."""


def _folder_text(path: str) -> str:
    """``os.path.dirname(path)``, in one string method where that gives the
    same text (POSIX; no doubled separator before the name): the session asks
    it for every answer it checks, which makes ``os.path``'s generality count."""
    if not os.altsep:
        head = path.rpartition(os.sep)[0]
        if head and not head.endswith(os.sep):
            return head
    return os.path.dirname(path)


def _encodable(name: str) -> bool:
    """Whether ``name`` can be given to the operating system (no lone surrogate)."""
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

    def answer(self) -> tuple:
        """This problem as a query's answer (plain data, path included)."""
        return ("problem", str(self.path), self.kind, self.message, self.line, self.column)


def _answer_of(found: Path | FileProblem | None) -> Hashable:
    """``found`` as a query's answer: a path's text, a problem's answer or ``None``."""
    if isinstance(found, FileProblem):
        return found.answer()
    return None if found is None else str(found)


_QUERIES: dict[str, Callable[..., Hashable]] = {}
"""Queries helpers of the rules register (:func:`session_query`), by name."""


def session_query(name: str) -> Callable[[Callable[..., Hashable]], Callable[..., Hashable]]:
    """Register ``function(session, *args)`` as the session query ``name``
    (:meth:`LintSession.query`); its answer must be plain data and depend only
    on the files it reads, so that the cache can ask it again."""

    def register(function: Callable[..., Hashable]) -> Callable[..., Hashable]:
        _QUERIES[name] = function
        return function

    return register


@session_query("workspace-runs")
def _workspace_runs(session: LintSession) -> tuple[str, ...]:
    """Every ``evals/runs/*.jsonl`` of the workspace (from the folders the
    CLI's walk left out, when there was one): what the calibration rules read."""
    from .run_records import find_runs_files, runs_files_in

    pruned = session.pruned_folders
    return tuple(map(str, find_runs_files(session.root) if pruned is None else runs_files_in(pruned)))


@session_query("runs-links-out")
def _runs_links_out(session: LintSession) -> tuple[str, ...]:
    """The symbolic links to run records (:func:`~skill_eval.linter.run_records.runs_links`)
    that lead out of the workspace, resolved as text, never opened (SE004)."""
    from .run_records import find_runs_files, runs_links

    links: Iterable[str] | None = session._walked_links
    if links is None:
        found: list[str] = []
        find_runs_files(session.root, found)
        links = found
    return tuple(link for link in runs_links(links) if not is_below(os.path.realpath(link), session._real_root))


@session_query("suite-runs")
def _suite_runs(session: LintSession, suite: str) -> tuple[str, ...]:
    """The runs files of the suite at ``suite``."""
    from .run_records import suite_runs_files

    return tuple(map(str, suite_runs_files(Path(suite), session.root)))


@session_query("skill-named")
def _skill_named(session: LintSession, name: str) -> tuple[str, ...]:
    """The SKILL.md files whose folder or front-matter ``name`` is ``name`` (:mod:`.suites`)."""
    from .suites import skills_named

    return skills_named(session, name)


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
        observe: bool = False,
    ) -> None:
        """The optional arguments come from a walk of the whole workspace (the
        CLI's; a long-lived session leaves them out) and spare walks, ``stat``
        and ``lstat`` calls: its probes, SKILL.md and output-spec.md files, the
        folders it left out by name, and every symbolic link it listed.
        ``observe``: keep a digest and ``stat`` signature of each file read
        (:meth:`content_answer`), for the cache."""
        self.root = root
        self.config = config
        self.reader = reader
        self.observe = observe
        self._documents: dict[Path, TextDocument | FileProblem] = {}
        self._raw: dict[Path, bytes | FileProblem] = {}
        self._probes: dict[Path, ProbeContext] = {}
        self._skills: dict[Path, SkillContext] = {}
        self._output_specs: dict[Path, OutputSpecContext] = {}
        self._nearest: dict[tuple[str, str], Path | None] = {}
        self._resolved: dict[tuple[Path, str], Path | FileProblem] = {}
        self._answers: dict[tuple, Hashable] = {}
        self._observed: dict[tuple, tuple[Hashable, tuple | None]] = {}
        self._recording: set[tuple] | None = None
        self.derived: dict[Hashable, Any] = {}
        """What rule helpers make of the session's answers, memoized; a helper
        that serves a memo notes the queries behind it (:meth:`note`) on each use."""
        self.probe_facts: dict[Path, Any] = {}
        """Per probe.json, its :class:`~skill_eval.linter.records.ProbeFacts`."""
        if probe_paths is not None:
            self.__dict__["all_probe_paths"] = list(probe_paths)
        self._walked_fixtures = walked_fixtures
        self.pruned_folders = pruned_folders
        self._walked_links = None if walked_links is None else frozenset(walked_links)
        self._real_folders: dict[str, str] = {}

    def spec(self) -> tuple:
        """What rebuilds an equivalent fresh session in another process:
        ``LintSession(*session.spec())`` (the reader must pickle)."""
        walked = self.__dict__.get("all_probe_paths") if self._walked_links is not None or self._walked_fixtures else None
        return (self.root, self.config, self.reader, walked, self._walked_fixtures, self.pruned_folders,
                None if self._walked_links is None else sorted(self._walked_links), self.observe)

    @property
    def walked_fixtures(self) -> frozenset[Path] | set[Path]:
        """The SKILL.md and output-spec.md files the CLI's walk found (none without a walk)."""
        return self._walked_fixtures or frozenset()

    @cached_property
    def path_table(self) -> dict[str, Path]:
        """One ``Path`` per path's text (the walk's own to begin with), shared
        by what comes from other processes and the cache."""
        table: dict[str, Path] = {}
        for paths in (self.__dict__.get("all_probe_paths"), self._walked_fixtures):
            for path in paths or ():
                table[str(path)] = path
        return table

    def adopt_paths(self, paths: Iterable[Path]) -> None:
        """Add ``paths`` (a discovery's) to :attr:`path_table` where it has none."""
        table = self.path_table
        for path in paths:
            table.setdefault(str(path), path)

    def path_of(self, text: str) -> Path:
        """The ``Path`` of ``text`` from :attr:`path_table` (made and kept there when new)."""
        table = self.path_table
        found = table.get(text)
        if found is None:
            found = table[text] = Path(text)
        return found

    def known_path(self, text: str) -> Path:
        """The :attr:`path_table`'s ``Path`` of ``text``, else a new one, not kept."""
        found = self.path_table.get(text)
        return found if found is not None else Path(text)

    @cached_property
    def _real_root(self) -> str:
        """The workspace root's real path."""
        return os.path.realpath(self.root)

    # -- recording what a unit asks ---------------------------------------------------

    def record_into(self, queries: set[tuple] | None) -> None:
        """Note the queries asked from now on (a unit's dependencies) into
        ``queries``; ``None``: stop noting."""
        self._recording = queries

    def note(self, query: tuple) -> None:
        """Note ``query`` for the unit being recorded, if one is."""
        recording = self._recording
        if recording is not None:
            recording.add(query)

    def query(self, name: str, *args: Hashable) -> Hashable:
        """The answer of the registered query ``name`` (:func:`session_query`)
        for ``args``, computed once per session."""
        key = (name, *args)
        self.note(key)
        try:
            return self._answers[key]
        except KeyError:
            answer = self._answers[key] = _QUERIES[name](self, *args)
            return answer

    def answer(self, query: tuple) -> tuple[Hashable, tuple | None]:
        """What ``query`` (as noted while recording) answers now, in this
        session, with the settled ``stat`` signature of a content query's
        file (:meth:`content_answer`; ``None`` for any other query)."""
        kind = query[0]
        if kind == "content":
            return self.content_answer(query[1], query[2])
        if kind == "resolve":
            joined = self._plain_join(query[1], query[2])
            found = joined if joined is not None else _answer_of(self.resolve(Path(query[1]), query[2]))
        elif kind == "nearest":
            found = _answer_of(self._nearest_below(query[1], query[2], True))
        elif kind == "below":
            found = tuple(str(path) for path in self.probe_paths_below(Path(query[1])))
        elif kind == "refs":
            found = self.probe_refs(self.known_path(query[1]))
        else:
            found = self.query(*query)
        return found, None

    def _plain_join(self, base: str, relative: str) -> str | None:
        """``base/relative`` when :meth:`resolve` would give it, told on text: a
        plain name inside the workspace; else ``None`` (:meth:`resolve` answers)."""
        if os.sep in relative or relative in (".", "..", "") or (os.altsep and os.altsep in relative):
            return None
        joined = os.path.join(base, relative)
        if "\x00" not in relative and _encodable(relative) and self._walked_inside(joined):
            return joined
        return joined if self._inside(joined) else None

    def _inside(self, path: str) -> bool:
        """Whether ``path`` (absolute, normal) is inside the workspace once its
        links are followed, as :meth:`_resolve` checks it."""
        if "\x00" in path or not _encodable(path):
            return False
        try:
            real = self._realpath(path, False)
        except (OSError, RuntimeError, ValueError):
            return False
        return is_below(real, self._real_root)

    def content_answer(self, path: str, limit: int) -> tuple[Hashable, tuple | None]:
        """``(answer, stat signature)`` of reading ``path`` with ``limit``, read now
        unless observed already: the answer is ``("bytes", digest)`` or the
        problem's; the signature ``None`` for a file changed within
        :data:`RACY_SECONDS` or not read from disk (an unsaved buffer)."""
        key = ("content", path, limit)
        found = self._observed.get(key)
        if found is None:
            observe, self.observe = self.observe, True
            try:
                self.read_safely(self.known_path(path), limit)
            finally:
                self.observe = observe
            found = self._observed[key]
        return found

    def observed(self) -> dict[tuple, tuple[Hashable, tuple | None]]:
        """Every content query observed so far: ``(answer, signature)`` by query."""
        return self._observed

    # -- reading ----------------------------------------------------------------------

    def load(self, path: Path, resolved: bool = False) -> TextDocument | FileProblem:
        """Read and decode ``path`` once per session, through :meth:`read_safely`
        (``resolved``: the caller got ``path`` from :meth:`resolve`)."""
        self.note(("content", str(path), self.config.max_file_size))
        cached = self._documents.get(path)
        if cached is None:
            cached = self._documents[path] = self._load(path, resolved)
        return cached

    def read_raw(self, path: Path) -> bytes | None:
        """``path``'s bytes (up to :attr:`records_limit`), read once per session,
        or ``None`` when it cannot be read (:meth:`raw_problem` tells why)."""
        raw = self.raw_problem(path)
        return raw if isinstance(raw, bytes) else None

    @property
    def records_limit(self) -> int:
        """The size limit of :meth:`read_raw`: :data:`RECORDS_MAX_SIZE` or ``max-file-size``."""
        return max(self.config.max_file_size, RECORDS_MAX_SIZE)

    def raw_problem(self, path: Path) -> bytes | FileProblem:
        """What :meth:`read_raw` read: the bytes, or why they could not be read."""
        limit = self.records_limit
        self.note(("content", str(path), limit))
        try:
            return self._raw[path]
        except KeyError:
            raw = self._raw[path] = self.read_safely(path, limit)
            return raw

    def read_safely(self, path: Path, limit: int, resolved: bool = False) -> bytes | FileProblem:
        """The one way the engine reads a file of the workspace: ``path``'s bytes,
        or why it is not read (outside the workspace root, not a regular file,
        over ``limit`` bytes: :meth:`~skill_eval.linter.reader.Reader.read_bytes`).
        ``resolved``: the caller got ``path`` from :meth:`resolve`. An observing
        session keeps the answer and the ``stat`` signature taken before the
        read (:meth:`content_answer`)."""
        signature = self.reader.signature(path) if self.observe else None
        found = self._read_safely(path, limit, resolved)
        if self.observe:
            if isinstance(found, FileProblem):
                answer: Hashable = found.answer()
            else:
                from ._hashing import blake2b

                answer = ("bytes", blake2b(found, digest_size=16).digest())
            self._observed[("content", str(path), limit)] = (answer, _settled(signature))
        return found

    def _read_safely(self, path: Path, limit: int, resolved: bool) -> bytes | FileProblem:
        """:meth:`read_safely` without observing."""
        if not resolved and not self._walked_inside(str(path)):
            found = self._resolve(path.parent, path.name, remember=False)
            if isinstance(found, FileProblem):
                return found
        try:
            return self.reader.read_bytes(path, limit, self.root)
        except OutsideRoot:  # a link out, made after the check above: nothing outside was opened
            return FileProblem(path, "outside", f"{path.name} resolves outside the workspace root {self.root}",
                               "keep skills, specs and artifacts inside the workspace")
        except IsADirectoryError:
            return FileProblem(path, "unreadable", f"{path.name} is a folder, not a file", "point at a file")
        except NotRegularFile as error:
            return FileProblem(path, "unreadable", f"{path.name} {error.strerror}", "replace it with a regular file")
        except FileTooLarge as error:
            return FileProblem(path, "unreadable",
                               f"file is {error.size:,} bytes, over the {error.limit:,}-byte size limit",
                               "shorten the file, or raise `max-file-size` in skill-eval.toml")
        except OSError as error:
            if error.errno == errno.ELOOP:
                return FileProblem(path, "loop", f"{path.name} is a symbolic-link loop", "replace the link with a file")
            if isinstance(error, FileNotFoundError) or error.errno in (errno.ENOTDIR, errno.ENAMETOOLONG):
                return FileProblem(path, "missing", f"{path.name} does not exist", "create it or fix the path")
            return FileProblem(path, "unreadable", f"cannot read {path.name}: {error.strerror or error}",
                               "check the file's permissions")
        except ValueError:  # a NUL in the path, or a name the file system cannot encode: no such file
            return FileProblem(path, "missing", f"{path.name!r} cannot name a file", "fix the path")

    def unchanged_since(self, path: str, signature: tuple) -> bool:
        """Whether ``path`` is, by its ``stat``, the file that had the settled
        ``signature`` and still inside the workspace: reading it again would
        answer what it answered then."""
        if self.reader.signature(path) != signature:
            return False
        return self._walked_inside(path) or self._inside(path)

    def _walked_inside(self, path: str) -> bool:
        """Whether the CLI's walk listed ``path`` as no link in a folder it
        walked (so inside the workspace)."""
        links = self._walked_links
        return links is not None and path not in links and _folder_text(path) in self._walked_folders

    def _load(self, path: Path, resolved: bool) -> TextDocument | FileProblem:
        """:meth:`load` of a file not loaded yet."""
        raw = self.read_safely(path, self.config.max_file_size, resolved)
        if isinstance(raw, FileProblem):
            return raw
        try:
            return TextDocument.from_bytes(path, raw, self.config.max_file_size)
        except UnreadableFile as error:
            return FileProblem(path, "unreadable", error.reason, error.fix, error.line, error.column)

    # -- where paths lead --------------------------------------------------------------

    def resolve(self, base: Path, relative: str, remember: bool = True) -> Path | FileProblem:
        """``relative`` (from probe.json) joined to ``base``; a problem if it leaves
        the workspace (symlinks resolved first) or loops. Memoized: probes that
        share a SKILL.md share its resolution; what is resolved once (a probe's
        own ``question.md``) passes ``remember=False``."""
        self.note(("resolve", str(base), relative))
        key = (base, relative)
        found = self._resolved.get(key)
        if found is None:
            found = self._resolve(base, relative, remember)
            if remember:
                self._resolved[key] = found
        return found

    def _resolve(self, base: Path, relative: str, remember: bool = True) -> Path | FileProblem:
        """:meth:`resolve` without memo or note."""
        if "\x00" in relative or not _encodable(relative):  # no file can have this name
            return FileProblem(base / relative.replace("\x00", "\\0"), "missing", f"{relative!r} cannot name a file",
                               "fix the path")
        joined = Path(os.path.normpath(os.path.join(base, relative)))
        if self._walked_inside(str(joined)):
            return joined
        try:
            real = self._realpath(str(joined), remember)
        except (OSError, RuntimeError, ValueError) as error:
            if isinstance(error, OSError) and error.errno != errno.ELOOP:
                message = f"{relative} cannot be found: {error.strerror or error}"
                return FileProblem(joined, "missing", message, "fix the path")
            return FileProblem(joined, "loop", f"{relative} is a symbolic-link loop", "replace the link with a file")
        if not is_below(real, self._real_root):
            return FileProblem(joined, "outside", f"{relative} resolves outside the workspace root {self.root}",
                               "keep skills, specs and artifacts inside the workspace")
        return joined

    def _realpath(self, path: str, remember_folder: bool = True) -> str:
        """``os.path.realpath`` with the real paths of folders memoized
        (``remember_folder=False``: only those above the file's own folder)."""
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

    def nearest(self, start: Path, name: str, remember: bool = True) -> Path | None:
        """The nearest ``name`` walking up from ``start`` to the workspace root,
        memoized per folder (``remember=False``: only the folders above ``start``)."""
        self.note(("nearest", str(start), name))
        return self._nearest_below(str(start), name, remember)

    def _nearest_below(self, folder: str, name: str, remember: bool) -> Path | None:
        """:meth:`nearest` on folder names (a file the CLI's walk found is
        returned as the walk's own ``Path``)."""
        key = (folder, name)
        if key in self._nearest:
            return self._nearest[key]
        walked = self._walked_by_name if name in (SKILL_FILE, OUTPUT_SPEC_FILE) else None
        found = walked.get(key) if walked is not None else Path(os.path.join(folder, name))
        if found is not None and not self.reader.is_file(found):
            found = None  # e.g. a dangling link the walk listed
        if found is None and folder != self._root_prefix and folder.startswith(self._root_prefix):
            found = self._nearest_below(_folder_text(folder), name, True)
        if remember:
            self._nearest[key] = found
        return found

    @cached_property
    def _walked_folders(self) -> frozenset[str]:
        """The folders of the walked fixtures (only with ``walked_links``): reached
        without following a link, so inside the workspace."""
        paths = self.all_probe_paths + list(self._walked_fixtures or ())
        return frozenset(_folder_text(str(path)) for path in paths)

    @cached_property
    def _walked_by_name(self) -> dict[tuple[str, str], Path] | None:
        """The walked SKILL.md and output-spec files by their folder's text and name."""
        return None if self._walked_fixtures is None else {os.path.split(str(path)): path for path in self._walked_fixtures}

    @cached_property
    def _root_prefix(self) -> str:
        """The workspace root's text, ending with a separator."""
        return str(self.root).rstrip(os.sep) + os.sep

    # -- contexts ------------------------------------------------------------------------

    def fresh_probe(self, json_path: Path) -> ProbeContext:
        """A new context of the probe, replacing any kept: what a recorded unit
        reads through it is asked while recording, not served from a memo."""
        from .context import ProbeContext

        context = self._probes[json_path] = ProbeContext(self, json_path)
        return context

    def probe(self, json_path: Path) -> ProbeContext:
        """The probe's context, made once per session."""
        return self._probes.get(json_path) or self.fresh_probe(json_path)

    def skill(self, path: Path) -> SkillContext:
        """The skill's context, made once per session."""
        from .context import SkillContext

        return self._skills.get(path) or self._skills.setdefault(path, SkillContext(self, path))

    def output_spec(self, path: Path) -> OutputSpecContext:
        """The output spec's context, made once per session."""
        from .context import OutputSpecContext

        return self._output_specs.get(path) or self._output_specs.setdefault(path, OutputSpecContext(self, path))

    def probe_refs(self, json_path: Path) -> tuple[Hashable, Hashable, Hashable]:
        """Where the probe's artifact, skill and output spec are (each
        :func:`_answer_of`): from its computed facts, else from a context."""
        self.note(("refs", str(json_path)))
        facts = self.probe_facts.get(json_path)
        if facts is not None:
            return facts.refs
        from .context import ProbeContext

        context = ProbeContext(self, json_path)  # not kept: the probe's unit must find its refs itself
        recording, self._recording = self._recording, None  # the answer is noted, not how it was found
        try:
            return (_answer_of(context.artifact_ref), _answer_of(context.skill_ref), _answer_of(context.output_spec_ref))
        finally:
            self._recording = recording

    @cached_property
    def exclusion(self) -> Exclusion:
        """What the config's ``exclude``/``extend-exclude`` leave out of walks."""
        return Exclusion.of(self.config, self.root)

    @cached_property
    def all_probe_paths(self) -> list[Path]:
        """Every probe.json of the workspace (for workspace-wide checks)."""
        return list(self.reader.walk_files(self.root, frozenset({PROBE_FILE}), exclude=self.exclusion or None))

    def probe_paths_below(self, folder: Path) -> list[Path]:
        """Every probe.json under ``folder`` (from :attr:`all_probe_paths` when walked)."""
        self.note(("below", str(folder)))
        if "all_probe_paths" not in self.__dict__:
            return list(self.reader.walk_files(folder, frozenset({PROBE_FILE}), exclude=self.exclusion or None,
                                               below=self.root))
        prefix = str(folder).rstrip(os.sep) + os.sep
        return [path for path in self.all_probe_paths if str(path).startswith(prefix)]

    # -- after changes (the language server) ----------------------------------------------

    def forget_many(self, paths: Iterable[Path]) -> None:
        """Drop, in one pass, what this session keeps about each of ``paths``
        (changed, created or deleted): its text, every context (and facts)
        that read it and, for a SKILL.md or output-spec.md, the probes below
        its folder. Other probes' facts are the caller's to drop (:meth:`forget_facts`)."""
        paths = set(paths)
        if not paths:
            return
        for path in paths:
            for memo in (self._documents, self._raw, self._skills, self._output_specs, self.probe_facts):
                memo.pop(path, None)
            text = str(path)
            for key in [key for key in self._observed if key[1] == text]:
                del self._observed[key]
        self._answers.clear()
        self.derived.clear()
        walked = [path.parent for path in paths if path.name in (SKILL_FILE, OUTPUT_SPEC_FILE)]
        if walked:
            self._output_specs.clear()
            self._nearest.clear()
        for key, found in list(self._resolved.items()):
            if found in paths or getattr(found, "path", None) in paths:
                del self._resolved[key]
        walked_below = tuple(str(folder) + os.sep for folder in walked)
        for key, probe in list(self._probes.items()):
            cached = probe.__dict__
            refs = (cached.get("artifact_ref"), cached.get("skill_ref"), cached.get("output_spec_ref"))
            if key in paths or any(ref in paths for ref in refs) or (
                    walked_below and (str(probe.folder) + os.sep).startswith(walked_below)):
                del self._probes[key]
                self.probe_facts.pop(key, None)
        if any(path.name == PROBE_FILE for path in paths):
            self.__dict__.pop("all_probe_paths", None)

    def forget_facts(self, probes: Iterable[Path]) -> None:
        """Drop the computed facts of ``probes`` (a file they read changed)."""
        for path in probes:
            self.probe_facts.pop(path, None)


def _settled(signature: tuple | None) -> tuple | None:
    """``signature`` when the file's last change (its mtime and ctime) is at
    least :data:`RACY_SECONDS` old, else ``None``."""
    if signature is None or max(signature[-1], signature[-2]) >= time.time_ns() - RACY_SECONDS * 1_000_000_000:
        return None
    return signature
