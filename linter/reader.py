"""The one interface through which the engine reads files (:data:`Reader`): the linter's
:class:`FileSystemReader`, or the language server's subclass that serves unsaved buffers first.
"""

from __future__ import annotations

import _thread
import errno
import os
import stat
import sys
from pathlib import Path
from typing import Callable, Iterator


TOOL_FOLDERS = frozenset({
    ".git", ".hg", ".svn", ".jj", ".bzr",  # version control
    ".venv", ".tox", ".nox", "node_modules", "__pycache__", "site-packages",  # environments and packages
    ".mypy_cache", ".pytest_cache", ".ruff_cache", ".skill-eval-cache",  # tools' caches
})
"""VCS and tool folders: never descended into. Other hidden folders are
walked (skills live in ``.claude/skills/``, ``.github/skills/``...)."""

SKIPPED_FOLDERS = TOOL_FOLDERS | {"runs"}
"""Folder names never descended into while discovering fixtures (``runs``:
the runner's records, found by :func:`~skill_eval.linter.run_records.runs_files_in`)."""


def is_below(path: str, root: str) -> bool:
    """Whether ``path`` is ``root`` or below it, told on their text (both absolute and normal)."""
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def list_folder(folder: str, links: list[str] | None = None, fd: int | None = None) -> tuple[list[str], list[str]] | None:
    """``(file names, sub-folder names)`` of ``folder`` (or its open descriptor ``fd``), a link
    to a folder in neither and every link's path in ``links``; ``None`` when it cannot be listed."""
    opened = None
    if fd is None and SEALED:
        try:
            fd = opened = os.open(folder, _DIR_FLAGS)
        except (OSError, ValueError):
            return None
    files: list[str] = []
    subfolders: list[str] = []
    try:
        with os.scandir(folder if fd is None else fd) as entries:
            for entry in entries:
                try:
                    if entry.is_file(follow_symlinks=False):  # the most, and told by d_type as is_dir is
                        files.append(entry.name)
                    elif entry.is_dir(follow_symlinks=False):
                        subfolders.append(entry.name)
                    elif entry.is_symlink():
                        if links is not None:
                            links.append(os.path.join(folder, entry.name))
                        if not entry.is_dir():
                            files.append(entry.name)
                    else:
                        files.append(entry.name)
                except OSError:
                    files.append(entry.name)
    except OSError:
        return None
    finally:
        _close(opened)
    return files, subfolders


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the file descriptor ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def walk_folders(
    root: Path | str, skipped: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
    exclude: Callable[[str], bool] | None = None, below: Path | str | None = None,
) -> Iterator[tuple[str, list[str], list[str]]]:
    """A top-down, sorted ``os.walk`` of ``root`` (the caller may prune the sub-folder list)
    leaving out folders named in ``skipped`` (their paths go to ``pruned``), those
    ``exclude`` is true for, virtual environments and links to folders (:func:`list_folder`).

    Each folder is opened relative to its parent's descriptor with ``O_NOFOLLOW`` (where
    :data:`SEALED`): one swapped for a link meanwhile is not listed. ``below``: ``root`` is
    opened below that workspace root only (:meth:`SealedRoot.open`)."""
    top = os.fspath(root)
    try:
        if not SEALED:
            top_fd = None
        elif below is not None:
            top_fd = sealed_root(below).open(top, _DIR_FLAGS)
        else:
            top_fd = os.open(top, _DIR_FLAGS & ~os.O_NOFOLLOW)
    except (OSError, ValueError):
        return
    stack: list[tuple[str | None, int | None, str | None]] = [(top, top_fd, None)]
    current = None  # the descriptor of the folder just listed, until handed to the stack or closed
    try:
        while stack:  # (folder, its descriptor, None), (folder, its parent's, its name), or (None, one to close, None)
            folder, fd, name = stack.pop()
            if folder is None:
                _close(fd)
                continue
            if name is not None and fd is not None:
                try:
                    fd = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except (OSError, ValueError):
                    continue  # no folder now, or one swapped for a link: not entered
            current = fd
            listing = list_folder(folder, links, fd)
            if listing is None or "pyvenv.cfg" in listing[0]:  # not listed, or a virtual environment
                _close(current)
                current = None
                continue
            files, subfolders = listing
            if subfolders:  # most folders of a workspace (a probe's) have none
                if pruned is not None:
                    pruned.extend(os.path.join(folder, name) for name in subfolders if name in skipped)
                subfolders[:] = sorted(name for name in subfolders if name not in skipped)
                if exclude is not None:
                    subfolders[:] = [name for name in subfolders if not exclude(os.path.join(folder, name))]
            yield folder, files, subfolders
            if subfolders:  # as the caller left them, each opened relative to this one's descriptor when reached
                stack.append((None, fd, None))
                current = None
                stack.extend((os.path.join(folder, name), fd, name) for name in reversed(subfolders))
            else:
                _close(current)
                current = None
    finally:
        _close(current)
        for folder, fd, _name in stack:
            if folder is None:
                _close(fd)


