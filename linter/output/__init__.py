"""Output formats of ``skill-eval-lint``: text, json, sarif, github."""

from __future__ import annotations

import os
from pathlib import Path

FORMATS = ("text", "full", "json", "sarif", "github")
"""``--output-format`` choices (without it: :func:`default_format`)."""


def default_format(stream, to_file: bool) -> str:
    """``full`` (source lines and carets) when the report goes to a terminal, else
    ``text`` (one line per finding, what pre-commit, CI and scripts read)."""
    if to_file:
        return "text"
    try:
        return "full" if stream.isatty() else "text"
    except (AttributeError, ValueError):
        return "text"


class UsageError(Exception):
    """An output that cannot be made as asked; the CLI prints the message (naming the fix) and exits 2."""


def encodable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates: a file name's undecodable
    bytes) as its backslash escape (``\\udc80``), so that a report is always valid UTF-8."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def encodable_json(document: str) -> str:
    """A JSON document made valid UTF-8: each lone surrogate (in a string) as its
    ``\\uXXXX`` escape, the same JSON value."""
    try:
        document.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda found: f"\\u{ord(found.group()):04x}", document)
    return document


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder), as ``os.path.relpath``
    gives it; a relative path as it is, an absolute one with no relative form (another
    drive) normalized."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        return os.path.relpath(text, base)
    except ValueError:
        return os.path.normpath(text)
