"""Rules of the shapes family."""

RULES: tuple = ()
