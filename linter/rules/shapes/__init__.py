"""SE4xx: shapes (the seed's four shapes; time pressure only as a modifier)."""

from .se401_time_pressure_alone import TimePressureAlone
from .se402_shape_not_declared import ShapeNotDeclared

RULES: tuple = (TimePressureAlone, ShapeNotDeclared)
