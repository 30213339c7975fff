"""Small helpers shared by the defect-accounting and shape rules."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from ...context import ProbeContext


def is_tier2(context: "ProbeContext") -> bool:
    """Whether the probe is a tier-2 (forcing-defect) probe: the seed's rules
    on kind, count, independence and shapes apply only to those."""
    return context.get("tier", int) == 2


def defect_label(index: int, defect: dict[str, Any]) -> str:
    """How a message names a defect: its id, else its position."""
    defect_id = defect.get("id")
    if isinstance(defect_id, str) and defect_id.strip():
        return defect_id
    return f"defects[{index}]"


def plural(count: int, word: str) -> str:
    """``"1 defect"``, ``"2 defects"``."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def artifact_name(context: "ProbeContext") -> str:
    """The artifact's file name, for messages."""
    artifact = context.artifact
    return artifact.path.name if artifact is not None else "the artifact"
