"""The on-disk cache: one file per workspace root and config in
``.skill-eval-cache/``, as ruff's.

What it holds: for each unit (a probe, a SKILL.md, an output-spec.md), its
findings before filtering and, for a probe, its facts
(:class:`~skill_eval.linter.engine.UnitResult`), with every query the unit
asked of its session and the answer it got (:mod:`.session`): the content of
each file it read (a BLAKE2b digest of its bytes, or why it could not be
read), where each path of probe.json led, the nearest SKILL.md above each
folder, the probes below a folder, the runs files of a suite... This is what
makes it more exact than a cache keyed by each file's own content: a unit's
findings are a function of all its answers, the config and the tool.

What it is keyed by: the file's name holds the tool (its version, the
modified times and sizes of its own modules, which hold its registry of
rules, the versions of the libraries that parse for it, the Python that runs
it), the workspace root, the resolved config and the config file's path:
any change there starts a new cache. The config file's bytes are not part
of it: its sections that are not the linter's (the runner's ``[agents]``)
change nothing it reports, and a rule that reads the file (SE503, SE506
point into it) asks it of its session like any other file, so its entries
alone are recomputed when it changes. An entry is used only when
every query it asked gives the same answer now. A file's answer is its
content's digest; a ``stat`` fast path (git's index) spares reading it again
when its device, inode, size, mtime and ctime are those it had when it was
read, and that was at least :data:`~skill_eval.linter.session.RACY_SECONDS`
after its last change (a later change within one tick of the file system's
clock keeps all of them: such a file is read and hashed instead).

A whole-workspace lint also leaves a **run record** (:meth:`Cache.replay`)
in a small file beside it: its findings as reported, and every query its
units and its filtering asked, with their answers (and settled ``stat``
signatures). A repeat lint of the same targets whose every answer is the
same prints those findings: it would have served every unit from its
entry, so it needs neither the rules nor the entries.

The files are MessagePack (:data:`CODEC`): loading it builds data and the
engine's own record types (an allow-list, :data:`RECORD_TYPES`), and runs
no code a workspace could plant. Safe when several lints run at once: the
file is written to a new name and renamed over the old one (a reader sees
the old or the new, never a torn one); the last writer wins, and a lost
entry only costs its recomputation. The folder and the file are opened
relative to the root's descriptor without following links (a
``.skill-eval-cache`` that is a link, or holds links, is not used).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from .config import Config
    from .engine import Unit, UnitResult
    from .session import LintSession

CACHE_DIR = ".skill-eval-cache"
FORMAT = 4
"""The layout of the cache file's data (raise it when it changes)."""

MAX_CACHE_SIZE = 1 << 30
"""A cache file larger than this is not read."""

LIBRARIES = ("markdown_it_py", "mdit_py_plugins", "pyyaml", "msgspec", "tree_sitter", "tree_sitter_json", "jsonschema",
             "rapidfuzz", "google_re2", "jsonschema_rs", "msgpack")
"""Distributions whose versions can change what the rules find or how the
cache is read (their ``*.dist-info`` folders' names go into the key)."""

CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by skill-eval.\n"
                b"# For information about cache directory tags see https://bford.info/cachedir/\n")


