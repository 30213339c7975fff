"""A reference ``skill_tree_sha256``, written apart from the runner's, for the
tests of the runner (tests/evals) and of the report (tests/report)."""

from __future__ import annotations

from pathlib import Path

TOOL_FOLDER_NAMES = {".git", ".hg", ".svn", ".jj", ".bzr", ".venv", ".tox", ".nox", "node_modules", "__pycache__",
                     "site-packages", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".skill-eval-cache"}
"""The VCS and tool folders docs/format.md lists as left out of a skill's tree."""


def skill_tree_sha256(folder: Path) -> str:
    """The ``skill_tree_sha256`` a runner records for the skill ``folder``,
    written here again independently of the runner: sha256 over every regular
    file of the folder outside ``evals/``, VCS and tool folders (no links),
    each relative path and its bytes length-prefixed, sorted by path."""
    import hashlib

    entries = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        folders = relative.parts[:-1]
        if path.is_symlink() or not path.is_file() or relative.parts[0] == "evals" \
                or any(part in TOOL_FOLDER_NAMES for part in folders):
            continue
        entries.append((relative.as_posix().encode(), path.read_bytes()))
    digest = hashlib.sha256()
    for name, data in sorted(entries):
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()
