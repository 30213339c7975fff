"""SE0xx: files and schema."""

from .se000_internal_error import InternalError
from .se001_invalid_json import InvalidJson
from .se002_schema_violation import SchemaViolation

RULES: tuple = (InternalError, InvalidJson, SchemaViolation)
