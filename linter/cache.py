"""The on-disk cache: one file per workspace root and config in
``.skill-eval-cache/``, as ruff's (the layout and its figures:
docs/architecture.md, docs/performance.md).

Each unit's entry keeps every query the unit asked of its session with its
answer, and serves only while every one answers the same (a file's answer is
its content's digest, spared by a settled ``stat`` signature). The file is
typed MessagePack (:data:`CODEC`): its entries, their index
(:class:`CacheIndex`) and the index's offset as 8 bytes. A run reads each
entry it looks up on its own (``pread``) and writes a new file, renamed into
place, opened without following links.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import stat
import struct
import sys
from array import array
from collections.abc import Callable, Hashable, Iterator
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import msgspec

from .diagnostics import Diagnostic
from .reader import write_all
from .records import Dependencies, FactValues, Signature, UnitResult

if TYPE_CHECKING:  # pragma: no cover
    from .config import Config
    from .engine import Unit
    from .session import LintSession

CACHE_DIR = ".skill-eval-cache"
FORMAT = 8
"""The layout of the cache file's data (raise it when it changes: it is part
of the file's name)."""

MAX_CACHE_SIZE = 1 << 30
"""A cache file larger than this is not read."""

LIBRARIES = ("pyromark", "pyyaml", "msgspec", "tree_sitter", "tree_sitter_json", "jsonschema",
             "rapidfuzz", "google_re2", "jsonschema_rs")
"""Distributions whose versions can change what the rules find or how the
cache is read (their ``*.dist-info`` folders' names go into the key)."""


class CacheIndex(msgspec.Struct, array_like=True):
    """The index at the end of the cache file: unit key -> ``(offset,
    length)`` of the unit's entry, an encoded ``(result without its
    dependencies, dependencies)`` (:data:`~skill_eval.linter.records.Dependencies`)."""

    entries: dict[tuple[str, str], tuple[int, int]]


_TRAILER = struct.Struct("<Q")
"""The cache file's last bytes: the offset of its :class:`CacheIndex`."""

ANSWERS_KEPT = 4096
"""How many answers a cache remembers (:meth:`Cache._answer_now`) before it
forgets them all: the units sharing a query (a skill's probes) are looked up
one after another, and remembering every answer of a scan of 10,000 probes
held ~25 MB (docs/performance.md)."""

COPY_CHUNK = 1 << 20
"""Bytes copied at a time from the old cache file into the new one."""


class RunRecord(msgspec.Struct, array_like=True):
    """The run record of a whole-workspace lint (:meth:`Cache.replay`): the
    result of the cache file's entry :data:`RUN_KEY`, whose dependencies are
    every query the findings rest on."""

    targets: str
    diagnostics: list[Diagnostic]
    checked: list[str]


RUN_KEY = ("run", "")
"""The unit key of the run record's entry."""


CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by skill-eval.\n"
                b"# For information about cache directory tags see https://bford.info/cachedir/\n")


