"""Rules of the calibration family."""

RULES: tuple = ()
