"""The on-disk cache: ``.skill-eval-cache/`` at the workspace root, as ruff's.

What it holds: for each unit (a probe, a SKILL.md, an output-spec.md), its
findings before filtering and, for a probe, its facts
(:class:`~skill_eval.linter.engine.UnitResult`), with every query the unit
asked of its session and the answer it got (:mod:`.session`): the content of
each file it read (a BLAKE2b digest of its bytes, or why it could not be
read), where each path of probe.json led, the nearest SKILL.md above each
folder, the probes below a folder, the runs files of a suite...

What it is keyed by: the cache file's name holds the tool (its version, the
modified times and sizes of its own modules, which hold its registry of
rules, the versions of the libraries that parse for it, the Python that runs
it), the workspace root and the resolved config (and the config file's
bytes): any change there starts a new cache. An entry is used only when every query it asked gives the same answer
now. A file's answer is its content's digest; a ``stat`` fast path (git's
index) spares reading it again when its device, inode, size, mtime and ctime
are those it had when it was read, and that was at least
:data:`~skill_eval.linter.session.RACY_SECONDS` after its last change (a
later change within one tick of the file system's clock keeps all of them:
such a file is read and hashed instead). An edit that keeps the size and
restores the mtime still moves the ctime.

A whole-workspace lint also leaves a **run record** (:meth:`Cache.replay`):
its findings as reported, with every query any of its units or its
filtering asked (each answered once), in one file of its own. A repeat run
of the same targets checks those answers and prints the findings without
loading the per-unit shards; any answer that differs, and the run goes
unit by unit as above (the answers checked so far are not asked again).

Safe when several lints run at once: a shard is written to a new file and
renamed over the old one (a reader sees the old or the new, never a torn
one); the last writer wins, and a lost entry only costs its recomputation.
Safe in a hostile workspace: the folder and the files are opened relative to
the root's descriptor without following links (a ``.skill-eval-cache`` that
is a link, or holds links, is not used: nothing is read or written through
it), and a shard is used only if its MAC under a secret key of this user
(kept outside the workspace, :func:`secret_key`) verifies: the cache is
pickled, and a repository could ship a planted one.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from concurrent.futures import Future

    from .config import Config
    from .engine import Unit, UnitResult
    from .session import LintSession
    from .workspace import Exclusion, Targets

CACHE_DIR = ".skill-eval-cache"
FORMAT = 2
"""The layout of a shard's data (raise it when it changes)."""

WALK_RECORD = "walk"
"""The name (after the key) of the walk record's file (:func:`walk_with_record`)."""

RUN_RECORD = "run"
"""The name (after the key) of the run record's file (:meth:`Cache.replay`)."""

SHARDS = 64
"""Entries are spread over this many files by their path, so that a run that
changes a few entries (a pre-commit run) rewrites a few small files (a run
on three changed files of a large workspace is a little faster with 64 than
with 16, a cold run writes 64 as fast as 16: docs/performance.md)."""

BACKGROUND_SAVE_MIN_ENTRIES = 1000
"""From this many entries stored by a run, :meth:`Cache.start_saving` writes
the shards in a forked process while the lint goes on (docs/performance.md)."""

MAGIC = b"skill-eval-cache\n"
MAC_SIZE = 32
MAX_SHARD_SIZE = 1 << 30
"""A shard larger than this is not read."""

LIBRARIES = ("markdown_it_py", "mdit_py_plugins", "pyyaml", "json_source_map", "jsonschema", "rapidfuzz", "google_re2",
             "fastjsonschema")
"""Distributions whose versions can change what the rules find (their
``*.dist-info`` folders' names go into the key)."""

CACHEDIR_TAG = (b"Signature: 8a477f597d28d172789f06886806bc55\n"
                b"# This file is a cache directory tag created by skill-eval.\n"
                b"# For information about cache directory tags see https://bford.info/cachedir/\n")


