"""SE1xx: anchoring (every `step_heading` resolves; graded fields are taught)."""

from .se101_misanchored_step import MisanchoredStep
from .se102_ambiguous_step import AmbiguousStep
from .se103_empty_window import EmptyWindow
from .se104_unruled_field import UnruledField
from .se105_unknown_field import UnknownField
from .se106_value_not_allowed import ValueNotAllowed
from .se107_unused_field_rules import UnusedFieldRules
from .se108_duplicate_field import DuplicateField
from .se109_values_without_code_spans import ValuesWithoutCodeSpans

RULES: tuple = (
    MisanchoredStep,
    AmbiguousStep,
    EmptyWindow,
    UnruledField,
    UnknownField,
    ValueNotAllowed,
    UnusedFieldRules,
    DuplicateField,
    ValuesWithoutCodeSpans,
)
