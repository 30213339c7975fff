"""The skill-eval engine: fixture model, ``extract_skill_section`` and the rules.

This package never imports ``pygls`` or ``lsprotocol``; the language server is a
thin adapter over it. Heavy dependencies (markdown-it-py, jsonschema) are
imported only when a file needs them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

__all__ = ["extract_skill_section", "HeadingNotFound", "AmbiguousHeading", "lint_paths", "Diagnostic", "Severity", "Config", "load_config"]

if TYPE_CHECKING:  # pragma: no cover
    from .config import Config, load_config
    from .diagnostics import Diagnostic, Severity
    from .engine import lint_paths
    from .markdown import AmbiguousHeading, HeadingNotFound, extract_skill_section


def __getattr__(name: str):
    """Import the public names lazily (the CLI's start-up time matters)."""
    if name in ("extract_skill_section", "HeadingNotFound", "AmbiguousHeading"):
        from . import markdown

        return getattr(markdown, name)
    if name in ("Diagnostic", "Severity"):
        from . import diagnostics

        return getattr(diagnostics, name)
    if name in ("Config", "load_config"):
        from . import config

        return getattr(config, name)
    if name == "lint_paths":
        from .engine import lint_paths

        return lint_paths
    raise AttributeError(name)

def read_data(name: str) -> str:
    """The text of the shipped data file ``linter/data/<name>`` (phrase lists,
    the probe schema). Read beside this module rather than through
    ``importlib.resources``, whose import adds to every start
    (docs/performance.md): the package is always installed as plain files."""
    from pathlib import Path

    return (Path(__file__).parent / "data" / name).read_text(encoding="utf-8")


DOCS_BASE_URL = "https://github.com/skill-eval/skill-eval/blob/main/docs/rules"
"""Where each rule's generated page lives (``docs/rules/CODE.md``)."""