class Cache:
    """The cache of one workspace root and config, for one lint session."""

    def __init__(self, session: LintSession, folder_fd: int, key: str) -> None:
        self.session = session
        self._folder_fd: int | None = folder_fd
        self.file_name = f"cache-{key}"
        self._file_fd, self._on_disk = _read_index(folder_fd, self.file_name)
        """The cache file as this run found it (open till :meth:`close`: a
        concurrent run may rename another over it), and its index: unit key
        -> ``(offset, length)`` of its entry."""
        self._new_fd: int | None = None
        self._new_name: str | None = None
        self._new_size = 0
        """The file being written (:meth:`_append`), its name and size so far."""
        self._new: dict[tuple[str, str], tuple[int, int]] = {}
        """Unit key -> ``(offset, length)`` in that file of the entry this run
        stored or refreshed."""
        self._current: dict[tuple, tuple[Hashable, Optional[Signature]]] = {}
        """Query -> its answer now, with the file's settled ``stat`` signature
        for a content query (up to :data:`ANSWERS_KEPT` of them)."""
        self._changed = False
        """Whether this run stored an entry or a new signature (the file is then written)."""
        self._used: set[tuple[str, str]] = set()
        self._unrecorded = False
        """Whether a unit's result came without its queries: no run record is then written."""
        self._filtering: dict[tuple, tuple] = {}
        """What the run's filtering asked (:meth:`note_filtering`), for the run record."""
        self._decoders: dict[Any, Callable[[bytes], tuple[Any, Dependencies]]] = {}
        """Result type -> the decoder of an entry as ``(that result, dependencies)``."""

    @classmethod
    def open(cls, session: LintSession) -> Cache | None:
        """The cache of ``session``'s root and config, or ``None`` when it
        cannot be used (a folder that is not a plain folder of the root, a
        read-only workspace): the lint then runs without it."""
        folder_fd = _open_cache_folder(session.root)
        if folder_fd is None:
            return None
        _remove_orphans(folder_fd)
        return cls(session, folder_fd, _key(session.root, session.config))

    def _entry(self, key: tuple[str, str], kind: Any) -> tuple[Any, Dependencies] | None:
        """``key``'s entry decoded as ``(kind, dependencies)`` (``kind``
        ``msgspec.Raw``: the result left encoded), from the file being written
        when this run stored it, else from the file read; ``None`` when there
        is none or it does not decode."""
        if key in self._new:
            fd, (offset, length) = self._new_fd, self._new[key]
        elif key in self._on_disk and self._file_fd is not None:
            fd, (offset, length) = self._file_fd, self._on_disk[key]
        else:
            return None
        decode = self._decoders.get(kind)
        if decode is None:
            decode = self._decoders[kind] = CODEC.decoder(tuple[kind, Dependencies], self.session.path_of)
        try:
            return decode(os.pread(fd, length, offset))
        except Exception:  # noqa: BLE001 - a damaged entry is no entry
            return None

    def lookup(self, unit: Unit) -> UnitResult | None:
        """The cached result of ``unit`` when every answer it recorded is the
        answer now, else ``None``. A facts-only entry serves a facts-only unit
        (which is given only the facts)."""
        key = _unit_key(unit)
        entry = self._entry(key, UnitResult)
        if entry is None or (unit[0] == "probe" and entry[0].diagnostics is None) or not self._holds(key, *entry):
            return None
        return UnitResult(None, entry[0].facts) if unit[0] == "facts" else entry[0]

    def _holds(self, key: tuple[str, str], result: Any, dependencies: Dependencies) -> bool:
        """Whether every query of ``key``'s entry answers now what it answered
        then. If so the entry is used (a pruning save keeps it), and stored
        again when a file was found rewritten with the same content, with
        that file's new settled ``stat`` signature (to be trusted next time)."""
        refreshed = False
        for (query, answer), signature in dependencies.items():
            now, now_signature = self._answer_now(query, answer, signature)
            if now != answer:
                return False
            if now_signature is not None and now_signature != signature:
                dependencies[(query, answer)] = now_signature
                refreshed = True
        if refreshed and self._append(key, (result, dependencies)):
            self._changed = True
        self._used.add(key)
        return True

    def _answer_now(self, query: tuple, answer: Hashable, signature: Signature | None) -> tuple[Hashable, Signature | None]:
        """What ``query`` answers now, with the settled ``stat`` signature of
        a content query's file: ``answer`` (as recorded) when the file's
        ``stat`` shows it unchanged since ``signature``, else the session's
        answer (the file read and hashed again)."""
        known = self._current.get(query)
        if known is None:
            content = query[0] == "content" and signature is not None
            if content and self.session.unchanged_since(query[1], signature):
                known = (answer, signature)
            else:
                known = self.session.answer(query)
            if len(self._current) >= ANSWERS_KEPT:
                self._current.clear()
            self._current[query] = known
        return known

    def store(self, unit: Unit, result: UnitResult) -> UnitResult:
        """Keep ``result`` (recorded: its ``deps`` are set) for ``unit``, its
        ``deps`` encoded; returns it without them."""
        if result.deps is None:
            self._unrecorded = True
            return result
        key = _unit_key(unit)
        kept = msgspec.structs.replace(result, deps=None)
        if not self._append(key, (kept, result.deps)):
            # a path no UTF-8 can carry, facts of a type the codec does not know: the unit is not kept
            self._new.pop(key, None)
            self._on_disk.pop(key, None)
            self._unrecorded = True
            return kept
        self._used.add(key)
        self._changed = True
        return kept

    def replay(self, targets: str) -> tuple[list, set[str]] | None:
        """The findings and checked files of the last whole-workspace lint of
        ``targets`` (:func:`~skill_eval.linter.engine._targets_digest`) when
        every query its run record depends on answers the same now
        (:meth:`_holds`), else ``None``."""
        entry = self._entry(RUN_KEY, RunRecord)
        if entry is None or entry[0].targets != targets or not self._holds(RUN_KEY, *entry):
            return None
        return entry[0].diagnostics, set(entry[0].checked)

    def note_filtering(self, deps: dict[tuple, Signature | None]) -> None:
        """Add ``deps`` (:func:`~skill_eval.linter.engine.dependencies`: what
        the run's filtering of findings asked) to what the run record checks."""
        self._filtering.update(deps)

    def record_run(self, targets: str, diagnostics: list, checked: set[str], probes: frozenset[str]) -> None:
        """Write the run record of a whole-workspace lint of ``targets``:
        ``diagnostics`` as reported, ``checked``, and every query (with its
        answer and settled signature) of the entries the run used and of its
        filtering, but for what those queries derive: the probes' ``facts``
        and the ``refs`` of the linted ``probes``. Not written when a unit's
        result was not stored (its queries unknown)."""
        if self._unrecorded:
            return
        queries: Dependencies = {}
        entries = (self._entry(key, msgspec.Raw) for key in self._used if key != RUN_KEY)
        recorded = (entry[1] for entry in entries if entry is not None)
        for dependencies in itertools.chain(recorded, [self._filtering]):
            for (query, answer), signature in dependencies.items():
                if query[0] == "facts" or (query[0] == "refs" and query[1] in probes):
                    continue
                if signature is not None or (query, answer) not in queries:
                    queries[(query, answer)] = signature
        if self._append(RUN_KEY, (RunRecord(targets, diagnostics, sorted(checked)), queries)):
            self._used.add(RUN_KEY)
            self._changed = True

    def _append(self, key: tuple[str, str], entry: tuple) -> bool:
        """Write ``entry`` (result, dependencies) as ``key``'s to the new file
        (made on the first entry); whether it could be. A failed write (a
        full disk) drops the new file and what this run stored in it."""
        try:
            encoded = CODEC.encode(entry)
        except (TypeError, ValueError, OverflowError):
            return False
        try:
            write_all(self._open_new(), encoded)
        except OSError:
            self._discard_new()
            return False
        self._new[key] = (self._new_size, len(encoded))
        self._new_size += len(encoded)
        return True

    def _open_new(self) -> int:
        """The new file's descriptor (the file made, under a name of its own, if not yet)."""
        if self._new_fd is None:
            self._new_name = f".{self.file_name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
            flags = os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
            self._new_fd = os.open(self._new_name, flags, 0o644, dir_fd=self._folder_fd)
        return self._new_fd

    def save(self, prune: bool = False) -> None:
        """Write the cache file if this run changed it: after the entries it
        stored, those it did not change, copied from the file read, then the
        index; the new file is renamed into place. ``prune``: the run covered
        the whole workspace, so entries it did not use are dropped. The run
        record is kept only by a run that replayed or wrote it."""
        if prune:
            for entries in (self._on_disk, self._new):
                gone = [key for key in entries if key not in self._used]
                for key in gone:
                    del entries[key]
                self._changed = self._changed or bool(gone)
        if not self._changed:
            return
        self._changed = False
        if RUN_KEY not in self._used:
            self._on_disk.pop(RUN_KEY, None)
        index = dict(self._new)
        kept = sorted((place, key) for key, place in self._on_disk.items() if key not in self._new)
        try:
            new_fd = self._open_new()
            for run_start, run_end, keys in _adjacent_runs(kept):
                for key, (offset, length) in keys:
                    index[key] = (offset - run_start + self._new_size, length)
                for at in range(run_start, run_end, COPY_CHUNK):
                    chunk = os.pread(self._file_fd, min(COPY_CHUNK, run_end - at), at)
                    if len(chunk) != min(COPY_CHUNK, run_end - at):
                        raise OSError("the cache file was cut short")
                    write_all(new_fd, chunk)
                self._new_size += run_end - run_start
            write_all(new_fd, CODEC.encode(CacheIndex(index)) + _TRAILER.pack(self._new_size))
            os.rename(self._new_name, self.file_name, src_dir_fd=self._folder_fd, dst_dir_fd=self._folder_fd)
        except (OSError, TypeError, ValueError, OverflowError):  # not written: the next run only costs more
            self._discard_new()
            return
        if self._file_fd is not None:
            os.close(self._file_fd)
        self._file_fd, self._on_disk, self._new_fd = self._new_fd, index, None
        self._discard_new()

    def _discard_new(self) -> None:
        """Remove the new file unless renamed into place (none left open), and
        forget what this run stored in it."""
        if self._new_fd is not None:
            os.close(self._new_fd)
            with contextlib.suppress(OSError):
                os.unlink(self._new_name, dir_fd=self._folder_fd)
        self._new_fd = self._new_name = None
        self._new, self._new_size = {}, 0

    def close(self) -> None:
        """Remove a new file left unsaved; close the cache file's and folder's descriptors."""
        if self._folder_fd is not None:
            self._discard_new()
        for name in ("_file_fd", "_folder_fd"):
            fd = getattr(self, name)
            if fd is not None:
                os.close(fd)
                setattr(self, name, None)

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # at interpreter exit
            self.close()


