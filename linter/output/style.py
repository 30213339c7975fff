"""Colour for the human formats (``text``, ``full``): whether to use it, and
plain ANSI SGR codes.

Whether (:func:`colour_wanted`), in this order: ``NO_COLOR`` set and not empty
(no-color.org): no; ``FORCE_COLOR`` set and not empty (force-color.org): yes;
``TERM=dumb``: no; else when the stream is a terminal. (CPython's own
``_colorize`` decides in the same order.)

Plain escape codes rather than a library: the only candidate among the
dependencies, ``rich`` (the runner's extra, not the base install), costs
more to import than the whole of a small lint's own start-up
(docs/performance.md), for the five colours used here.
"""

from __future__ import annotations

import os

BOLD, RED, YELLOW, CYAN, BLUE = "1", "31", "33", "36", "34"
SEVERITY_COLOURS = {"error": RED, "warning": YELLOW, "info": CYAN}


def colour_wanted(stream) -> bool:
    """Whether to write colour to ``stream`` (see the module's docstring)."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


class Style:
    """``style(text, *codes)``: ``text`` in those SGR codes when enabled, else
    ``text`` itself (so a plain report is byte for byte the uncoloured one)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not text or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"


PLAIN = Style(False)
