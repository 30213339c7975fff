"""Output formats of ``skill-eval-lint``: text, json, sarif, github."""

from __future__ import annotations

import os
from pathlib import Path

FORMATS = ("text", "json", "sarif", "github")


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder) when inside it."""
    base = base or Path.cwd()
    try:
        return os.path.relpath(path, base) if Path(path).is_absolute() else str(path)
    except ValueError:
        return str(path)
