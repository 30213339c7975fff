"""SE0xx: files and schema."""

from .se000_internal_error import InternalError
from .se001_invalid_json import InvalidJson
from .se002_schema_violation import SchemaViolation
from .se003_missing_file import MissingFile
from .se004_path_outside_workspace import PathOutsideWorkspace
from .se005_unreadable_file import UnreadableFile
from .se006_duplicate_probe_id import DuplicateProbeId

RULES: tuple = (
    InternalError, InvalidJson, SchemaViolation, MissingFile, PathOutsideWorkspace, UnreadableFile, DuplicateProbeId,
)