class Cache:
    """The cache of one workspace root and config, for one lint session."""

    def __init__(self, session: LintSession, folder_fd: int, key: str) -> None:
        self.session = session
        self._folder_fd: int | None = folder_fd
        self.key = key
        self._entries: dict[tuple[str, str], tuple[Any, tuple]] = {}
        """Unit key -> (result without its dependencies, its ``(query, answer)`` pairs)."""
        self._signatures: dict[tuple, tuple[Hashable, tuple]] = {}
        """Content query -> (answer, the file's ``stat`` signature when it gave it)."""
        self._current: dict[tuple, Hashable] = {}
        """Query -> its answer now (asked once per run)."""
        self._changed = False
        """Whether this run stored an entry or a new signature (the file is then written)."""
        self._used: set[tuple[str, str]] = set()
        self._loaded = False
        self._unrecorded = False
        """Whether a unit's result came without its queries (not stored): a
        run record would then miss what that unit read, and is not written."""
        self._filtering: dict[tuple, tuple] = {}
        """What the run's filtering asked (:meth:`note_filtering`), for the run record."""

    @classmethod
    def open(cls, session: LintSession) -> Cache | None:
        """The cache of ``session``'s root and config, or ``None`` when it
        cannot be used (a folder that is not a plain folder of the root, a
        read-only workspace): the lint then runs without it."""
        folder_fd = _open_cache_folder(session.root)
        if folder_fd is None:
            return None
        return cls(session, folder_fd, cache_key(session))

    @property
    def file_name(self) -> str:
        return f"cache-{self.key}"

    @property
    def run_file_name(self) -> str:
        return f"cache-{self.key}.run"

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        data = _read_file(self._folder_fd, self.file_name)
        if data is None:
            return
        try:
            fmt, pairs, entries, signatures = CODEC.decode(data, self.session.path_table)
            if fmt != FORMAT:
                return
            self._entries = {key: (result_of(row), tuple(pairs[index] for index in asked))
                             for key, (row, asked) in entries.items()}
            self._signatures = {pairs[index][0]: (pairs[index][1], signature) for index, signature in signatures.items()}
        except Exception:  # noqa: BLE001 - an unreadable cache is an empty one
            self._entries, self._signatures = {}, {}

    # -- entries ------------------------------------------------------------------------

    def lookup(self, unit: Unit) -> UnitResult | None:
        """The cached result of ``unit`` when every answer it recorded is the
        answer now, else ``None``. A facts-only entry serves a facts-only unit."""
        self._load()
        key = _unit_key(unit)
        entry = self._entries.get(key)
        if entry is None:
            return None
        result, dependencies = entry
        if unit[0] == "probe" and result.diagnostics is None:
            return None
        current = self._current
        for query, answer in dependencies:
            now = current.get(query, _UNKNOWN)
            if now is _UNKNOWN:
                now = current[query] = self._answer_now(query)
            if now != answer:
                return None
        self._used.add(key)
        return result

    def _answer_now(self, query: tuple) -> Hashable:
        """What ``query`` answers now: a file's recorded answer when its
        ``stat`` shows it unchanged since (a settled signature), else the
        session's answer (the file read and hashed again)."""
        if query[0] != "content":
            return self.session.answer(query)
        path = query[1]
        recorded = self._signatures.get(query)
        if recorded is not None and self.session.unchanged_since(path, recorded[1]):
            return recorded[0]
        now, signature = self.session.content_answer(path, query[2])
        if signature is not None and (recorded is None or recorded != (now, signature)):
            self._signatures[query] = (now, signature)  # trust its stat next time
            self._changed = True
        return now

    def store(self, unit: Unit, result: UnitResult) -> None:
        """Keep ``result`` (recorded: its ``deps`` are set) for ``unit``."""
        if result.deps is None:
            self._unrecorded = True
            return
        self._load()
        key = _unit_key(unit)
        dependencies = []
        for query, (answer, signature) in result.deps.items():
            dependencies.append((query, answer))
            self._current[query] = answer
            if signature is not None:
                self._signatures[query] = (answer, signature)
        self._entries[key] = (result._replace(deps=None), tuple(dependencies))
        self._used.add(key)
        self._changed = True

    # -- the run record -----------------------------------------------------------------

    def replay(self, targets: str) -> tuple[list, set[str]] | None:
        """The findings and checked files of the last whole-workspace lint of
        ``targets`` (:func:`~skill_eval.linter.engine._targets_digest`),
        when every query its run record holds answers the same now; else
        ``None``. Only the run record is read. A file found rewritten with
        the same content gets its new signature recorded (the record is
        written again), so that the next run trusts its ``stat``."""
        data = _read_file(self._folder_fd, self.run_file_name)
        if data is None:
            return None
        try:
            fmt, recorded_targets, diagnostics, checked, queries = CODEC.decode(data, self.session.path_table)
        except Exception:  # noqa: BLE001 - an unreadable record is no record
            return None
        if fmt != FORMAT or recorded_targets != targets:
            return None
        session = self.session
        refreshed = []
        for index, (query, answer, signature) in enumerate(queries):
            if query[0] != "content":
                if session.answer(query) != answer:
                    return None
                continue
            if signature is not None and session.unchanged_since(query[1], signature):
                continue
            now, new_signature = session.content_answer(query[1], query[2])
            if now != answer:
                return None
            if new_signature is not None and new_signature != signature:
                refreshed.append((index, (query, answer, new_signature)))
        if refreshed:
            queries = list(queries)
            for index, row in refreshed:
                queries[index] = row
            self._write_run(targets, diagnostics, checked, queries)
        return list(diagnostics), set(checked)

    def note_filtering(self, deps: dict[tuple, tuple]) -> None:
        """Add ``deps`` (:func:`~skill_eval.linter.engine.dependencies`: what
        the run's filtering of findings asked) to what the run record checks."""
        self._filtering.update(deps)

    def record_run(self, targets: str, diagnostics: list, checked: set[str], probes: frozenset[str]) -> None:
        """Write the run record of a whole-workspace lint of ``targets``:
        ``diagnostics`` as reported, ``checked``, and every query of every
        entry the run used (served or stored) and of its filtering, with
        its answer and settled signature. Left out, as derived from queries
        the record holds: the probes' facts (``facts``: the workspace-wide
        rules' input) and where a linted probe's (one of ``probes``)
        references lead (``refs``): its own unit asked what they came from.
        Not written when a unit's result was not stored (its queries unknown)."""
        if self._unrecorded:
            return
        pairs: dict[tuple, Hashable] = {}
        for key in self._used:
            pairs.update(self._entries[key][1])
        for query, (answer, signature) in self._filtering.items():
            pairs[query] = answer
            if signature is not None:
                self._signatures[query] = (answer, signature)
        signatures = self._signatures
        queries = []
        for query, answer in pairs.items():
            if query[0] == "facts" or (query[0] == "refs" and query[1] in probes):
                continue
            recorded = signatures.get(query)
            queries.append((query, answer, recorded[1] if recorded is not None and recorded[0] == answer else None))
        self._write_run(targets, diagnostics, checked, queries)

    def _write_run(self, targets: str, diagnostics: list, checked: set[str], queries: list) -> None:
        try:
            data = CODEC.encode((FORMAT, targets, diagnostics, sorted(checked), queries))
        except (TypeError, ValueError, OverflowError):
            return
        _write_file(self._folder_fd, self.run_file_name, data)

    def save(self, prune: bool = False) -> None:
        """Write the cache file if this run changed it. ``prune``: the run
        covered the whole workspace, so entries it did not use are of files
        that are gone and are dropped, with the signatures no entry asks."""
        if not self._loaded:
            return
        if prune:
            gone = [key for key in self._entries if key not in self._used]
            for key in gone:
                del self._entries[key]
            if gone:
                asked = {query for _result, dependencies in self._entries.values() for query, _answer in dependencies}
                self._signatures = {query: found for query, found in self._signatures.items() if query in asked}
                self._changed = True
        if not self._changed:
            return
        try:
            data = CODEC.encode((FORMAT, *self._layout()))
        except (TypeError, ValueError, OverflowError):  # a rule's facts of a type the codec does not know
            return
        _write_file(self._folder_fd, self.file_name, data)
        self._changed = False

    def _layout(self) -> tuple[list, dict, dict]:
        """The file's data: every distinct ``(query, answer)`` once, the
        entries naming theirs by index (units of one skill ask the same
        queries), and the settled ``stat`` signatures by the index of the
        file's ``(query, answer)``."""
        index: dict[tuple, int] = {}
        entries = {}
        for key, (result, dependencies) in self._entries.items():
            entries[key] = (result_row(result), [index.setdefault(pair, len(index)) for pair in dependencies])
        signatures = {index.setdefault((query, answer), len(index)): signature
                      for query, (answer, signature) in self._signatures.items()}
        return list(index), entries, signatures

    def close(self) -> None:
        if self._folder_fd is not None:
            os.close(self._folder_fd)
            self._folder_fd = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - at interpreter exit
            pass


