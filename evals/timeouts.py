"""The limit on the runner's timeouts (an agent's, a judge's)."""

from __future__ import annotations

from typing import Any

MAX_TIMEOUT_SECONDS = 7 * 24 * 3600
"""The longest timeout an agent or a judge may have: a week (``inf`` overflowed the clock)."""

TIMEOUT_RULE = f"must be a positive number of seconds, at most {MAX_TIMEOUT_SECONDS:,} (a week)"


def is_timeout(value: Any) -> bool:
    """Whether ``value`` is a number (not a bool) of seconds in (0, :data:`MAX_TIMEOUT_SECONDS`]."""
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and 0 < value <= MAX_TIMEOUT_SECONDS)
