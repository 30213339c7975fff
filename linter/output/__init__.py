"""Output formats of ``skill-eval-lint``: text, json, sarif, github."""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

FORMATS = ("text", "full", "json", "sarif", "github")
"""``--output-format`` choices. Without the flag: ``full`` on a terminal,
else ``text`` (:func:`default_format`)."""


def default_format(stream, to_file: bool) -> str:
    """``full`` (source lines and carets) when the report goes to a
    terminal, else ``text`` (one line per finding, what pre-commit, CI and
    scripts read)."""
    if to_file:
        return "text"
    try:
        return "full" if stream.isatty() else "text"
    except (AttributeError, ValueError):
        return "text"


class UsageError(Exception):
    """An output that cannot be made as asked; the CLI prints the message
    (which names the fix) on one line and exits 2."""


def encodable(text: str) -> str:
    """``text`` with what UTF-8 cannot encode (lone surrogates: a file name's
    undecodable bytes, a ``"\\udc80"`` in probe.json) written as its
    backslash escape (``\\udc80``), so that a report is always valid UTF-8
    and printing it never fails. ``text`` itself when it is encodable (almost
    always: one C-level encode)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def encodable_json(document: str) -> str:
    """A JSON document made valid UTF-8: a lone surrogate can only stand in a
    string, where its ``\\uXXXX`` escape is the same JSON value (a reader
    gets the very string back), so each is replaced by that escape."""
    try:
        document.encode("utf-8")
    except UnicodeEncodeError:
        import re

        return re.sub("[\ud800-\udfff]", lambda found: f"\\u{ord(found.group()):04x}", document)
    return document


def display_path(path: Path, base: Path | None = None) -> str:
    """``path`` relative to ``base`` (default: the current folder) when inside it.

    A path below ``base`` is the rest of its text; otherwise the folder part
    is made relative once per folder (``os.path.relpath`` is Python code; a
    report names a few folders many times, and often one finding per probe
    folder, at the serial end of the run: docs/performance.md)."""
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
        if name in ("", ".", "..") or base_text == text or base_text.startswith(text.rstrip(os.sep) + os.sep):
            return os.path.relpath(text, base_text)  # not a file below a folder of its own
        relative = _relative_folder(folder, base_text)
    except ValueError:
        return text
    return name if relative == "." else os.path.join(relative, name)


@lru_cache(maxsize=1024)
def _relative_folder(folder: str, base: str) -> str:
    """``os.path.relpath(folder, base)``, from the parent's when ``folder`` is
    neither ``base`` nor above it: its last part then is not one of ``base``'s,
    so it only extends the parent's relative path (a report on a tree beside
    the current folder names hundreds of probe folders of a few parents)."""
    parent, name = os.path.split(folder)
    if not name or parent == folder or folder == base or base.startswith(folder.rstrip(os.sep) + os.sep):
        return os.path.relpath(folder, base)
    above = _relative_folder(parent, base)
    return name if above == "." else os.path.join(above, name)
