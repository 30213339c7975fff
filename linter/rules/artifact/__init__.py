"""Rules of the artifact family."""

RULES: tuple = ()
