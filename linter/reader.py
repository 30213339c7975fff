"""The one interface through which the engine reads files.

The linter uses :class:`FileSystemReader`; the language server wraps it in an
:class:`OverlayReader` that serves unsaved editor buffers first. Nothing in the
engine opens a file any other way.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Callable, Iterator, Mapping, Protocol


class Reader(Protocol):
    """Where the engine gets file contents and directory listings."""

    def read_bytes(self, path: Path, limit: int | None = None) -> bytes:
        """The file's bytes; raises :class:`OSError` when it cannot be read:
        :class:`NotRegularFile` for anything but a regular file (a FIFO, a
        device, a socket: never waited on), :class:`IsADirectoryError` for a
        folder, :class:`FileTooLarge` when it holds more than ``limit`` bytes
        (then at most ``limit`` + 1 bytes are read)."""

    def is_file(self, path: Path) -> bool:
        """Whether ``path`` is a regular file (or an unsaved buffer)."""

    def signature(self, path: Path) -> tuple[int, int, int, int, int] | None:
        """``(device, inode, size, mtime_ns, ctime_ns)`` of the regular file
        ``path`` from its ``lstat`` (a link is not followed), or ``None``: no
        such file, not a regular file, or not read from disk (a buffer). Two
        equal signatures taken some time apart mean the file was not written
        in between, unless it was written within one tick of the file
        system's clock (the cache's "racy" case)."""

    def is_dir(self, path: Path) -> bool:
        """Whether ``path`` is a directory."""

    def walk_files(
        self, root: Path, names: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
        exclude: Callable[[str], bool] | None = None,
    ) -> Iterator[Path]:
        """Every file below ``root`` whose name is in ``names``, in sorted order.

        VCS and tool folders (:data:`SKIPPED_FOLDERS`), virtual environments
        and the runner's ``evals/runs`` folders are skipped, and so are the
        folders ``exclude`` matches (``exclude(path)``, a folder's path, true
        to leave it out); symbolic links to folders are not followed (a link
        loop cannot hang the walk). ``pruned``, when given,
        receives the paths of the folders skipped by name
        (:data:`SKIPPED_FOLDERS`), e.g. the ``runs`` folders; ``links`` the
        path of every symbolic link the walk listed.
        """


TOOL_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".jj", ".bzr",  # version control
    ".venv", ".tox", ".nox", "node_modules", "__pycache__", "site-packages",  # environments and packages
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".skill-eval-cache",  # tools' caches
})
"""VCS and tool folders: never descended into. Other hidden folders are
walked: skills live in ``.claude/skills/``, ``.github/skills/``, and the
openai/skills layout's ``.curated/``, ``.experimental/`` and ``.system/``."""

SKIPPED_FOLDERS = TOOL_FOLDERS | {"runs"}
"""Folder names never descended into while discovering fixtures (``runs``:
the runner's records, found by :func:`~skill_eval.linter.runs.runs_files_in`)."""


def list_folder(folder: str, links: list[str] | None = None) -> tuple[list[str], list[str]] | None:
    """``(file names, sub-folder names)`` of ``folder`` from one ``os.scandir``
    (its entries tell folders from files without a ``stat`` each); a symbolic
    link to a folder is in neither (walks do not follow links, so a link loop
    cannot hang them). ``links``, when given, receives the path of every
    symbolic link in ``folder`` (also from the entries, no ``stat``). ``None``
    when the folder cannot be listed."""
    files: list[str] = []
    subfolders: list[str] = []
    try:
        with os.scandir(folder) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        subfolders.append(entry.name)
                    elif entry.is_symlink():
                        if links is not None:
                            links.append(entry.path)
                        if not entry.is_dir():
                            files.append(entry.name)
                    else:
                        files.append(entry.name)
                except OSError:
                    files.append(entry.name)
    except OSError:
        return None
    return files, subfolders


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the file descriptor ``fd`` (``os.write`` may
    write less than asked)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def folder_signature(folder: str) -> tuple[int, int, int, int, int] | None:
    """``(device, inode, mode, mtime_ns, ctime_ns)`` of ``folder`` from its
    ``lstat``, or ``None`` when there is none. Creating, deleting or renaming
    an entry of a folder moves its mtime and ctime; so does making it a link
    or another folder (its inode), and a change of its permissions moves its
    ctime: two equal signatures taken apart mean the same listing, unless it
    changed within one tick of the file system's clock (see
    :data:`~skill_eval.linter.session.RACY_SECONDS`)."""
    try:
        status = os.lstat(folder)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino, status.st_mode, status.st_mtime_ns, status.st_ctime_ns


