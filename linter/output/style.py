"""Colour for the human formats (``text``, ``full``): whether to use it, and plain ANSI SGR
codes (importing ``rich`` costs ~50 ms of CPU: more than a small lint's start-up).
"""

from __future__ import annotations

import os

BOLD, RED, YELLOW, CYAN, BLUE = "1", "31", "33", "36", "34"
SEVERITY_COLOURS = {"error": RED, "warning": YELLOW, "info": CYAN}


def colour_wanted(stream) -> bool:
    """Whether to write colour to ``stream``: ``NO_COLOR``, ``FORCE_COLOR``, ``TERM=dumb``, else a terminal."""
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
    """``style(text, *codes)``: ``text`` in those SGR codes when enabled, else ``text`` itself."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, *codes: str) -> str:
        if not self.enabled or not text or not codes:
            return text
        return f"\x1b[{';'.join(codes)}m{text}\x1b[0m"


PLAIN = Style(False)
