"""Shared helpers of the artifact rules (SE301-SE304)."""

from __future__ import annotations

import re
from functools import lru_cache

from ...config import PhraseConfig
from ...context import ProbeContext
from ...diagnostics import Severity
from ...textfile import TextDocument
from ._phrases import ArtifactText, compile_phrases, find_phrases, phrase_list

_MEMO = "_artifact_rules"
"""The key of the artifact rules' memo in a probe context's ``__dict__``:
what SE301, SE302 and SE304 derive from the probe's artifact and share
(:func:`_memo`), kept with the context and dropped with it."""


def _memo(context: ProbeContext) -> dict:
    """The artifact rules' memo of ``context`` (small values only: the
    context lives as long as its session, a whole run)."""
    memo = context.__dict__.get(_MEMO)
    if memo is None:
        memo = context.__dict__[_MEMO] = {}
    return memo


def reading_of(context: ProbeContext) -> ArtifactText:
    """The one reading of the probe's artifact that SE301, SE302 and SE304
    share while the probe's unit is linted: its words, segments, markdown
    blocks (one parse) and structure (:func:`._judgement.structure_of`) are
    derived once, and kept in the context's :attr:`~...context.ProbeContext.unit_memo`,
    which the engine drops when the unit is done. The artifact's words
    among every word the phrase lists and the judgement ask about
    (:func:`_vocabulary`) stay in the context's :func:`_memo` for the run
    (a later reading starts from them)."""
    shared = context.unit_memo.get(_MEMO)
    if shared is not None:
        return shared
    memo = _memo(context)
    text = context.artifact.text
    words = memo.get("words")
    if words is None:
        vocabulary = memo["vocabulary"] = _vocabulary(*_phrase_lists(context))
        words = memo["words"] = tuple(ArtifactText(text).words_among(vocabulary))  # ~11: a tuple is smallest
    shared = context.unit_memo[_MEMO] = ArtifactText(text, frozenset(words), memo["vocabulary"])
    return shared


def _phrase_lists(context: ProbeContext) -> tuple[tuple[str, ...], ...]:
    """Every phrase list the artifact rules search ``context``'s artifact for."""
    config = context.config
    return (phrase_list("signposting") + tuple(config.signposting.extra), tuple(config.signposting.allow),
            phrase_list("quiz-framing") + tuple(config.quiz_framing.extra), tuple(config.quiz_framing.allow))


@lru_cache(maxsize=16)
def _vocabulary(*phrase_lists: tuple[str, ...]) -> frozenset[str]:
    """Every word the matchers of ``phrase_lists`` and the judgement ask an
    artifact about (compiled once per set of lists)."""
    from ._judgement import KEY_WORDS

    return KEY_WORDS.union(*(compile_phrases(phrases).vocabulary for phrases in phrase_lists))


def holds_findings(context: ProbeContext, reading: ArtifactText) -> bool:
    """:func:`._judgement.may_hold_findings` of the artifact, once per probe context."""
    memo = _memo(context)
    found = memo.get("holds findings")
    if found is None:
        from ._judgement import may_hold_findings

        found = memo["holds findings"] = may_hold_findings(reading)
    return found


def _shown(text: str) -> str:
    shown = " ".join(text.split())
    return shown[:77] + "..." if len(shown) > 80 else shown


def anchors_of(context: ProbeContext):
    """The defects whose quote is found exactly once: where they are
    (:class:`~._judgement.Anchor`). Computed once per probe context (three
    rules ask)."""
    found = context.__dict__.get("_judgement_anchors")
    if found is None:
        found = context.__dict__["_judgement_anchors"] = _anchors_of(context)
    return found