class NotRegularFile(OSError):
    """A path that names a FIFO, a device or a socket: never read."""


class FileTooLarge(OSError):
    """A file over the size limit it was read with; ``size`` is its size in bytes (as far as known)."""

    def __init__(self, path: Path | str, size: int, limit: int) -> None:
        super().__init__(f"{os.fspath(path)}: {size:,} bytes, over the {limit:,}-byte size limit")
        self.size = size
        self.limit = limit


_OPEN_FLAGS = (
    os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
    | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
)
"""How a file is opened: ``O_NONBLOCK``, so that opening a FIFO does not wait for a writer."""

_KINDS = {stat.S_IFIFO: "a FIFO (named pipe)", stat.S_IFCHR: "a character device", stat.S_IFBLK: "a block device",
          stat.S_IFSOCK: "a socket"}


def read_regular_file(path: Path | str, limit: int | None = None, root: Path | str | None = None) -> bytes:
    """The bytes of the regular file ``path`` (else :class:`NotRegularFile`,
    :class:`IsADirectoryError`), at most ``limit`` (else :class:`FileTooLarge`), opened
    without blocking on a FIFO; with ``root``, below that folder only (else :class:`OutsideRoot`)."""
    if root is not None and SEALED:
        fd = sealed_root(root).open(os.fspath(path))
    else:
        fd = os.open(path, _OPEN_FLAGS)
    try:
        status = os.fstat(fd)
        kind = stat.S_IFMT(status.st_mode)
        if kind == stat.S_IFDIR:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", os.fspath(path))
        if kind != stat.S_IFREG:
            raise NotRegularFile(errno.EINVAL, f"is {_KINDS.get(kind, 'not a regular file')}, not a regular file",
                                 os.fspath(path))
        if limit is not None and status.st_size > limit:
            raise FileTooLarge(path, status.st_size, limit)
        budget = None if limit is None else limit + 1
        chunks = []
        total = 0
        want = max(status.st_size, 1 << 16) + 1  # one read for a file whose size fstat told truly
        while budget is None or total < budget:
            chunk = os.read(fd, want if budget is None else min(want, budget - total))
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            want = 1 << 16
        if limit is not None and total > limit:
            raise FileTooLarge(path, total, limit)
    finally:
        os.close(fd)
    return b"".join(chunks)


# -- reading below a root, never outside it, even under a race ------------------------


class OutsideRoot(OSError):
    """A path whose real path is not below the root it was read under (nothing of it was opened)."""


_FILE_FLAGS = _OPEN_FLAGS | getattr(os, "O_NOFOLLOW", 0)
"""How a file below a root is opened: :data:`_OPEN_FLAGS`, not through a link."""

_DIR_FLAGS = _FILE_FLAGS | getattr(os, "O_DIRECTORY", 0)
"""How a folder below a root is opened: as a folder only, never through a link."""

SEALED = hasattr(os, "O_NOFOLLOW") and hasattr(os, "O_DIRECTORY") and os.open in os.supports_dir_fd \
    and os.readlink in os.supports_dir_fd
"""Whether files are opened relative to folder descriptors (:class:`SealedRoot`), else (Windows) by name."""

_LINK_ERRORS = frozenset({errno.ELOOP, errno.ENOTDIR, getattr(errno, "EMLINK", errno.ELOOP), getattr(errno, "EFTYPE", errno.ELOOP)})
"""What opening a link with ``O_NOFOLLOW`` fails with (Linux: ``ELOOP`` for a
file, ``ENOTDIR`` with ``O_DIRECTORY``; FreeBSD: ``EMLINK``; NetBSD ``EFTYPE``)."""


