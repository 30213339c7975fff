"""Output formats of ``skill-eval-lint``: text, json, sarif, github."""

from __future__ import annotations

import os
from functools import lru_cache
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
    gives it; below ``base``, the rest of its text, else its folder made relative once
    (a report names a few folders many times)."""
    text = os.fspath(path)
    if not os.path.isabs(text):
        return text
    text = os.path.normpath(text)
    base_text = os.path.normpath(os.fspath(base)) if base else os.getcwd()
    prefix = base_text.rstrip(os.sep) + os.sep
    if text.startswith(prefix) and len(text) > len(prefix) and text[len(prefix)] != os.sep:
        return text[len(prefix):]
    folder, name = os.path.split(text)
    try:
        if not name or base_text == text or base_text.startswith(text.rstrip(os.sep) + os.sep):
            return os.path.relpath(text, base_text)  # not a file below a folder of its own
        relative = _relative_folder(folder, base_text)
    except ValueError:
        return text
    return name if relative == "." else os.path.join(relative, name)


_relative_folder = lru_cache(maxsize=1024)(os.path.relpath)
"""``os.path.relpath``, cached: a report names a few folders many times."""