_UNKNOWN = object()


def _unit_key(unit: Unit) -> tuple[str, str]:
    kind, path = unit
    return ("probe" if kind in ("probe", "facts") else kind, str(path))


# -- the codec ------------------------------------------------------------------------


def result_row(result: UnitResult) -> tuple:
    """A unit's result as the codec stores it (:func:`result_of` reads it):
    its fields, and its facts' fields, inline. As records they cost a
    decoding hook each (~10 µs), and a pre-commit run reads every probe's."""
    facts = result.facts
    if facts is not None:
        facts = (facts.values, facts.refs, tuple(sorted(facts.disabled)), facts.errors, facts.digest)
    return result.diagnostics, facts, result.deps


def result_of(row: tuple) -> UnitResult:
    """The :class:`~skill_eval.linter.engine.UnitResult` of a :func:`result_row`."""
    from .context import ProbeFacts
    from .engine import UnitResult

    diagnostics, facts, deps = row
    if facts is not None:
        values, refs, disabled, errors, digest = facts
        facts = ProbeFacts(values, refs, frozenset(disabled), errors, digest)
    return UnitResult(diagnostics, facts, deps)



class Codec:
    """MessagePack with the types a unit's result holds (what workers send
    back, :mod:`.execution`, and the cache file): tuples stay tuples
    (queries and answers are dictionary keys), and paths, byte arrays,
    frozen sets, enums and the record types of :data:`RECORD_TYPES` travel
    as extension types. Decoding builds only those: nothing is looked up by
    a name the file gives beyond that allow-list."""

    PATH, ARRAY, FROZENSET, ENUM, RECORD, SPAN = range(1, 7)

    def __init__(self) -> None:
        self._records: dict[str, type] | None = None

    @property
    def _span(self) -> type:
        from .textfile import Span

        return Span

    @property
    def records(self) -> dict[str, type]:
        """Record types by name: the engine's and those the rules declare
        (:attr:`~skill_eval.linter.rules.base.Rule.facts_types`)."""
        if self._records is None:
            from .context import ProbeFacts
            from .diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
            from .engine import UnitResult
            from .rules import REGISTRY
            from .textfile import Position, Span

            kinds = [UnitResult, Diagnostic, Fix, Related, TextEdit, Span, Position, ProbeFacts, Severity]
            kinds.extend(kind for rule in REGISTRY for kind in rule.facts_types)
            self._records = {f"{kind.__module__}.{kind.__qualname__}": kind for kind in kinds}
        return self._records

    def _findings_records(self) -> dict[str, type]:
        """The record types of findings alone: a run record decodes with
        these, without importing the rules (:attr:`records` when it meets
        another)."""
        if self._records is not None:
            return self._records
        from .diagnostics import Diagnostic, Fix, Related, Severity, TextEdit
        from .textfile import Position, Span

        kinds = (Diagnostic, Fix, Related, TextEdit, Span, Position, Severity)
        return {f"{kind.__module__}.{kind.__qualname__}": kind for kind in kinds}

    def encode(self, value: object) -> bytes:
        import msgpack

        return msgpack.packb(value, default=self._default, strict_types=True, use_bin_type=True)

    def decode(self, data: bytes, paths: dict[str, Path] | None = None) -> Any:
        """What :meth:`encode` gave ``data`` from. A path is the one of
        ``paths`` (a session's
        :attr:`~skill_eval.linter.session.LintSession.path_table`, added to
        when new) for its text: a file's findings and its probe's facts, from
        workers or the cache, then share one ``Path`` of each file."""
        import msgpack

        table: dict[str, Path] = {} if paths is None else paths
        records = self._findings_records()
        span, position = self._span, records["skill_eval.linter.textfile.Position"]

        def unpack(inner: bytes) -> Any:
            return msgpack.unpackb(inner, ext_hook=ext_hook, use_list=False, raw=False, strict_map_key=False)

        def ext_hook(code: int, inner: bytes):
            if code == self.PATH:
                text = os.fsdecode(inner)
                path = table.get(text)
                if path is None:
                    path = table[text] = Path(text)
                return path
            if code == self.SPAN:
                raw, start_line, start_column, end_line, end_column = unpack(inner)
                text = os.fsdecode(raw)
                path = table.get(text)
                if path is None:
                    path = table[text] = Path(text)
                return span(path, position(start_line, start_column), position(end_line, end_column))
            if code == self.ARRAY:
                from array import array

                return array(chr(inner[0]), inner[1:])
            if code == self.FROZENSET:
                return frozenset(unpack(inner))
            name, *fields = unpack(inner)
            kind = records.get(name)
            if kind is None:
                kind = self.records[name]
            return kind(*fields)

        return unpack(data)

    def _default(self, value: object):
        from msgpack import ExtType

        kind = type(value)
        if kind is tuple:
            return list(value)
        if isinstance(value, Path):
            return ExtType(self.PATH, os.fsencode(value))
        if kind is self._span:  # the commonest record, as one (its path and positions inline)
            return ExtType(self.SPAN, self.encode((os.fsencode(value.path), *value.start, *value.end)))
        if kind is frozenset:
            return ExtType(self.FROZENSET, self.encode(tuple(sorted(value))))
        if kind.__name__ == "array" and kind.__module__ == "array":
            return ExtType(self.ARRAY, value.typecode.encode() + value.tobytes())
        name = f"{kind.__module__}.{kind.__qualname__}"
        if self.records.get(name) is not kind:
            raise TypeError(f"{name} is not a cached record type")
        if isinstance(value, tuple):
            return ExtType(self.RECORD, self.encode((name, *value)))
        return ExtType(self.ENUM, self.encode((name, value.value)))

