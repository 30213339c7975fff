"""The kernel's record of every open of some files and folders, whoever opens
them: ``inotify`` (``IN_OPEN``), through ``ctypes``.

An audit hook sees only the opens of its own interpreter, and names a file
opened relative to a folder descriptor by its last component only; ``strace``
follows one process tree. ``inotify`` watches the files themselves: an open
by the CLI, its helpers, the language server or its workers is reported
with the name opened, however the path to it was spelled (links, ``..``,
``openat``). Used by the tests that swap files for links to "secrets" while
the linter reads (tests/linter/test_sealed_reads.py, tests/server/...).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct
from pathlib import Path

IN_ACCESS = 0x001
IN_OPEN = 0x020
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC

_HEADER = struct.Struct("iIII")


def available() -> bool:
    """Whether ``inotify`` can be used here (Linux with glibc or musl)."""
    try:
        with OpenWatch([]):
            return True
    except OSError:
        return False


class OpenWatch:
    """Record every open (``IN_OPEN``) and read (``IN_ACCESS``) of the given
    folders and of every file directly in them, from ``__enter__`` on.

    :meth:`events` drains what the kernel reported: ``(path, what)``, ``what``
    being ``"open"``, ``"open folder"`` (listed) or ``"read"``."""

    def __init__(self, folders: list[Path]) -> None:
        self.folders = [Path(folder) for folder in folders]
        self._fd = -1
        self._watches: dict[int, Path] = {}
        self._seen: list[tuple[str, str]] = []

    def __enter__(self) -> "OpenWatch":
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        self._libc = libc
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        self._fd = fd
        for folder in self.folders:
            wd = libc.inotify_add_watch(fd, os.fsencode(folder), IN_OPEN | IN_ACCESS)
            if wd < 0:
                raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder} failed")
            self._watches[wd] = folder
        return self

    def __exit__(self, *exc_info) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1

    def events(self) -> list[tuple[str, str]]:
        """Everything reported so far (kept: each call returns all of it)."""
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size
                name = data[offset:offset + length].rstrip(b"\0")
                offset += length
                folder = self._watches.get(wd)
                if folder is None:
                    continue
                path = os.fsdecode(os.path.join(os.fsencode(folder), name)) if name else str(folder)
                if mask & IN_OPEN:
                    self._seen.append((path, "open folder" if mask & IN_ISDIR else "open"))
                if mask & IN_ACCESS:
                    self._seen.append((path, "read"))
        return list(self._seen)