class Cache:
    """The cache of one workspace root and config, for one lint session."""

    def __init__(self, session: LintSession, folder_fd: int, key: str, secret: bytes) -> None:
        self.session = session
        self._folder_fd = folder_fd
        self.key = key
        self._secret = secret
        self._entries: dict[tuple[str, str], tuple[Any, tuple]] = {}
        """Unit key -> (result without its dependencies, its ``(query, answer)`` pairs)."""
        self._signatures: dict[tuple, tuple[Hashable, tuple]] = {}
        """Content query -> (answer, the file's ``stat`` signature when it gave it)."""
        self._current: dict[tuple, Hashable] = {}
        """Query -> its answer now (asked once per run)."""
        self._dirty: set[int] = set()
        self._refreshed: set[tuple] = set()
        """Queries whose file was read again, found as recorded, and has a new
        signature: the shards of entries asking them are rewritten."""
        self._used: set[tuple[str, str]] = set()
        self._loaded = False
        self._run_deps: dict[tuple, Hashable] = {}
        """Every query a unit used in this run asked (served or stored), with
        its answer: what the run record checks (:meth:`record_run`)."""
        self._run_refreshed = False
        self._stored = 0
        """Entries stored by this run (:meth:`start_saving` forks for many)."""
        self._saving: tuple[Future, set[int]] | None = None
        """The background write of :meth:`start_saving`, and its shards."""
        self._shared: dict[Hashable, Hashable] = {}
        """One object per distinct query and answer stored (:meth:`store`):
        units of one skill ask the same queries, and a shard pickles an object
        met again as a reference to it (a smaller shard, loaded faster)."""

    # -- opening ------------------------------------------------------------------------

    @classmethod
    def open(cls, session: LintSession) -> Cache | None:
        """The cache of ``session``'s root and config, or ``None`` when it
        cannot be used (no secret key, a folder that is not a plain folder of
        the root, a read-only workspace): the lint then runs without it."""
        secret = secret_key()
        if secret is None:
            return None
        folder_fd = _open_cache_folder(session.root)
        if folder_fd is None:
            return None
        return cls(session, folder_fd, cache_key(session), secret)

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        from .execution import loads

        prefix = self.key + "-"
        for shard in range(SHARDS):
            data = _read_file(self._folder_fd, f"{prefix}{shard:02d}")
            if data is None:
                continue
            payload = self._verified(data)
            if payload is None:
                continue
            try:
                fmt, entries, signatures = loads(payload, self.session.path_table)
            except Exception:  # noqa: BLE001 - an unreadable shard is an empty one
                continue
            if fmt != FORMAT:
                continue
            self._entries.update(entries)
            for query, recorded in signatures.items():
                self._signatures.setdefault(query, recorded)

    def _verified(self, data: bytes) -> bytes | None:
        """The payload of a shard whose MAC verifies, else ``None``."""
        return _verified(self._secret, data)

    def _mac(self, payload: bytes) -> bytes:
        return _mac(self._secret, payload)

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
        self._run_deps.update(dependencies)
        return result

    # -- the run record -----------------------------------------------------------------

    def replay(self, targets: str) -> tuple[list, set[str]] | None:
        """The findings and checked files of the last whole-workspace lint of
        ``targets`` (a digest of what was linted), when every query its record
        holds answers the same now; else ``None``. Only the run record is
        read: the shards are loaded if the run goes unit by unit after all."""
        data = _read_file(self._folder_fd, f"{self.key}-{RUN_RECORD}")
        payload = self._verified(data) if data is not None else None
        if payload is None:
            return None
        from .execution import loads

        try:
            fmt, recorded_targets, diagnostics, checked, queries = loads(payload, self.session.path_table)
        except Exception:  # noqa: BLE001 - an unreadable record is no record
            return None
        if fmt != FORMAT or recorded_targets != targets:
            return None
        signatures = self._signatures
        for query, answer, signature in queries:
            if signature is not None:
                signatures.setdefault(query, (answer, signature))
        current = self._current
        for query, answer, _signature in queries:
            now = current.get(query, _UNKNOWN)
            if now is _UNKNOWN:
                now = current[query] = self._answer_now(query)
            if now != answer:
                return None
        self._run_refreshed = bool(self._refreshed)
        self._run_deps = {query: answer for query, answer, _signature in queries}  # for record_run, if rewritten
        return diagnostics, checked

    def not_in_run(self, queries: set[tuple]) -> list[tuple]:
        """Of ``queries``, those no unit of this run asked (each query has
        one answer per run: only the others need answering again)."""
        known = self._run_deps
        return [query for query in queries if query not in known]

    def note_run_dependencies(self, deps: dict[tuple, tuple]) -> None:
        """Add ``deps`` (:func:`~skill_eval.linter.engine.dependencies`: what
        the run's filtering asked) to what the run record checks."""
        for query, (answer, signature) in deps.items():
            self._run_deps[query] = answer
            if signature is not None:
                self._signatures[query] = (answer, signature)

    def record_run(self, targets: str, diagnostics: list, checked: set[str], probes: frozenset[str]) -> None:
        """Write the run record of a whole-workspace lint of ``targets``:
        ``diagnostics`` as reported, ``checked``, and every query the units
        used and the filtering asked, with their answers and signatures.
        Left out, as derived from queries the record holds: every probe's
        facts (``facts``), and where a linted probe's (one of ``probes``)
        references lead (``refs``): its own unit asked what they came from
        (its probe.json, where each path leads), and answering them again
        would load every probe."""
        from .execution import dumps

        signatures = self._signatures
        queries = []
        for query, answer in self._run_deps.items():
            if query[0] == "facts" or (query[0] == "refs" and query[1] in probes):
                continue
            recorded = signatures.get(query)
            queries.append((query, answer, recorded[1] if recorded is not None and recorded[0] == answer else None))
        payload = dumps((FORMAT, targets, diagnostics, checked, queries))
        _write_file(self._folder_fd, f"{self.key}-{RUN_RECORD}", MAGIC + self._mac(payload) + payload)

    @property
    def replayed_with_new_signatures(self) -> bool:
        """Whether the run replayed found files rewritten with the same
        content (their record is worth writing again: their new signatures
        spare the next run reading them)."""
        return self._run_refreshed

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
            self._refreshed.add(query)
        return now

    def store(self, unit: Unit, result: UnitResult) -> None:
        """Keep ``result`` (recorded: its ``deps`` are set) for ``unit``."""
        if result.deps is None:
            return
        self._load()
        key = _unit_key(unit)
        dependencies = []
        share = self._shared.setdefault
        run_deps = self._run_deps
        for query, (answer, signature) in result.deps.items():
            query = share(query, query)
            dependencies.append((query, share(answer, answer)))
            run_deps[query] = answer
            self._current[query] = answer
            if signature is not None:
                self._signatures[query] = (answer, signature)
        self._entries[key] = (result._replace(deps=None), tuple(dependencies))
        self._stored += 1
        self._used.add(key)
        self._dirty.add(_shard_of(key))

    # -- saving -------------------------------------------------------------------------

    def save(self, prune: bool = False) -> None:
        """Write the shards that changed (once the ones :meth:`start_saving`
        took are written). ``prune``: the run covered the whole workspace,
        so entries it did not use are of files that are gone (or were not
        linted: a config change starts a new cache) and are dropped."""
        if not self._loaded:
            return
        self._finish_saving()
        shards = self._shards()
        self._write_shards(shards, self._changed(shards, prune))
        self._dirty.clear()
        self._refreshed.clear()

    def start_saving(self) -> None:
        """Write the shards changed so far in a process forked now
        (:func:`~skill_eval.linter.execution.run_forked`), while this one goes
        on with the lint (its workspace-wide pass); :meth:`save` waits for
        it, then writes what changed since, or everything, if the child
        failed. Only once this run stored :data:`BACKGROUND_SAVE_MIN_ENTRIES`
        or more: below, the fork costs about what it saves. Where no fork is
        safe (the language server), :meth:`save` writes them all."""
        from .execution import can_fork, run_forked

        if self._saving is not None or self._stored < BACKGROUND_SAVE_MIN_ENTRIES or not can_fork():
            return
        numbers = self._changed(self._shards(), prune=False) if self._refreshed else set(self._dirty)
        future = run_forked(lambda: self._write_shards(self._shards(), numbers))  # grouped in the child
        if future is None:
            return
        self._saving = (future, numbers)
        self._dirty.clear()
        self._refreshed.clear()

    def _finish_saving(self) -> None:
        """Wait for the shards :meth:`start_saving` writes; the ones of a
        child that failed are written again."""
        if self._saving is None:
            return
        future, numbers = self._saving
        self._saving = None
        try:
            future.result()
        except Exception:  # noqa: BLE001 - a child killed or failing: this process writes its shards
            self._dirty.update(numbers)

    def _shards(self) -> dict[int, dict]:
        """Every entry, by shard."""
        shards: dict[int, dict] = {}
        for key, entry in self._entries.items():
            shards.setdefault(_shard_of(key), {})[key] = entry
        return shards

    def _changed(self, shards: dict[int, dict], prune: bool) -> set[int]:
        """The shards to write: those with new entries, with entries asking a
        query whose file was read again (its new signature), and, with
        ``prune``, those holding entries this run did not use (dropped from
        ``shards``)."""
        dirty = set(self._dirty)
        refreshed = self._refreshed
        if refreshed:
            dirty.update(number for number, entries in shards.items()
                         if any(query in refreshed for _result, dependencies in entries.values() for query, _answer in dependencies))
        if prune:
            for number, entries in shards.items():
                gone = [key for key in entries if key not in self._used]
                for key in gone:
                    del entries[key]
                if gone:
                    dirty.add(number)
        return dirty

    def _write_shards(self, shards: dict[int, dict], numbers: set[int]) -> None:
        from .execution import dumps

        signatures = self._signatures
        for number in sorted(numbers):
            entries = shards.get(number, {})
            kept = {query: signatures[query] for _result, dependencies in entries.values()
                    for query, _answer in dependencies if query in signatures}
            payload = dumps((FORMAT, entries, kept))
            _write_file(self._folder_fd, f"{self.key}-{number:02d}", MAGIC + self._mac(payload) + payload)

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


