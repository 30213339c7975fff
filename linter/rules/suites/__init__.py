"""SE8xx: skill-creator suites (``evals.json`` and trigger sets)."""

from .se801_invalid_suite_file import InvalidSuiteFile
from .se802_suite_schema_violation import SuiteSchemaViolation
from .se803_duplicate_eval_id import DuplicateEvalId
from .se804_suite_skill_mismatch import SuiteSkillMismatch
from .se805_missing_eval_file import MissingEvalFile
from .se806_eval_file_outside_workspace import EvalFileOutsideWorkspace
from .se807_empty_prompt import EmptyPrompt
from .se808_no_expectations import NoExpectations
from .se809_transcript_expectation import TranscriptExpectation
from .se810_one_sided_trigger_set import OneSidedTriggerSet
from .se811_duplicate_trigger_query import DuplicateTriggerQuery
from .se812_far_negative import FarNegative

RULES: tuple = (
    InvalidSuiteFile, SuiteSchemaViolation, DuplicateEvalId, SuiteSkillMismatch, MissingEvalFile,
    EvalFileOutsideWorkspace, EmptyPrompt, NoExpectations, TranscriptExpectation, OneSidedTriggerSet,
    DuplicateTriggerQuery, FarNegative,
)
