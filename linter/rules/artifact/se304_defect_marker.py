"""SE304 defect-marker."""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple

from ...diagnostics import Severity
from ..base import Rule, Scope
from ._common import _shown, anchors_of, judged_diagnostics, judgements, locate, reading_of

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

    It also reports an **answer key**: text the agent reads in the source
    but a reader of the rendered artifact does not see as prose (an HTML
    comment, a code comment, a link's title, an image's alt text), or a
    link's text, that

    - marks the answer (`FIXME`, `XXX`, `BUG`, "answer key", "answer:",
      "graders", "seeded", "expected finding:", "the reviewer must catch",
      "the agent should flag"), or
    - holds a marker that is also work language ("expected:", "the agent",
      "reviewers should", "trap", "answer") in a text that relates to a
      defect's part and says more than a name (a verdict, a verb of
      catching, a word of a flaw): `<!-- expected: agent flags criterion 3
      as not proven -->`. "expected: one tarball per night", "the agent on
      the archive host rotates logs" or "trap SIGTERM" is work, even on
      the defect's own line, or
    - tells a flaw ("swallows", "never", "not run", "skipped", "no
      longer", "reduced", "leaks", "unescaped", "still", "deferred") of a
      defect's part: a comment on or next to the
      defect's code line (`pass  # FIXME: swallows the error`), or words
      that refer to the row, line or item holding a defect's quote
      (`<!-- criterion 3 has no real test behind it -->`, alt text "plate
      map with empty negative control wells"). A word that only sets a
      fact's polarity ("not", "no", "never") counts only in a clause that
      names the defect's part, and not as a contrast: "criterion 3 is
      owned by lee, not by the closeout bot", "per-attempt metrics go to
      statsd, never to the text log", or "metrics panel, no annotations
      added yet" tell no flaw of criterion 3, or
    - states in ordinary words what is wrong with what a defect's quote
      holds. A word of a flaw or its consequence, in any form ("swallowing",
      "loses", "are ignored", "no longer block"), must be *said of*
      something (after "is / are / was", or a verb after its subject: not
      "dropped connections"), and the text's other words must relate to
      the quote: they share a stem or a sense with it ("failures" and
      `continue-on-error`: both name a failure; "TimeoutError" and
      `except TimeoutError:`), two words or one that few parts of the
      artifact hold. A claim that joins words of the quote with "is /
      are / were" restates the quote as its flaw ("eval set is the last
      5% of the training data" of `eval_split: train[95%:]`).

    Each finding says what it relates the text to: the defect's id, its
    quote or the part holding it, and the words that made the relation
    ("relates 'failures' to D1's quote 'continue-on-error: true'").

    A hidden text that only says a flaw exists, without telling it ("the
    eval figure may not mean what it seems", "# double-check this one"), is
    a signpost: SE301 reports it. A work comment is not reported: `# retried by the caller` on the
    defect's line, `<!-- generated by closeout-bot 2.3 -->`, a title
    "Runbook for the export retries". Nor is a descriptive title or alt
    text that states no flaw, even in the defect's own words ("deploy
    timeline", "architecture diagram", "OSError handling guide", "how
    failing copies are retried", "count of skipped files per night"). A quote that also occurs inside an
    HTML comment (an answer key quoting the defect) is located by its
    occurrence outside the comment.

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
    <!-- criterion 3 has no real test behind it -->
    - Docs: [CI handbook](https://wiki.example.com/ci "failing tests no longer block merges")
    ```

    ## Fix
    Delete the marker. Word an answer key's title, alt text or link text as
    a description of what it shows ("CI handbook", "timing chart"), not
    of what is wrong with it. Defects are located by their `quote` in probe.json;
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
        yield from self._told_flaws(context, artifact, flagged)

    def _told_flaws(self, context, artifact, flagged):
        """Answer keys the shared reading (:mod:`._judgement`) did not
        report: a link title, alt text, link text or comment that tells
        what is wrong with a defect's quote in words of its own
        (:func:`told_flaw`). One finding per unit: a unit the reading
        reported as a quiz or a key (SE302, SE304) or a marker covers is
        skipped; one it reported as a signpost (SE301) that also tells the
        flaw is an answer key as well ("why catching OSError loses backups"
        as a link's text). The units are those of the probe's one
        structure (:func:`._common.reading_of`), built already when the
        artifact holds any cue the reading judges."""
        if not _may_tell(artifact.text):
            return
        anchors = anchors_of(context)
        if not anchors:
            return
        from ._judgement import structure_of

        reading = reading_of(context)
        reported = {judgement.unit for judgement in judgements(context, reading)
                    if judgement.error and judgement.code != "SE301"}
        structure = structure_of(reading)
        hidden = [unit for unit in structure.units
                  if unit.kind in KEY_PLACES and unit not in reported and unit.text.strip()]
        if not any(_may_tell_flaw(unit.text, anchors) for unit in hidden):
            return
        for unit in hidden:
            leak = told_flaw(unit.text, structure, anchors)
            if leak is None:
                continue
            start, end = locate(artifact, unit)
            if any(s < end and start < e for s, e in flagged):
                continue
            flagged.append((start, end))
            yield self.diagnostic(artifact.span(start, end), _leak_message(_shown(unit.text), leak.relation, leak.reason))

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


KEY_PLACES = frozenset({"html-comment", "code-comment", "title", "alt", "link"})
"""Where an answer key hides (:func:`told_flaw`): a comment, a link's title, an
image's alt text, and a link's text (a label of a target, not the
artifact's prose)."""

_SAME_SENSE = {"error": "failure", "fail": "failure", "failur": "failure", "fault": "failure"}
"""Stems that name one thing, a failure: "failures are ignored" speaks of what
``continue-on-error`` names. Words are related by their stems
(:func:`._judgement.stem`) and, through this, by sense."""

_FUNCTION_NEGATIVES = frozenset("""no not never without nothing none zero empty n't cannot still green success lets
    let left always longer silently quietly""".split())
"""The judgement's words of a flaw (``KEYS["negative"]``) that tell no flaw by
themselves: negation ("should not sleep on" points, "not run" is read by the
judgement's own relation), adverbs of doubt (a signpost's "quietly") and
words whose sense depends on their neighbours ("still", "green", "left")."""

_COPULAS = frozenset("is are was were be been being get gets got".split())
_CLAUSES = re.compile(r"[;:,()]|\s[-–—]\s")
_NO_LONGER = re.compile(r"\bno longer\b", re.IGNORECASE)


class Leak(NamedTuple):
    """What a hidden text tells about a defect (:func:`told_flaw`)."""

    defect_id: str
    relation: str
    """What relates the text to the defect ("shares 'timeouterror' with D1's quote ...")."""
    reason: str
    """What the text tells ("tells the flaw ('loses')")."""


@lru_cache(maxsize=1)
def _flaw_stems() -> frozenset[str]:
    """Stems of the words that tell a flaw when they are said of something:
    the judgement's flaw words less :data:`_FUNCTION_NEGATIVES`, so that
    "swallowing", "loses", "ignored" and "overlaps" are all told."""
    from ._judgement import KEYS, stem

    return frozenset(stem(w) for w in KEYS["negative"] - _FUNCTION_NEGATIVES)


def _holds_flaw_word(text: str) -> bool:
    """Whether a word of ``text`` has a stem of :func:`_flaw_stems`, or it says "no longer"."""
    from ._judgement import WORD, stem

    flaw_stems = _flaw_stems()
    lowered = text.lower()
    return any(stem(word) in flaw_stems for word in WORD.findall(lowered)) or "no longer" in lowered


def _may_tell(text: str) -> bool:
    """Whether ``text`` has a place for an answer key: an HTML comment, a link
    or an image, a code block (where comments are)."""
    return "<!--" in text or "](" in text or "```" in text or "~~~" in text or "\n    " in text or "\n\t" in text


def _may_tell_flaw(text: str, anchors) -> bool:
    """Whether a hidden unit's ``text`` could tell a key at all: it holds a
    word of a flaw, or two words of a quote (a restatement,
    :func:`told_flaw`). An artifact none of whose hidden units holds either
    ("Runbook", "chart", a generator's comment) is not read further."""
    if _holds_flaw_word(text):
        return True
    lowered = text.casefold()
    return any(sum(1 for word in _quote_words(anchor.quote) if word in lowered) >= 2 for anchor in anchors)


@lru_cache(maxsize=256)
def _quote_words(quote: str) -> tuple[str, ...]:
    """What a restatement of ``quote`` must hold two of (:func:`_may_tell_flaw`):
    the quote's words of three letters or more, cut to their stems (so
    that "training" holds "train"), and the words of a failure when the
    quote names one (:data:`_SAME_SENSE`)."""
    from ._judgement import stem

    words = {stem(w) for w in re.findall(r"[^\W\d_]{3,}", quote.casefold())}
    if any(_sense(w) == "failure" for w in words):
        words.update(("fail", "error", "fault"))
    return tuple(sorted(words))


def _sense(stem_: str) -> str:
    return _SAME_SENSE.get(stem_, stem_)


def _senses(text: str) -> frozenset[str]:
    """The senses of the words of ``text``: each word's stem (the words of
    scrutiny and doubt included: "failing" names a failure here) and an
    identifier's parts (``TimeoutError``: timeout, error), function words
    excepted."""
    from ._judgement import STOP, WORD, content_stems, stem

    found = set(content_stems(text))
    found.update(stem(w) for w in WORD.findall(text.lower().replace("’", "'")) if w not in STOP and len(w) > 1)
    return frozenset(map(_sense, found))


def _predicates_flaw(words: list[str], index: int) -> bool:
    """Whether the flaw word ``words[index]`` is said of something: after a
    copula ("failures *are ignored*", "the query *is* still *unescaped*"),
    or a verb's -s form after a word that names something ("TimeoutError
    *loses* uploads"). A participle before its noun ("dropped
    connections") or a gerund ("swallowing TimeoutError") describes; it
    tells nothing."""
    from ._judgement import STOP, stem

    before = words[max(0, index - 2):index]
    if any(w in _COPULAS for w in before):
        return True
    word = words[index]
    return (index > 0 and word.endswith("s") and not word.endswith("ss") and stem(word) != word
            and words[index - 1] not in STOP)


def told_flaw(text: str, structure, anchors) -> Leak | None:
    """What ``text`` (a hidden unit: :data:`KEY_PLACES`) tells about a defect,
    read clause by clause:

    - **a flaw said of the defect's quote**: a word of a flaw
      (:func:`_flaw_stems`, or "no longer") said of something
      (:func:`_predicates_flaw`), in a clause whose other words relate to a
      defect: they share a stem or a sense (:data:`_SAME_SENSE`) with its
      quote, two of them or one that at most two parts of the artifact hold
      ("failures are ignored now": ``continue-on-error``), or the shared
      reading resolves the clause to the defect's own part
      (:func:`._judgement.resolve`: its row, its line; a container noun
      alone, "the job", is too loose a reference for a key);
    - **the quote restated as a claim**: a clause whose copula joins words
      of the quote on both sides, together half of the quote's words or
      more ("eval set is the last 5% of the training data" of
      ``eval_split: train[95%:]``): it says what the quote amounts to.

    A text that directs scrutiny or frames a quiz is left to SE301 and
    SE302; a descriptive title ("deploy timeline", "Rows per stage, last 30
    days") tells nothing."""
    from ._judgement import WORD, read_sentence, resolve, stem

    reading = read_sentence(text)
    if reading.scrutiny is not None or reading.quiz:
        return None
    flaw_stems = _flaw_stems()
    quotes = [(anchor, _senses(anchor.quote)) for anchor in anchors]
    frequency: dict[str, int] = {}
    clauses = [c for c in _CLAUSES.split(text) if c.strip() and c.strip() != text.strip()]
    for clause in [*clauses, text]:  # the clause that tells it, before the whole text
        raw = WORD.findall(clause.replace("’", "'"))
        words = [w.lower() for w in raw]
        if not words:
            continue
        flaws = [i for i, w in enumerate(words) if stem(w) in flaw_stems and _predicates_flaw(words, i)]
        longer = _NO_LONGER.search(clause)
        if longer:
            flaws.append(words.index("longer") if "longer" in words else len(words) - 1)
        token_senses = [_senses(r) for r in raw]
        for anchor, quote in quotes:
            relating = [i for i, senses in enumerate(token_senses) if senses & quote]
            shared = frozenset().union(*(token_senses[i] & quote for i in relating))
            told = [i for i in flaws if i not in relating]
            if told and shared:
                if not frequency:
                    frequency = _sense_frequency(structure)
                if len(shared) >= 2 or any(frequency.get(s, 0) <= 2 for s in shared):
                    named = ", ".join(repr(raw[i]) for i in relating[:3])
                    return Leak(anchor.defect_id, f"relates {named} to {anchor.defect_id}'s quote {anchor.quote!r}",
                                f"tells the flaw ({_told(raw, told)!r})")
            if told and clause != text:
                relation = resolve(clause, structure, [anchor])
                if relation.kind == "defect":
                    return Leak(anchor.defect_id, relation.description, f"tells the flaw ({_told(raw, told)!r})")
            copula = next((i for i, w in enumerate(words) if w in _COPULAS and 0 < i < len(words) - 1), None)
            if copula is not None and len(shared) >= 2 and 2 * len(shared) >= len(quote):
                left = frozenset().union(*token_senses[:copula]) & quote
                right = frozenset().union(*token_senses[copula + 1:]) & quote
                if left and right and left != right:
                    said = f" ({clause.strip()!r})" if clause.strip() != text.strip() else ""
                    return Leak(anchor.defect_id,
                                f"joins {_named(raw[:copula], quote)} to {_named(raw[copula + 1:], quote)} with "
                                f"{raw[copula]!r}, words of {anchor.defect_id}'s quote {anchor.quote!r}",
                                f"restates a defect's quote as a claim{said}")
    return None


def _named(raw: list[str], quote: frozenset[str]) -> str:
    """The words of ``raw`` that share a sense with ``quote``, quoted."""
    return " ".join(repr(w) for w in raw if _senses(w) & quote)


def _told(raw: list[str], told: list[int]) -> str:
    index = told[0]
    if raw[index].lower() == "longer" and index and raw[index - 1].lower() == "no":
        return f"{raw[index - 1]} {raw[index]}"
    return raw[index]


def _sense_frequency(structure) -> dict[str, int]:
    """How many parts of the artifact hold each sense (:func:`_sense` of each stem)."""
    frequency: dict[str, int] = {}
    for stems in structure.part_stems:
        for sense in {_sense(s) for s in stems}:
            frequency[sense] = frequency.get(sense, 0) + 1
    return frequency


def _leak_message(shown: str, relation: str | None, reason: str | None) -> str:
    where = f"; it {relation}" if relation else ""
    return f"answer key {shown!r} {reason}{where}: the agent reads it (seed rule 6: never signpost)"
