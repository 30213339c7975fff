"""The language server's reader: unsaved editor buffers before the disk.

The engine reads every file through one interface
(:data:`skill_eval.linter.reader.Reader`); the server hands it this reader, so
that a lint sees what the editor shows, saved or not.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Iterator, Mapping

from ..linter.reader import FileSystemReader, FileTooLarge


class OverlayReader(FileSystemReader):
    """A reader that serves in-memory buffers (unsaved editor text) before disk.

    ``buffers`` maps absolute paths to their current text; it is read live, so
    the owner may mutate it between lint runs.
    """

    def __init__(self, buffers: Mapping[Path, str]) -> None:
        self.buffers = buffers

    def read_bytes(self, path: Path, limit: int | None = None, root: Path | str | None = None) -> bytes:
        text = self._buffer(path)
        if text is not None:
            raw = text.encode("utf-8", errors="surrogatepass")
            if limit is not None and len(raw) > limit:
                raise FileTooLarge(path, len(raw), limit)
            return raw
        return super().read_bytes(path, limit, root)

    def _buffer(self, path: Path | str) -> str | None:
        """The buffer of ``path``, if one is open (no ``Path`` made when none is)."""
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
        exclude: Callable[[str], bool] | None = None, below: Path | str | None = None,
    ) -> Iterator[Path]:
        seen = set()
        for path in super().walk_files(root, names, pruned, links, exclude, below=below):
            seen.add(path)
            yield path
        root = Path(root)
        for path in sorted(self.buffers):
            if path.name in names and path not in seen and root in path.parents and (
                    exclude is None or not any(exclude(os.fspath(p)) for p in (path, *path.parents) if root in p.parents)):
                yield path
