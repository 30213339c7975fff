"""SE205 dependent-defects."""

from __future__ import annotations

import bisect
import re
from itertools import combinations

from ...diagnostics import Related, Severity
from ..base import Rule, Scope
from ._common import artifact_name, defect_label, is_tier2

_SENTENCE_END = re.compile(r"[.!?…]+[\"')\]’”]*(?=\s|$)|\|")
"""A sentence ends at terminal punctuation followed by a space or the end of
the text, and at a table cell boundary."""

_BLOCK_START = re.compile(r"[ \t]*(?:[-*+][ \t]|\d+[.)][ \t]|#|>|\|)")
"""A line that starts a new block (list item, heading, quote, table row)."""


def sentence_starts(text: str) -> list[int]:
    """Offsets where the sentences of ``text`` start, in order.

    Sentences are separated by terminal punctuation, blank lines, table cell
    boundaries, and line breaks before or after a line that starts a block
    (a list item, heading, block quote or table row); a line break inside a
    wrapped paragraph does not end a sentence.
    """
    starts = {0}
    for match in _SENTENCE_END.finditer(text):
        starts.add(match.end())
    offset = 0
    previous_starts_block = True
    for line in text.split("\n"):
        starts_block = not line.strip() or bool(_BLOCK_START.match(line))
        if starts_block or previous_starts_block:
            starts.add(offset)
        previous_starts_block = starts_block
        offset += len(line) + 1
    return sorted(starts)


class DependentDefects(Rule):
    """## What it does
    Reports two defects of a tier-2 probe whose quotes overlap in the artifact
    or fall in the same sentence (a table cell, a list item or a sentence of a
    paragraph). Only defects whose quote is found exactly once are compared.

    ## Why is this bad?
    Seed rule 3: "Defects must be independent. If catching defect A makes B
    obvious, the band is really N−1 and the lower bound is wrong." Two defects
    in one sentence are read together; an agent that stops on one cannot miss
    the other, so the probe counts one act twice.

    ## Example
    ```text
    Tests: 47 passed, 1 skipped; coverage applies from the prior release.
    ```
    with D1 quoting `1 skipped` and D2 quoting `coverage applies from the prior release`.

    ## Fix
    Move the defects into separate parts of the artifact (different criteria,
    rows or paragraphs), or merge them into one defect and lower the count.
    """

    code = "SE205"
    name = "dependent-defects"
    severity = Severity.WARNING
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        artifact = context.artifact
        if artifact is None or not is_tier2(context):
            return
        located = [
            (index, defect, context.quote_matches[index].occurrences[0])
            for index, defect in context.defects
            if index in context.quote_matches and context.quote_matches[index].found
        ]
        if len(located) < 2:
            return
        starts = sentence_starts(artifact.text)
        where = artifact_name(context)
        for (first, first_defect, (a_start, a_end)), (second, second_defect, (b_start, b_end)) in combinations(located, 2):
            a_label, b_label = defect_label(first, first_defect), defect_label(second, second_defect)
            if a_start < b_end and b_start < a_end:
                start, end = min(a_start, b_start), max(a_end, b_end)
                yield self.diagnostic(
                    context.value_span("defects", second, "quote"),
                    f"quotes of defects {a_label} and {b_label} overlap in {where} "
                    f"(line {artifact.position(start).line}); independent defects quote separate text",
                    related=[
                        Related(context.value_span("defects", first, "quote"), f"{a_label}'s quote"),
                        Related(artifact.span(start, end), "the overlapping text"),
                    ],
                )
                continue
            a_sentences = range(bisect.bisect_right(starts, a_start) - 1, bisect.bisect_left(starts, a_end))
            b_sentences = range(bisect.bisect_right(starts, b_start) - 1, bisect.bisect_left(starts, b_end))
            shared = sorted(set(a_sentences) & set(b_sentences))
            if not shared:
                continue
            sentence_start = starts[shared[0]]
            sentence_end = starts[shared[-1] + 1] if shared[-1] + 1 < len(starts) else len(artifact.text)
            sentence_start, sentence_end = _trim(artifact.text, sentence_start, sentence_end)
            yield self.diagnostic(
                context.value_span("defects", second, "quote"),
                f"defects {a_label} and {b_label} share a sentence of {where} (line {artifact.position(sentence_start).line}); "
                "catching one makes the other obvious, so the band counts one act twice",
                related=[
                    Related(context.value_span("defects", first, "quote"), f"{a_label}'s quote"),
                    Related(artifact.span(sentence_start, sentence_end), "the shared sentence"),
                ],
            )


def _trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``start``/``end`` moved inward past whitespace and cell bars."""
    while start < end and (text[start].isspace() or text[start] == "|"):
        start += 1
    while end > start and (text[end - 1].isspace() or text[end - 1] == "|"):
        end -= 1
    return start, end