def _adjacent_runs(places: list[tuple[tuple[int, int], Any]]) -> Iterator[tuple[int, int, list]]:
    """``(start, end, [(key, (offset, length)), ...])`` of each run of
    adjacent entries of ``places`` (``[((offset, length), key), ...]``, sorted)."""
    run: list = []
    run_start = run_end = 0
    for (offset, length), key in places:
        if run and offset != run_end:
            yield run_start, run_end, run
            run = []
        if not run:
            run_start = offset
        run.append((key, (offset, length)))
        run_end = offset + length
    if run:
        yield run_start, run_end, run


def _unit_key(unit: Unit) -> tuple[str, str]:
    kind, path = unit
    return ("probe" if kind in ("probe", "facts") else kind, str(path))


class Codec:
    """MessagePack of typed records (msgspec): what workers send back
    (:mod:`.execution`) and the cache's files. A path travels as its bytes
    (``os.fsencode``), a byte array as an extension type; a rule's facts
    decode as its :attr:`~skill_eval.linter.rules.base.Rule.facts_type`.
    Decoding builds only the type asked for."""

    ARRAY = 1

    def __init__(self) -> None:
        self.encode = msgspec.msgpack.Encoder(enc_hook=self._enc_hook).encode
        self._fact_types: dict[str, Any] = {}

    def decode(self, data: bytes, kind: Any, path_of: Callable[[str], Path] = Path) -> Any:
        """``data`` as a ``kind``, each path made by ``path_of`` from its text
        (:meth:`~skill_eval.linter.session.LintSession.path_of`: one ``Path``
        per file)."""
        return self.decoder(kind, path_of)(data)

    def decoder(self, kind: Any, path_of: Callable[[str], Path] = Path) -> Callable[[Any], Any]:
        """:meth:`decode` of ``kind`` with ``path_of``, as a function (made once, called many times)."""
        hook = partial(self._dec_hook, path_of)
        return msgspec.msgpack.Decoder(kind, dec_hook=hook, ext_hook=self._ext_hook).decode

    def _enc_hook(self, value: object) -> Any:
        if isinstance(value, Path):
            return os.fsencode(value)
        if isinstance(value, array):
            return msgspec.msgpack.Ext(self.ARRAY, value.typecode.encode() + value.tobytes())
        raise TypeError(f"{type(value).__qualname__} is not a type the codec carries")

    def _ext_hook(self, code: int, data: memoryview) -> array:
        if code != self.ARRAY:
            raise ValueError(f"unknown extension type {code}")
        found = array(chr(data[0]))
        found.frombytes(data[1:])
        return found

    def _dec_hook(self, path_of: Callable[[str], Path], kind: type, value: Any) -> Any:
        if kind is Path and isinstance(value, bytes):
            return path_of(os.fsdecode(value))
        if kind is FactValues and isinstance(value, dict):
            if not self._fact_types:
                from .rules import REGISTRY

                self._fact_types = {rule.code: rule.facts_type for rule in REGISTRY}
            hook = partial(self._dec_hook, path_of)
            return FactValues({code: msgspec.convert(found, self._fact_types.get(code, Any), dec_hook=hook)
                               for code, found in value.items()})
        if kind is array and isinstance(value, array):
            return value
        raise NotImplementedError(kind)


