"""The explicit registry of rules, family by family.

Each family package lists its rule classes in ``RULES``; :data:`REGISTRY` is
their concatenation in code order. A rule is active only when it is listed
here: nothing is discovered by import side effects.
"""

from __future__ import annotations

from . import accounting, anchoring, artifact, calibration, files, frontmatter, shapes, suites
from .base import Rule, Scope

REGISTRY: tuple[type[Rule], ...] = tuple(
    sorted(
        files.RULES + anchoring.RULES + accounting.RULES + artifact.RULES + shapes.RULES
        + calibration.RULES + frontmatter.RULES + suites.RULES,
        key=lambda rule: rule.code,
    )
)

BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in REGISTRY}


def get_rule(code: str) -> type[Rule] | None:
    """The rule class of ``code`` (case-insensitive), if registered."""
    return BY_CODE.get(code.strip().upper())


__all__ = ["REGISTRY", "BY_CODE", "get_rule", "Rule", "Scope"]
