"""Watching the lint cache from a test: which rules the engine runs, and
the cache folder's files."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.cache import CACHE_DIR


def cache_files(root: Path) -> dict[str, bytes]:
    """Every file of the workspace's cache folder, by name, with its bytes."""
    folder = root / CACHE_DIR
    return {path.name: path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file()}


def stored_keys(root: Path) -> set[tuple[str, str]]:
    """The unit keys of the cache file of the workspace's root and config,
    read by its layout (the index at the offset its last 8 bytes give), not
    by the cache (which only names the file)."""
    from skill_eval.linter.cache import CODEC, Cache, CacheIndex
    from skill_eval.linter.config import load_config
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.session import LintSession

    cache = Cache.open(LintSession(root, load_config(root), FileSystemReader()))
    data = (root / CACHE_DIR / cache.file_name).read_bytes()
    cache.close()
    return set(CODEC.decode(data[int.from_bytes(data[-8:], "little"):-8], CacheIndex).entries)


class RuleRuns:
    """Counts the rules the engine runs (its ``_run`` of one rule on one unit):
    none when every unit is served from the cache."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        from skill_eval.linter import engine

        self.count = 0
        original = engine._run

        def counted(*args, **kwargs):
            self.count += 1
            return original(*args, **kwargs)

        monkeypatch.setattr(engine, "_run", counted)