CODEC = Codec()


# -- the key --------------------------------------------------------------------------


def cache_key(session: LintSession) -> str:
    """What the cache of ``session`` is keyed by, as a hex digest (see the
    module's docstring)."""
    return key_for(session.root, session.config)


def key_for(root: Path, config: Config) -> str:
    """:func:`cache_key` of a session of ``root`` and ``config``."""
    import sys
    from ._hashing import blake2b

    from skill_eval import __version__

    source = config.source
    parts = [
        f"format {FORMAT}", f"skill-eval {__version__}", *_code_fingerprint(), *_library_versions(),
        f"python {sys.implementation.cache_tag} {sys.hexversion} {sys.maxsize}",
        f"root {root}", f"config {config._replace(source=None)!r}", f"config file {source}",
    ]
    digest = blake2b(digest_size=16)
    for part in parts:
        digest.update(part.encode("utf-8", "surrogateescape") + b"\0")
    return digest.hexdigest()


def _code_fingerprint() -> list[str]:
    """The size and mtime of every module of the linter (a changed module, in
    development or after a reinstall of the same version, starts a new cache)."""
    root = os.path.dirname(os.path.abspath(__file__))
    found = []
    pending = [root]
    while pending:
        folder = pending.pop()
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.is_dir(follow_symlinks=False) and entry.name != "__pycache__":
                        pending.append(entry.path)
                    elif entry.name.endswith((".py", ".json", ".toml")):
                        status = entry.stat()
                        found.append(f"{os.path.relpath(entry.path, root)} {status.st_size} {status.st_mtime_ns}")
        except OSError:
            continue
    return sorted(found)


