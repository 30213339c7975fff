"""Output formats of ``skill-eval-lint``: text, json, sarif, github."""

from __future__ import annotations

import os
from pathlib import Path

FORMATS = ("text", "full", "json", "sarif", "github")
"""``--output-format`` choices (without it: :func:`default_format`)."""


def default_format(stream, to_file: bool) -> str:
    """``full`` (source lines and carets) when the report goes to a terminal, else ``text``."""
    if to_file:
        return "text"
    try:
        return "full" if stream.isatty() else "text"
    except (AttributeError, ValueError):
        return "text"


class UsageError(Exception):
    """An output that cannot be made as asked; the CLI prints the message (naming the fix) and exits 2."""


def encodable(text: str) -> str:
    """``text`` with each lone surrogate (a file name's undecodable byte) as its backslash escape."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def encodable_json(document: str) -> str:
    """A JSON document with each lone surrogate as its ``\\uXXXX`` escape (the same JSON value)."""
    try:
        document.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda found: f"\\u{ord(found.group()):04x}", document)
    return document


def display_path(path: Path, base: Path | None = None) -> str:
    """An absolute ``path`` relative to ``base`` (default: the current folder) when it has such a
    form; a relative one as it is."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    try:
        return os.path.relpath(text, base)
    except ValueError:
        return os.path.normpath(text)
