"""The seed's shape names."""

TIME_PRESSURE = "time-pressure"
DEFECT_SHAPES = ("buried-in-green", "euphemized", "structural")
"""Shapes 1-3: the shapes a defect can have (time pressure is a modifier)."""
SHAPES = DEFECT_SHAPES + (TIME_PRESSURE,)