def _library_versions() -> list[str]:
    """The ``*.dist-info`` folders of :data:`LIBRARIES` on ``sys.path`` (their
    names hold their versions)."""
    import sys

    wanted = tuple(name.lower() + "-" for name in LIBRARIES)
    found = []
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as items:
                found.extend(item.name for item in items
                             if item.name.endswith(".dist-info") and item.name.lower().startswith(wanted))
        except OSError:
            continue
    return sorted(found)


# -- files, relative to the root without following links ------------------------------------


_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _open_cache_folder(root: Path) -> int | None:
    """A descriptor of ``root/.skill-eval-cache``, made if missing (with its
    CACHEDIR.TAG and a ``.gitignore`` of ``*``), opened without following a
    link; ``None`` when it is not a plain folder of the root or cannot be
    made."""
    if not hasattr(os, "O_NOFOLLOW") or os.open not in os.supports_dir_fd:
        return None
    try:
        root_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    try:
        try:
            folder_fd = os.open(CACHE_DIR, _DIRECTORY_FLAGS, dir_fd=root_fd)
        except FileNotFoundError:
            try:
                os.mkdir(CACHE_DIR, 0o755, dir_fd=root_fd)
            except FileExistsError:
                pass
            except OSError:
                return None
            try:
                folder_fd = os.open(CACHE_DIR, _DIRECTORY_FLAGS, dir_fd=root_fd)
            except OSError:
                return None
            _write_file(folder_fd, "CACHEDIR.TAG", CACHEDIR_TAG, replace=False)
            _write_file(folder_fd, ".gitignore", b"# Automatically created by skill-eval.\n*\n", replace=False)
        except OSError:
            return None  # a link (ELOOP), a file, no permission
        if not stat.S_ISDIR(os.fstat(folder_fd).st_mode):
            os.close(folder_fd)
            return None
        return folder_fd
    finally:
        os.close(root_fd)


def _read_file(folder_fd: int, name: str) -> bytes | None:
    """The bytes of the regular file ``name`` in the cache folder (not a
    link: ``O_NOFOLLOW``), or ``None``."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_CACHE_SIZE:
            return None
        chunks = []
        remaining = status.st_size
        while remaining > 0:
            chunk = os.read(fd, min(remaining, 1 << 24))
            if not chunk:
                break
            chunks.append(chunk)
            remaining -= len(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def _write_file(folder_fd: int, name: str, data: bytes, replace: bool = True) -> None:
    """Write ``name`` in the cache folder as a new file renamed into place (a
    concurrent reader sees the old file or the new one); errors are ignored
    (a cache that cannot be written only costs the next run its time)."""
    from .reader import write_all

    temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(temporary, flags, 0o644, dir_fd=folder_fd)
    except OSError:
        return
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        if replace:
            os.rename(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd)
        else:
            try:
                os.link(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
            except FileExistsError:
                pass
            os.unlink(temporary, dir_fd=folder_fd)
    except OSError:
        try:
            os.unlink(temporary, dir_fd=folder_fd)
        except OSError:
            pass
