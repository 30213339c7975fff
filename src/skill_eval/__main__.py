"""``python -m skill_eval`` runs the umbrella command."""

from skill_eval.cli import entry

entry()