def _anchors_of(context: ProbeContext):
    from ._judgement import Anchor

    artifact = context.artifact
    anchors = []
    comments = [m.span() for m in re.finditer(r"<!--.*?(?:-->|\Z)", artifact.text, re.DOTALL)] \
        if "<!--" in artifact.text else []
    for index, match in context.quote_matches.items():
        occurrences = [(s, e) for s, e in match.occurrences if not any(cs <= s and e <= ce for cs, ce in comments)]
        if len(occurrences) != 1:
            continue
        defect = dict(context.defects)[index]
        defect_id = defect.get("id") if isinstance(defect.get("id"), str) and defect.get("id").strip() else f"defect {index + 1}"
        start, end = occurrences[0]
        span = artifact.span(start, end)
        anchors.append(Anchor(defect_id.strip(), match.quote, span.start.line, span.end.line))
    return tuple(anchors)


def judgements(context: ProbeContext, reading: ArtifactText | None = None):
    """The reading of the artifact against its defects, once per probe
    context (three rules ask); ``reading``: the probe's shared reading
    (:func:`reading_of`), whose structure it builds or reuses."""
    from ._judgement import judge_artifact

    artifact = context.artifact
    if artifact is None:
        return []
    memo = _memo(context)
    found = memo.get("judgements")
    if found is None:
        found = memo["judgements"] = tuple(judge_artifact(reading or reading_of(context), anchors_of(context)))
    return list(found)


def locate(document: TextDocument, unit) -> tuple[int, int]:
    """Offsets of ``unit``'s text in the artifact: its words in order, with
    any markup, punctuation or line breaks between them, searched from the
    unit's first line; the unit's lines when the words are not found."""
    text = document.text
    line_starts = [0]
    for match in re.finditer("\n", text):
        line_starts.append(match.end())
    begin = line_starts[min(unit.line, len(line_starts)) - 1]
    finish = line_starts[unit.end_line] - 1 if unit.end_line < len(line_starts) else len(text)
    words = re.findall(r"[^\W_]+", unit.text)
    if words:
        pattern = re.compile(r"(?<![^\W_])" + r"[\W_]+".join(map(re.escape, words)) + r"(?![^\W_])")
        found = pattern.search(text, begin, max(finish, begin) + 1)
        if found is None:
            found = pattern.search(text, begin)
        if found is not None:
            return found.start(), found.end()
    return begin, max(begin, finish)


