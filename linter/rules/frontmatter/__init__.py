"""SE7xx: SKILL.md front matter, per the Agent Skills specification."""

from .se701_missing_front_matter import MissingFrontMatter
from .se702_unclosed_front_matter import UnclosedFrontMatter
from .se703_invalid_front_matter_yaml import InvalidFrontMatterYaml
from .se704_front_matter_not_mapping import FrontMatterNotMapping
from .se705_missing_required_key import MissingRequiredKey
from .se706_invalid_skill_name import InvalidSkillName
from .se707_name_folder_mismatch import NameFolderMismatch
from .se708_invalid_description import InvalidDescription
from .se709_invalid_compatibility import InvalidCompatibility
from .se710_unknown_front_matter_key import UnknownFrontMatterKey
from .se711_duplicate_front_matter_key import DuplicateFrontMatterKey
from .se712_invalid_metadata import InvalidMetadata
from .se713_invalid_allowed_tools import InvalidAllowedTools

RULES: tuple = (
    MissingFrontMatter,
    UnclosedFrontMatter,
    InvalidFrontMatterYaml,
    FrontMatterNotMapping,
    MissingRequiredKey,
    InvalidSkillName,
    NameFolderMismatch,
    InvalidDescription,
    InvalidCompatibility,
    UnknownFrontMatterKey,
    DuplicateFrontMatterKey,
    InvalidMetadata,
    InvalidAllowedTools,
)
