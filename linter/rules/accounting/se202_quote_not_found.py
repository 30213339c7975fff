"""SE202 quote-not-found."""

from __future__ import annotations


from ...diagnostics import Related, Severity
from ...quotes import normalize_quote
from ..base import Rule, Scope
from ._common import artifact_name, defect_label

MAX_SHOWN = 80
"""Longest artifact line quoted in full in a message."""


class QuoteNotFound(Rule):
    """## What it does
    Reports a defect whose `quote` is not found in the artifact, or is found
    more than once (ambiguous). Quotes are compared with whitespace runs
    collapsed and in Unicode NFC; case and punctuation matter. For a quote not
    found, the nearest line of the artifact is named and shown as a related
    location; for an ambiguous one, every occurrence is.

    ## Why is this bad?
    The quote is how the probe says where its defect is: the artifact "carries
    no markers". A quote that is not in the artifact means the defect was
    edited out (or never planted), and one that occurs twice cannot say which
    occurrence is the defect. Either way the defect is not *present*, and seed
    rule 2 — "seeded_defects must equal what is actually in question.md" —
    cannot be checked.

    ## Example
    question.md says `behavior unchanged from prior release, so existing
    coverage applies`, and probe.json says:
    ```json
    {"id": "D1", "quote": "existing coverage still applies"}
    ```

    ## Fix
    Copy the text verbatim from the artifact (line breaks and repeated spaces
    may differ). For an ambiguous quote, quote more of the sentence so it
    occurs exactly once.
    """

    code = "SE202"
    name = "quote-not-found"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("accounting",)

    def check(self, context):
        artifact = context.artifact
        if artifact is None:
            return
        where = artifact_name(context)
        for index, defect in context.defects:
            quote = defect.get("quote")
            match = context.quote_matches.get(index)
            if not isinstance(quote, str) or match is None or match.found:
                continue
            label = defect_label(index, defect)
            span = context.value_span("defects", index, "quote")
            if match.ambiguous:
                count = len(match.occurrences)
                related = [
                    Related(artifact.span(start, end), f"occurrence {number} of {count}")
                    for number, (start, end) in enumerate(match.occurrences, 1)
                ]
                lines = ", ".join(str(artifact.position(start).line) for start, _ in match.occurrences)
                yield self.diagnostic(
                    span,
                    f"quote of defect {label} occurs {count} times in {where} (lines {lines}); "
                    "quote enough of the text to find it exactly once",
                    related=related,
                )
                continue
            wanted = normalize_quote(quote)
            if not wanted:
                yield self.diagnostic(span, f"quote of defect {label} is blank; quote the artifact text that carries the defect")
                continue
            from rapidfuzz import fuzz, process, utils  # only for a missing quote (slow import: docs/performance.md)

            choices = {number: normalize_quote(line) for number, line in enumerate(artifact.lines, 1) if line.strip()}
            best = process.extractOne(wanted, choices, scorer=fuzz.partial_ratio, processor=utils.default_process) if choices else None
            if best is None:
                yield self.diagnostic(span, f"quote of defect {label} is not found in {where} (it has no text)")
                continue
            shown, score, number = best
            if len(shown) > MAX_SHOWN:
                shown = shown[: MAX_SHOWN - 3] + "..."
            yield self.diagnostic(
                span,
                f"quote of defect {label} is not found in {where}; nearest line {number}: {shown!r}",
                related=[Related(artifact.line_span(number), f"nearest line to {label}'s quote ({round(score)}% similar)")],
            )