def _mac(secret: bytes, payload: bytes) -> bytes:
    from ._hashing import blake2b

    return blake2b(payload, key=secret, person=b"skill-eval", digest_size=MAC_SIZE).digest()


def _verified(secret: bytes, data: bytes) -> bytes | None:
    """The payload of a cache file whose MAC under ``secret`` verifies, else ``None``."""
    from ._hashing import compare_digest

    if not data.startswith(MAGIC) or len(data) < len(MAGIC) + MAC_SIZE:
        return None
    mac = data[len(MAGIC):len(MAGIC) + MAC_SIZE]
    payload = data[len(MAGIC) + MAC_SIZE:]
    return payload if compare_digest(mac, _mac(secret, payload)) else None


# -- the walk record ------------------------------------------------------------------


def walk_with_record(root: Path, config: Config, exclude: Exclusion) -> Targets:
    """What :func:`~skill_eval.linter.workspace.discover` finds walking the
    whole workspace ``root``, from the cache's walk record when it still
    holds, else walked (and recorded).

    The record holds the walk's findings and every folder it looked into
    with its signature (:func:`~skill_eval.linter.reader.folder_signature`,
    taken before the folder was listed), and where each symbolic link it
    listed led (a folder or not: what decides whether the walk lists it as
    a file). It holds when every folder has that signature still and every
    link leads to the same kind: no entry was created, deleted or renamed
    in any of them since (git's untracked cache trusts folders the same
    way). A ``stat`` per folder costs far less than a listing per folder
    (docs/performance.md). A walk is recorded only when every folder's last
    change is at least :data:`~skill_eval.linter.session.RACY_SECONDS` old
    (a change within the same tick of the clock would keep its signature)."""
    from .reader import FileSystemReader, folder_signature
    from .session import _settled
    from .workspace import Targets, discover

    secret = secret_key()
    folder_fd = _open_cache_folder(root) if secret is not None else None
    if folder_fd is None:
        return discover(root, FileSystemReader(), exclude=exclude)
    try:
        name = f"{key_for(root, config)}-{WALK_RECORD}"
        data = _read_file(folder_fd, name)
        payload = _verified(secret, data) if data is not None else None
        if payload is not None:
            from .execution import loads

            try:
                fmt, folders, links, probes, skills, specs, pruned, suites = loads(payload)
            except Exception:  # noqa: BLE001 - an unreadable record is no record
                fmt = None
            if fmt == FORMAT and _walk_holds(folders, links):
                found = Targets(set(map(Path, probes)), set(map(Path, skills)), set(map(Path, specs)), list(pruned),
                                [link for link, _kind in links])
                found.suites = set(map(Path, suites))
                return found
        if _settled(folder_signature(str(root))) is None:
            # Changed a moment ago (often by creating this cache's folder):
            # no record could be written, so no folder's signature is taken.
            return discover(root, FileSystemReader(), exclude=exclude)
        looked_at: list[tuple[str, tuple | None]] = []
        targets = discover(root, FileSystemReader(), exclude=exclude, looked_at=looked_at)
        if all(signature is not None and _settled(signature) is not None for _folder, signature in looked_at):
            from .execution import dumps

            links = [(link, _leads_to_folder(link)) for link in targets.links or ()]
            payload = dumps((FORMAT, looked_at, links, [str(p) for p in targets.probes], [str(p) for p in targets.skills],
                             [str(p) for p in targets.output_specs], list(targets.pruned or ()),
                             [str(p) for p in targets.suites]))
            _write_file(folder_fd, name, MAGIC + _mac(secret, payload) + payload)
        return targets
    finally:
        os.close(folder_fd)