def judged_diagnostics(rule, context: ProbeContext, code: str, table: str | None, config: PhraseConfig | None,
                       error_message, info_message=None, skip: list[tuple[int, int]] | None = None):
    """Diagnostics of ``rule`` (``code``): the occurrences of its phrase list
    (``table``, plus config ``extra``, minus ``allow``) and the units the
    reading judged (:mod:`._judgement`), each an error only when it relates to
    a defect; a phrase with no relation to any defect is an info finding
    (``info_message``; without one it is an error all the same: a quiz needs
    no relation). ``error_message(shown, relation, reason)`` and
    ``info_message(shown, why)`` word the findings; units overlapping a
    ``skip`` span are not reported again.

    Without any defect quote found in the artifact nothing can be related:
    phrase occurrences are then errors, as the lists alone say."""
    from ._judgement import resolve, structure_of

    artifact = context.artifact
    if artifact is None:
        return
    text = artifact.text
    reading = reading_of(context)
    matches = list(find_phrases(reading, phrase_list(table) + tuple(config.extra), tuple(config.allow))) \
        if table is not None else []
    if not matches and not holds_findings(context, reading):
        return  # no phrase of the list, and no unit the reading could judge: the defects need not be located
    anchors = anchors_of(context)
    covered: list[tuple[int, int]] = list(skip or ())
    judged = judgements(context, reading) if anchors else []
    structure = None
    if table is not None:
        for match in matches:
            if structure is None and anchors:
                structure = structure_of(reading)
            if info_message is None and _in_condition(text, match.start):
                continue  # "If you spot a typo, just fix it": a condition of the work, not a request to hunt
            span = artifact.span(match.start, match.end)
            shown = _shown(match.text)
            if not anchors:
                yield rule.diagnostic(span, error_message(shown, None, None))
                continue
            unit = _unit_at(structure, span.start.line, match.text)
            if unit is None:
                yield rule.diagnostic(span, error_message(shown, None, None))
                continue
            covered.append(locate(artifact, unit))
            judged_here = [j for j in judged if j.unit == unit]
            if info_message is not None and any(j.error and j.code != code for j in judged_here):
                continue  # a quiz or an answer key: that rule reports the sentence
            mine = [j for j in judged_here if j.code == code]
            if mine and mine[0].error:
                yield rule.diagnostic(span, error_message(shown, mine[0].relation.description, mine[0].reason))
                continue
            holder = next((a for a in anchors if a.line <= unit.end_line and unit.line <= a.end_line
                           and " ".join(a.quote.split()).lower() in " ".join(unit.text.split()).lower()), None)
            if holder is not None:
                yield rule.diagnostic(span, error_message(shown, f"sits in the sentence holding {holder.defect_id}'s quote", None))
                continue
            if info_message is None:
                yield rule.diagnostic(span, error_message(shown, None, None))
                continue
            relation = resolve(_phrase_focus(unit.text, match.text), structure, anchors, exclude=unit.part,
                               located=unit.part if unit.kind == "cell" else None,
                               strict=len(match.words.split()) == 1)
            if relation.relates:
                yield rule.diagnostic(span, error_message(shown, relation.description, None))
            else:
                yield rule.diagnostic(span, info_message(shown, relation.description or "names no part of the artifact"),
                                      severity=Severity.INFO)
    if not anchors:
        return
    allowed = []
    if config is not None and config.allow:
        allowed = [(m.start, m.end) for m in find_phrases(reading, tuple(config.allow))]
    for judgement in judged:
        if judgement.code != code or not judgement.error:
            continue
        start, end = locate(artifact, judgement.unit)
        if any(s < end and start < e for s, e in covered) or any(s <= start and end <= e for s, e in allowed):
            continue
        covered.append((start, end))
        yield rule.diagnostic(artifact.span(start, end),
                              error_message(_shown(judgement.unit.text), judgement.relation.description, judgement.reason))


_CONDITION = re.compile(r"(?:^|[,;:.!?]\s)[\s>*_#-]*(?:if|when|whenever|in case|unless)\s[^,;:.!?\n]*$", re.IGNORECASE | re.MULTILINE)


def _in_condition(text: str, start: int) -> bool:
    """Whether the phrase at ``start`` of ``text`` sits in a conditional
    clause ("If you spot a typo, just fix it in place", "when you notice
    anything odd in the logs, page the on-call"): it sets a condition of
    the work and asks the reader to find nothing. The clause runs from the
    last clause break (or the line's start) before the phrase."""
    line_start = text.rfind("\n", 0, start) + 1
    return _CONDITION.search(text, line_start, start) is not None


def _phrase_focus(sentence: str, phrase: str) -> str:
    """The clause of ``sentence`` around the occurrence of ``phrase``."""
    from ._judgement import focus_of

    words = re.findall(r"[^\W_]+", phrase)
    if not words:
        return sentence
    found = re.search(r"[\W_]+".join(map(re.escape, words)), sentence, re.IGNORECASE)
    if found is None:
        return sentence
    return focus_of(sentence, found.start(), found.end())


def _unit_at(structure, line: int, phrase: str):
    """The unit on ``line`` whose text holds the phrase's first word."""
    words = re.findall(r"[^\W_]+", phrase)
    pattern = re.compile(r"[\W_]+".join(map(re.escape, words)), re.IGNORECASE) if words else None
    fallback = None
    for unit in structure.units:
        if unit.line <= line <= unit.end_line:
            if pattern is not None and pattern.search(unit.text.replace("’", "'")):
                return unit
            fallback = fallback or unit
    return fallback


def artifact_lines(document: TextDocument) -> int:
    """Lines of a text per fixture-format.md "Text files": line breaks are already
    normalized to ``\\n``; a final line break does not start another line."""
    text = document.text
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)
