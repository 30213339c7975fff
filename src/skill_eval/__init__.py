"""skill-eval: lint, serve and run evaluations of AI-agent skill probes.

The engine lives in :mod:`skill_eval.linter` (no LSP imports), the language
server in :mod:`skill_eval.server` and the eval runner in :mod:`skill_eval.evals`.
"""

__version__ = "0.1.0"