CODEC = Codec()
_INDEX_DECODER = msgspec.msgpack.Decoder(CacheIndex)


def _key(root: Path, config: Config) -> str:
    """The cache's key for ``root`` and ``config``, as a hex digest. Not the
    config file's bytes: a rule that reads the file asks it of its session."""
    from skill_eval import __version__

    from ._hashing import blake2b

    parts = [
        f"format {FORMAT}", f"skill-eval {__version__}", *_code_fingerprint(), *_library_versions(),
        f"python {sys.implementation.cache_tag} {sys.hexversion} {sys.maxsize}",
        f"root {root}", f"config {config._replace(source=None)!r}", f"config file {config.source}",
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
    for folder, _folders, names in os.walk(root):
        for name in names:
            if name.endswith((".py", ".json", ".toml")):
                path = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    status = os.stat(path)
                    found.append(f"{os.path.relpath(path, root)} {status.st_size} {status.st_mtime_ns}")
    return sorted(found)


def _library_versions() -> list[str]:
    """The ``*.dist-info`` folders of :data:`LIBRARIES` on ``sys.path`` (their
    names hold their versions)."""
    wanted = tuple(name.lower() + "-" for name in LIBRARIES)
    found = []
    for entry in sys.path:
        with contextlib.suppress(OSError), os.scandir(entry or ".") as items:
            found.extend(item.name for item in items
                         if item.name.endswith(".dist-info") and item.name.lower().startswith(wanted))
    return sorted(found)


_DIRECTORY_FLAGS = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0)
"""(No ``O_CLOEXEC`` here or below: every descriptor ``os.open`` makes is non-inheritable.)"""


