"""Rules of the accounting family."""

RULES: tuple = ()
