"""SE1xx: anchoring (every `step_heading` resolves; graded fields are taught)."""

from .se101_misanchored_step import MisanchoredStep

RULES: tuple = (MisanchoredStep,)