class SealedRoot:
    """A folder (a workspace root) whose files are opened without ever leaving it.

    Every path is opened from the root's descriptor one component at a time with
    ``O_NOFOLLOW`` (on Linux, in one ``openat2`` call: :func:`_linux_openat2`), so a link
    swapped in meanwhile cannot lead outside. A path with a link on it is opened by its
    real path, if inside the root, else :class:`OutsideRoot`."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._lock = _thread.allocate_lock()
        self._root_fd: int | None = None
        self._root_id: tuple[int, int] | None = None
        self._real_root = ""

    def close(self) -> None:
        """Close the root's descriptor (it is opened again when needed)."""
        with self._lock:
            self._close_all()

    def _close_all(self) -> None:
        _close(self._root_fd)
        self._root_fd = self._root_id = None

    def _root_descriptor(self) -> int:
        """The root's descriptor, opened again when the root's path names another folder now."""
        if self._root_fd is not None and _identity(self.root) == self._root_id:
            return self._root_fd
        _close(self._root_fd)
        self._root_fd = None
        fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0))
        status = os.fstat(fd)
        self._root_fd, self._root_id = fd, (status.st_dev, status.st_ino)
        self._real_root = os.path.realpath(self.root)
        return fd

    def open(self, path: str, flags: int = _FILE_FLAGS) -> int:
        """A new descriptor of ``path`` (absolute and normal) opened with ``flags`` (holding
        ``O_NOFOLLOW``) below the root only, else :class:`OutsideRoot`."""
        with self._lock:
            relative = self._relative(path)
            if relative is None:
                raise OutsideRoot(errno.EXDEV, "outside the workspace root", path)
            if not relative:
                if flags & os.O_DIRECTORY:
                    return os.dup(self._root_descriptor())
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            if _openat2 is not None and not flags & os.O_CREAT:
                fd = _openat2(self._root_descriptor(), relative, flags)
                if fd is not None:
                    return fd
            fd = self._open_components(relative.split("/"), flags)
            return self._resolved(relative, flags, path) if fd is None else fd

    def _relative(self, path: str) -> str | None:
        """``path`` relative to the root ('/'-separated), from its text or else its real path;
        ``None`` when outside."""
        if is_below(path, self.root):
            relative = path[len(self.root):].lstrip(os.sep)
        else:
            if self._root_fd is None:
                self._root_descriptor()
            real = os.path.realpath(path)
            if not is_below(real, self._real_root):
                return None
            relative = real[len(self._real_root):].lstrip(os.sep)
        return relative.replace(os.sep, "/")

    def _open_components(self, parts: list[str], flags: int) -> int | None:
        """A new descriptor of the path ``parts`` below the root, opened one component at a
        time with ``O_NOFOLLOW`` (the last with ``flags``); ``None`` when one is a link, ``.`` or ``..``."""
        fd = os.dup(self._root_descriptor())
        try:
            for index, name in enumerate(parts):
                if name in ("", ".", ".."):
                    return None
                try:
                    opened = os.open(name, flags if index == len(parts) - 1 else _DIR_FLAGS, dir_fd=fd)
                except OSError as error:
                    if error.errno in _LINK_ERRORS and _is_link(name, fd):
                        return None
                    raise
                os.close(fd)
                fd = opened
            found, fd = fd, None
            return found
        finally:
            _close(fd)

    def _resolved(self, relative: str, flags: int, shown: str) -> int:
        """A new descriptor of ``relative``, on which a link was met: its real path, if below
        the root's (else :class:`OutsideRoot`), opened by :meth:`_open_components` (a link
        there by then: ``ELOOP``)."""
        self._root_descriptor()
        real = os.path.realpath(os.path.join(self.root, relative))
        if not is_below(real, self._real_root):
            raise OutsideRoot(errno.EXDEV, "outside the workspace root", shown)
        parts = [part for part in real[len(self._real_root):].split(os.sep) if part]
        if not parts and not flags & os.O_DIRECTORY:
            raise IsADirectoryError(errno.EISDIR, "Is a directory", shown)
        fd = self._open_components(parts, flags)
        if fd is None:
            raise OSError(errno.ELOOP, "Too many levels of symbolic links", shown)
        return fd


