"""SE2xx: defect accounting (seed rules 1-3)."""

from .se201_drifted_defect_count import DriftedDefectCount
from .se202_quote_not_found import QuoteNotFound
from .se203_floor_not_single import FloorNotSingle
from .se204_band_out_of_range import BandOutOfRange
from .se205_dependent_defects import DependentDefects
from .se206_duplicate_defect_id import DuplicateDefectId
from .se207_no_discriminator import NoDiscriminator

RULES: tuple = (
    DriftedDefectCount, QuoteNotFound, FloorNotSingle, BandOutOfRange, DependentDefects, DuplicateDefectId,
    NoDiscriminator,
)