def walk_folders(
    root: Path | str, skipped: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
    exclude: Callable[[str], bool] | None = None, looked_at: list[tuple[str, tuple | None]] | None = None,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(folder, file names, sub-folder names)`` for ``root`` and every folder
    below it, depth first and sorted, like a top-down ``os.walk``: folders
    named in ``skipped``, those ``exclude`` is true for (given the folder's
    path) and virtual environments (a folder holding ``pyvenv.cfg``) are left
    out, links to folders are not followed,
    and a caller that empties the sub-folder list in place prunes the walk
    there. Listing with :func:`list_folder` spares the ``lstat`` per folder
    that ``os.walk`` spends (a large part of a walk: docs/performance.md).
    ``pruned``, when given, receives the path of every folder left out because
    its name is in ``skipped``; ``links`` that of every symbolic link in the
    folders listed (:func:`list_folder`); ``looked_at`` ``(folder, its
    signature)`` for every folder the walk looked into (listed or not), the
    signature (:func:`folder_signature`) taken before the listing, so that a
    change during the walk shows in it next time."""
    pending = [os.fspath(root)]
    while pending:
        folder = pending.pop()
        if looked_at is not None:
            looked_at.append((folder, folder_signature(folder)))
        listing = list_folder(folder, links)
        if listing is None:
            continue
        files, subfolders = listing
        if "pyvenv.cfg" in files:
            continue  # a virtual environment: nothing of ours below it
        if pruned is not None:
            pruned.extend(os.path.join(folder, name) for name in subfolders if name in skipped)
        subfolders[:] = sorted(name for name in subfolders if name not in skipped)
        if exclude is not None:
            subfolders[:] = [name for name in subfolders if not exclude(os.path.join(folder, name))]
        yield folder, files, subfolders
        pending.extend(os.path.join(folder, name) for name in reversed(subfolders))


class NotRegularFile(OSError):
    """A path that names a FIFO, a device or a socket: never read (a FIFO would
    block the reader until a writer came; ``/dev/zero`` never ends)."""


class FileTooLarge(OSError):
    """A file over the size limit it was read with; ``size`` is its size in
    bytes (as ``fstat`` tells it, or as far as it was read)."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(f"{os.fspath(path)}: {size:,} bytes, over the {limit:,}-byte size limit")
        self.size = size
        self.limit = limit


_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
)
"""How a file is opened: ``O_NONBLOCK``, so that opening a FIFO returns at
once (its type is then refused) instead of waiting for a writer."""

_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket"}


def read_regular_file(path: Path | str, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, read safely: opened with
    ``O_NONBLOCK`` (a FIFO cannot block), its type checked with ``fstat``
    before any read (:class:`NotRegularFile`, :class:`IsADirectoryError`), its
    size too (:class:`FileTooLarge` before reading a byte of a file over
    ``limit``), and at most ``limit`` + 1 bytes read (a file that grows, or
    one whose ``fstat`` size is not its length, still cannot make the
    reader hold more). One ``os.read`` for a small file: no file object
    (less time per file than an unbuffered ``open``: docs/performance.md)."""
    fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        kind = stat.S_IFMT(status.st_mode)
        if kind != stat.S_IFREG:
            if kind == stat.S_IFDIR:
                raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
            raise NotRegularFile(errno.EINVAL, f"is {_KINDS.get(kind, 'not a regular file')}, not a regular file",
                                 os.fspath(path))
        size = status.st_size
        if limit is not None and size > limit:
            raise FileTooLarge(path, size, limit)
        budget = (limit + 1) if limit is not None else None
        chunks = []
        total = 0
        want = max(size, 1 << 16) + 1  # one read for a file whose size fstat told truly
        while True:
            if budget is not None:
                want = min(want, budget - total)
                if want <= 0:
                    break
            chunk = os.read(fd, want)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            want = 1 << 16
        if budget is not None and total > limit:
            raise FileTooLarge(path, total, limit)
    finally:
        os.close(fd)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


class FileSystemReader:
    """Reads straight from disk, through :func:`read_regular_file`."""

    def read_bytes(self, path: Path, limit: int | None = None) -> bytes:
        """:func:`read_regular_file`."""
        return read_regular_file(path, limit)

    def is_file(self, path: Path) -> bool:
        return os.path.isfile(path)

    def signature(self, path: Path) -> tuple[int, int, int, int, int] | None:
        try:
            status = os.lstat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(status.st_mode):
            return None
        return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns

    def is_dir(self, path: Path) -> bool:
        return os.path.isdir(path)

    def walk_files(
        self, root: Path, names: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
        exclude: Callable[[str], bool] | None = None, looked_at: list[tuple[str, tuple | None]] | None = None,
    ) -> Iterator[Path]:
        """Depth first, each folder's files before its sub-folders, both sorted
        (the order of ``os.walk`` with sorted sub-folders): :func:`walk_folders`
        (``looked_at``: the folders it looked into, with their signatures)."""
        for folder, files, _subfolders in walk_folders(root, SKIPPED_FOLDERS, pruned, links, exclude, looked_at):
            for name in sorted(names.intersection(files)):
                if exclude is None or not exclude(os.path.join(folder, name)):
                    yield Path(folder, name)


class OverlayReader(FileSystemReader):
    """A reader that serves in-memory buffers (unsaved editor text) before disk.

    ``buffers`` maps absolute paths to their current text; it is read live, so
    the owner may mutate it between lint runs.
    """

    def __init__(self, buffers: Mapping[Path, str]) -> None:
        self.buffers = buffers

    def read_bytes(self, path: Path, limit: int | None = None) -> bytes:
        text = self._buffer(path)
        if text is not None:
            raw = text.encode("utf-8", errors="surrogatepass")
            if limit is not None and len(raw) > limit:
                raise FileTooLarge(path, len(raw), limit)
            return raw
        return super().read_bytes(path, limit)

    def _buffer(self, path: Path | str) -> str | None:
        """The buffer of ``path``, if one is open (no ``Path`` made when
        none is: the cache checks thousands of paths, given as text)."""
        buffers = self.buffers
        if not buffers:
            return None
        return buffers.get(path if isinstance(path, Path) else Path(path))

    def is_file(self, path: Path) -> bool:
        return self._buffer(path) is not None or super().is_file(path)

    def signature(self, path: Path) -> tuple[int, int, int, int, int] | None:
        if self._buffer(path) is not None:
            return None
        return super().signature(path)

    def walk_files(
        self, root: Path, names: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
        exclude: Callable[[str], bool] | None = None,
    ) -> Iterator[Path]:
        seen = set()
        for path in super().walk_files(root, names, pruned, links, exclude):
            seen.add(path)
            yield path
        root = Path(root)
        for path in sorted(self.buffers):
            if path.name in names and path not in seen and root in path.parents and (
                    exclude is None or not any(exclude(os.fspath(p)) for p in (path, *path.parents) if root in p.parents)):
                yield path
