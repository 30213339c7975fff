"""Shared helpers of the artifact rules (SE301-SE304)."""

from __future__ import annotations

from ...config import PhraseConfig
from ...context import ProbeContext
from ...textfile import TextDocument
from ._phrases import find_phrases, phrase_list


def phrase_diagnostics(rule, context: ProbeContext, table: str, config: PhraseConfig, describe):
    """Diagnostics of ``rule`` for every phrase of ``table`` (plus config
    ``extra``, minus occurrences inside an ``allow`` phrase) in the artifact."""
    artifact = context.artifact
    if artifact is None:
        return
    phrases = phrase_list(table) + tuple(config.extra)
    for match in find_phrases(artifact.text, phrases, tuple(config.allow)):
        shown = " ".join(match.text.split())
        if len(shown) > 80:
            shown = shown[:77] + "..."
        yield rule.diagnostic(artifact.span(match.start, match.end), describe(shown))


def artifact_lines(document: TextDocument) -> int:
    """Lines of a text per fixture-format.md "Text files": line breaks are already
    normalized to ``\\n``; a final line break does not start another line."""
    text = document.text
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