def _open_cache_folder(root: Path) -> int | None:
    """A descriptor of ``root/.skill-eval-cache``, made if missing (with its
    CACHEDIR.TAG and a ``.gitignore`` of ``*``), opened without following a
    link; ``None`` when it is not a plain folder of the root or cannot be
    made."""
    if not hasattr(os, "O_NOFOLLOW") or os.open not in os.supports_dir_fd:
        return None
    try:
        root_fd = os.open(root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return None
    try:
        try:
            folder_fd = os.open(CACHE_DIR, _DIRECTORY_FLAGS, dir_fd=root_fd)
        except FileNotFoundError:
            with contextlib.suppress(FileExistsError):
                os.mkdir(CACHE_DIR, 0o755, dir_fd=root_fd)
            folder_fd = os.open(CACHE_DIR, _DIRECTORY_FLAGS, dir_fd=root_fd)
            _write_file(folder_fd, "CACHEDIR.TAG", CACHEDIR_TAG)
            _write_file(folder_fd, ".gitignore", b"# Automatically created by skill-eval.\n*\n")
    except OSError:
        return None  # a link (ELOOP), a file, no permission
    finally:
        os.close(root_fd)
    if not stat.S_ISDIR(os.fstat(folder_fd).st_mode):
        os.close(folder_fd)
        return None
    return folder_fd


def _remove_orphans(folder_fd: int) -> None:
    """Remove the new files (``.NAME.PID.RANDOM.tmp``) of runs that ended
    before renaming them (a language server killed during its scan)."""
    with contextlib.suppress(OSError):
        for name in os.listdir(folder_fd):
            parts = name.split(".")
            if name.startswith(".") and name.endswith(".tmp") and len(parts) == 5 and parts[2].isdigit():
                try:
                    os.kill(int(parts[2]), 0)
                except ProcessLookupError:
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=folder_fd)
                except (OSError, OverflowError):  # alive (another user's), or no such number
                    pass


def _read_index(folder_fd: int, name: str) -> tuple[int | None, dict[tuple[str, str], tuple[int, int]]]:
    """The descriptor of the cache file ``name`` and its index (``None`` and
    none when it is missing or unreadable: an empty cache)."""
    fd = _open_file(folder_fd, name)
    if fd is None:
        return None, {}
    try:
        size = os.fstat(fd).st_size
        (index_at,) = _TRAILER.unpack(os.pread(fd, _TRAILER.size, size - _TRAILER.size))
        if not 0 <= index_at <= size - _TRAILER.size:
            raise ValueError("index outside the file")
        index = _INDEX_DECODER.decode(os.pread(fd, size - _TRAILER.size - index_at, index_at))
        if any(not (0 <= offset and 0 < length and offset + length <= index_at)
               for offset, length in index.entries.values()):
            raise ValueError("entry outside the file")
    except Exception:  # noqa: BLE001 - an unreadable cache is an empty one
        os.close(fd)
        return None, {}
    return fd, index.entries


def _open_file(folder_fd: int, name: str) -> int | None:
    """A descriptor of the regular file ``name`` in the cache folder (not a
    link: ``O_NOFOLLOW``) of at most :data:`MAX_CACHE_SIZE` bytes, or ``None``."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=folder_fd)
    except OSError:
        return None
    try:
        status = os.fstat(fd)
        if stat.S_ISREG(status.st_mode) and status.st_size <= MAX_CACHE_SIZE:
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def _write_file(folder_fd: int, name: str, data: bytes) -> None:
    """Write ``name`` in the cache folder, unless it exists, as a new file
    linked into place (a concurrent reader sees no file or the whole one);
    errors are ignored (a cache that cannot be written only costs the next
    run its time)."""
    temporary = f".{name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
    try:
        fd = os.open(temporary, flags, 0o644, dir_fd=folder_fd)
    except OSError:
        return
    try:
        try:
            write_all(fd, data)
        finally:
            os.close(fd)
        with contextlib.suppress(FileExistsError):
            os.link(temporary, name, src_dir_fd=folder_fd, dst_dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        os.unlink(temporary, dir_fd=folder_fd)
