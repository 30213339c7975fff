"""Rules of the frontmatter family."""

RULES: tuple = ()