def _walk_holds(folders: list[tuple[str, tuple]], links: list[tuple[str, bool]]) -> bool:
    """Whether every folder of a walk record has its recorded signature and
    every link leads to the kind it led to."""
    from .reader import folder_signature

    for folder, signature in folders:
        if folder_signature(folder) != signature:
            return False
    return all(_leads_to_folder(link) == kind for link, kind in links)


def _leads_to_folder(link: str) -> bool:
    return os.path.isdir(link)


def _unit_key(unit: Unit) -> tuple[str, str]:
    kind, path = unit
    return ("probe" if kind in ("probe", "facts") else kind, str(path))


def _shard_of(key: tuple[str, str]) -> int:
    from zlib import crc32

    return crc32(key[1].encode("utf-8", "surrogateescape")) % SHARDS


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
    if source is not None:
        try:
            from .reader import read_regular_file

            digest.update(read_regular_file(source, 1 << 20))
        except OSError:
            digest.update(b"unreadable")
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


def secret_key() -> bytes | None:
    """This user's secret key for the cache's MACs, made on first use:
    ``$XDG_CACHE_HOME/skill-eval/cache-key`` (else ``~/.cache/...``), 32
    random bytes readable by the user alone. ``None`` when it cannot be made
    or read (no writable home): then nothing is cached."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(base, "skill-eval")
    path = os.path.join(folder, "cache-key")
    try:
        with open(path, "rb") as handle:
            key = handle.read(64)
        if len(key) == 32:
            return key
    except OSError:
        pass
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        temporary = f"{path}.{os.getpid()}.{os.urandom(4).hex()}"
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, os.urandom(32))
        finally:
            os.close(fd)
        try:
            os.link(temporary, path)  # the first process to make one wins; the others read it
        except FileExistsError:
            pass
        finally:
            os.unlink(temporary)
        with open(path, "rb") as handle:
            key = handle.read(64)
        return key if len(key) == 32 else None
    except OSError:
        return None


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
        if not stat.S_ISREG(status.st_mode) or status.st_size > MAX_SHARD_SIZE:
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
