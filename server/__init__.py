"""The skill-eval language server (pygls 2.x): a thin adapter over the engine."""
