"""The skill-eval engine: fixture model, ``extract_skill_section`` and the rules. It never
imports the language server's libraries; heavy dependencies are imported only when needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

_PUBLIC = {"extract_skill_section": "markdown", "HeadingNotFound": "markdown", "AmbiguousHeading": "markdown",
           "lint_paths": "engine", "Diagnostic": "diagnostics", "Severity": "diagnostics", "Config": "config",
           "load_config": "config"}
"""The public names, each with the module it is imported from when first used."""
__all__ = [*_PUBLIC]

if TYPE_CHECKING:  # pragma: no cover
    from .config import Config, load_config
    from .diagnostics import Diagnostic, Severity
    from .engine import lint_paths
    from .markdown import AmbiguousHeading, HeadingNotFound, extract_skill_section


def __getattr__(name: str):
    """Import the public names lazily (the CLI's start-up time matters)."""
    if name not in _PUBLIC:
        raise AttributeError(name)
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_PUBLIC[name]}"), name)


def read_data(name: str) -> str:
    """The text of the shipped data file ``linter/data/<name>`` (not ``importlib.resources``: slow to import)."""
    from pathlib import Path

    return (Path(__file__).parent / "data" / name).read_text(encoding="utf-8")


DOCS_BASE_URL = "https://github.com/skill-eval/skill-eval/blob/main/docs/rules"
"""Where each rule's generated page lives (``docs/rules/CODE.md``)."""