def _linux_openat2() -> Callable[[int, str, int], int | None] | None:
    """Linux's ``openat2`` with ``RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS``: a path below a folder
    descriptor opened in one system call (14 vs 23 us), nothing opened when a component is a
    link or leads out. ``None`` off Linux or where its system-call number is not 437."""
    if sys.platform != "linux" or os.uname().machine not in _OPENAT2_MACHINES or sys.maxsize < 2**32:
        return None
    import ctypes

    class OpenHow(ctypes.Structure):
        _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]

    syscall = ctypes.CDLL(None, use_errno=True).syscall
    syscall.restype = ctypes.c_long
    number = ctypes.c_long(437)
    hows: dict[int, tuple] = {}

    def openat2(dir_fd: int, relative: str, flags: int) -> int | None:
        """A new descriptor, or ``None``: the caller opens it the slow way, which tells why."""
        global _openat2
        how = hows.get(flags)
        if how is None:
            found = OpenHow(flags, 0, 0x08 | 0x04)  # RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS
            how = hows[flags] = (ctypes.byref(found), ctypes.c_size_t(ctypes.sizeof(found)), found)
        if "\0" in relative:  # a C string would end there: os.open's ValueError told by the slow way
            return None
        fd = syscall(number, ctypes.c_int(dir_fd), os.fsencode(relative), how[0], how[1])
        if fd >= 0:
            return fd
        if ctypes.get_errno() in (errno.ENOSYS, errno.EPERM, errno.E2BIG):  # none here (a seccomp filter)
            _openat2 = None
        return None

    return openat2


_OPENAT2_MACHINES = frozenset({"x86_64", "aarch64", "arm64", "ppc64le", "ppc64", "s390x", "riscv64", "loongarch64"})
"""Where ``openat2`` is system call 437 (not alpha, ia64, MIPS or x32)."""

_openat2 = _linux_openat2() if SEALED else None


def _close(fd: int | None) -> None:
    """Close ``fd`` (if any), ignoring errors."""
    if fd is not None:
        try:
            os.close(fd)
        except OSError:
            pass


def _identity(path: str) -> tuple[int, int] | None:
    """``(device, inode)`` of what ``path`` names (links followed), or ``None``."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):
        return None
    return status.st_dev, status.st_ino


def _is_link(name: str, dir_fd: int) -> bool:
    """Whether ``name`` in the folder ``dir_fd`` is a symbolic link."""
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


_SEALED_ROOTS: dict[str, SealedRoot] = {}
"""The :class:`SealedRoot` of each workspace root read below, by its path."""

_ROOTS_KEPT = 8


def _after_fork_in_child() -> None:
    """A forked child starts its own :class:`SealedRoot` state (locks and descriptors)."""
    for sealed in _SEALED_ROOTS.values():
        sealed._lock = _thread.allocate_lock()
        sealed._close_all()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def sealed_root(root: Path | str) -> SealedRoot:
    """The :class:`SealedRoot` of ``root`` (one per root and process)."""
    key = os.fspath(root)
    found = _SEALED_ROOTS.get(key)
    if found is None:
        if len(_SEALED_ROOTS) >= _ROOTS_KEPT:
            _SEALED_ROOTS.pop(next(iter(_SEALED_ROOTS))).close()
        found = _SEALED_ROOTS[key] = SealedRoot(key)
    return found


class FileSystemReader:
    """Where the engine gets file contents and folder listings: straight from disk."""

    def read_bytes(self, path: Path, limit: int | None = None, root: Path | str | None = None) -> bytes:
        """The file's bytes, as :func:`read_regular_file` reads them."""
        return read_regular_file(path, limit, root)

    def is_file(self, path: Path) -> bool:
        """Whether ``path`` is a regular file (or an unsaved buffer)."""
        return os.path.isfile(path)

    def signature(self, path: Path) -> tuple[int, int, int, int, int] | None:
        """``(device, inode, size, mtime_ns, ctime_ns)`` of the regular file ``path`` from its
        ``lstat``, or ``None`` (not a regular file on disk)."""
        try:
            status = os.lstat(path)
        except (OSError, ValueError):
            return None
        if not stat.S_ISREG(status.st_mode):
            return None
        return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns, status.st_ctime_ns

    def is_dir(self, path: Path) -> bool:
        """Whether ``path`` is a directory."""
        return os.path.isdir(path)

    def walk_files(
        self, root: Path, names: frozenset[str], pruned: list[str] | None = None, links: list[str] | None = None,
        exclude: Callable[[str], bool] | None = None, below: Path | str | None = None,
    ) -> Iterator[Path]:
        """Every file below ``root`` named one of ``names`` that ``exclude`` does not match, as
        :func:`walk_folders` over :data:`SKIPPED_FOLDERS` walks."""
        for folder, files, _subfolders in walk_folders(root, SKIPPED_FOLDERS, pruned, links, exclude, below):
            for name in sorted(names.intersection(files)):
                if exclude is None or not exclude(os.path.join(folder, name)):
                    yield Path(folder, name)


Reader = FileSystemReader
"""The interface through which the engine reads files: a :class:`FileSystemReader` or a subclass."""
