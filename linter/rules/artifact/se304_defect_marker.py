"""SE304 defect-marker."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import judged_diagnostics

_MARKUP = r"[\s*_~`]"
_NOUN = r"(?:defects?|flaws?|bugs?|errors?|mistakes?|traps?)"


class _Patterns(NamedTuple):
    comment: re.Pattern
    directive: re.Pattern
    comment_word: re.Pattern
    labels: re.Pattern


@lru_cache(maxsize=1)
def _patterns() -> _Patterns:
    """The rule's regexes, compiled on first need (time that a run whose
    artifacts hold none of :data:`_TRIGGERS` never spends: docs/performance.md)."""
    return _Patterns(
        re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL),
        re.compile(r"skill-eval\s*:\s*[\w-]*", re.IGNORECASE),
        re.compile(r"(?<![^\W_])(?:defects?|seed(?:s|ed|ing)?|plant(?:s|ed|ing)?|flaws?)(?![^\W_])", re.IGNORECASE),
        re.compile(
            # a bracketed label: (defect), [defect], {planted}, (seeded defect #2), [Defect D1]
            r"[(\[{]" + _MARKUP + r"*(?:(?:seeded|planted)" + _MARKUP + r"+)?(?:defects?|seeded|planted|flaw)"
            r"(?:" + _MARKUP + r"*[:#-]?" + _MARKUP + r"*[\w.-]+)?" + _MARKUP + r"*[)\]}]"
            # "defect:" / "seeded defect 2:" used as a label
            r"|(?<![^\W_])(?:(?:seeded|planted)" + _MARKUP + r"+)?defects?(?:" + _MARKUP + r"*#?[\w.-]*\d[\w.-]*)?" + _MARKUP + r"*:"
            # "seeded:" / "planted:" as a key at the start of a line (front matter, a list)
            r"|(?m:^[ \t>*+-]*)(?:seeded|planted)" + _MARKUP + r"*:"
            # "seeded defect", "planted flaw"; "the bug was planted"
            r"|(?<![^\W_])(?:seeded|planted)" + _MARKUP + r"+" + _NOUN + r"(?![^\W_])"
            r"|(?<![^\W_])" + _NOUN + _MARKUP + r"+(?:(?:was|were|is|are|has" + _MARKUP + r"+been|have" + _MARKUP + r"+been)"
            + _MARKUP + r"+)?(?:(?:deliberately|intentionally|purposely)" + _MARKUP + r"+)?(?:seeded|planted)(?![^\W_])",
            re.IGNORECASE,
        ),
    )


_TRIGGERS = ("<!--", "skill-eval", "defect", "seed", "plant", "flaw")
"""Every marker contains one of these (casefolded): a text without any is skipped."""


class DefectMarker(Rule):
    """## What it does
    Reports text in the artifact (question.md) that labels its own defect or is
    tooling text the agent would read:

    - an HTML comment (`<!-- ... -->`) that names a defect id of probe.json
      (`<!-- D1 -->`), mentions defect / flaw / seed(ed) / plant(ed), or holds a
      `skill-eval:` directive;
    - a `skill-eval:` directive anywhere (question.md takes no inline
      suppression: it travels to the agent byte for byte);
    - a label: `(defect)`, `[defect]`, `{planted}`, `(seeded)`, `[Defect D1]`,
      `defect:` or `Defect 2:`, `seeded:` / `planted:` as a key at the start of a
      line;
    - a bare "seeded defect" / "planted flaw" / "seeded bug" ..., or "the bug
      was planted".

    The words "seeded" and "planted" alone in prose ("we seeded the staging
    database", "the team planted a canary") are not reported: they are
    ordinary work language. They are reported in comments, in brackets, as a
    label, or next to a defect noun. A defect id alone in prose (`D1` may be a
    disk, a row or a ticket) is reported only inside a comment or after
    "defect". A `Defect:` field of a genuine bug-report template is reported
    too: rename the field, or disable SE304 for that probe in probe.json.

    ## Why is this bad?
    The artifact "must be work, not a quiz" (seed rule 4) and "never
    signpost" (seed rule 6): a marker tells the agent where the defect is,
    and "signposting converts a tier-2 probe back into a tier-1 quiz". The
    fixture format is explicit that question.md "carries no markers: defects
    are located by their quotes in probe.json".

    ## Example
    ```markdown
    | 3 | metrics emitted | existing coverage applies (defect) |
    <!-- D1: euphemized not_checked -->
    ```

    ## Fix
    Delete the marker. Defects are located by their `quote` in probe.json;
    suppress a rule for a probe with `"x-skill-eval-disable"` in probe.json,
    never with a comment in question.md.
    """

    code = "SE304"
    name = "defect-marker"
    severity = Severity.ERROR
    scope = Scope.PROBE
    tags = ("artifact",)

    def check(self, context):
        artifact = context.artifact
        if artifact is None:
            return
        text = artifact.text
        flagged: list[tuple[int, int]] = []
        yield from self._markers(context, artifact, text, flagged)
        yield from judged_diagnostics(self, context, "SE304", None, None, _leak_message, skip=flagged)

    def _markers(self, context, artifact, text, flagged):
        lowered = text.casefold()
        if not any(word in lowered for word in _TRIGGERS):
            return
        patterns = _patterns()
        ids = sorted({d["id"].strip() for _, d in context.defects if isinstance(d.get("id"), str) and d["id"].strip()},
                     key=lambda i: (-len(i), i))
        id_pattern = (re.compile(r"(?<![^\W_])(?:" + "|".join(map(re.escape, ids)) + r")(?![^\W_])", re.IGNORECASE)
                      if ids else None)
        if "<!--" in text:
            for comment in patterns.comment.finditer(text):
                body = comment.group()
                reason = None
                if patterns.directive.search(body):
                    reason = "holds a skill-eval directive (question.md takes no inline suppression; use x-skill-eval-disable in probe.json)"
                elif id_pattern is not None and (found := id_pattern.search(body)):
                    reason = f"names defect id {found.group()!r} of probe.json"
                elif found := patterns.comment_word.search(body):
                    reason = f"mentions {found.group()!r}"
                if reason:
                    flagged.append((comment.start(), comment.end()))
                    yield self.diagnostic(artifact.span(comment.start(), comment.end()),
                                          f"HTML comment {reason}: the agent reads it (seed rule 6: never signpost)")
        found_spans = []
        for match in patterns.directive.finditer(text):
            found_spans.append((match.start(), match.end(), f"`{match.group().strip()}` directive: question.md takes no "
                                "inline suppression and the agent would read it; use x-skill-eval-disable in probe.json"))
        for match in patterns.labels.finditer(text):
            start = match.start() + (len(match.group()) - len(match.group().lstrip(" \t>*+-")))
            found_spans.append((start, match.end(), f"defect marker {' '.join(text[start:match.end()].split())!r} labels the defect for the agent"))
        if id_pattern is not None:
            for match in re.finditer(r"(?<![^\W_])defects?" + _MARKUP + r"+" + id_pattern.pattern, text, re.IGNORECASE):
                found_spans.append((match.start(), match.end(), f"defect marker {' '.join(match.group().split())!r} names a defect of probe.json"))
        found_spans.sort()
        for start, end, message in found_spans:
            if any(s < end and start < e for s, e in flagged):
                continue
            flagged.append((start, end))
            yield self.diagnostic(artifact.span(start, end), message)


def _leak_message(shown: str, relation: str | None, reason: str | None) -> str:
    where = f"; it {relation}" if relation else ""
    return f"answer key {shown!r} {reason}{where}: the agent reads it (seed rule 6: never signpost)"
