"""SE501 reused-scenario."""

from __future__ import annotations

import math
import re
from array import array
from zlib import crc32
from pathlib import Path
from typing import NamedTuple, Optional, Sequence

from ...context import WorkspaceContext
from ...diagnostics import Related, Severity
from ...markdown import MarkdownDocument, markdown_of
from ...textfile import Span, TextDocument
from ..base import Rule, Scope

SHINGLE = 5
"""Words per shingle."""
MIN_EXAMPLE_SHINGLES = 10
"""A SKILL.md block is a worked example when it has at least this many shingles
(about 14 words); shorter code blocks are snippets, not scenarios."""
MAX_RELATED = 10

CANDIDATE_FRACTION = 0.625
"""Candidates for a near-duplicate are the artifacts sharing at least this
fraction of the threshold as word 5-grams (Jaccard >= 0.5 for the default
0.8), so that a copy edited in a few scattered places is still compared
word by word (:func:`word_similarity`): each one-word edit breaks up to five
5-grams, so a ~90-word artifact copied with three one-word substitutions
keeps only ~70% of its 5-grams (under 0.8) but 97% of its words in order.
Down to 0.5, a ~90-word copy may have six scattered substitutions, a
~250-word one sixteen, and still be found."""

_WORD = re.compile(r"[^\W_]+")
_ASCII_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
"""Every ASCII character that is not a letter or digit, as a space."""
_ASCII_LOWER_WORDS = str.maketrans({**_ASCII_SEPARATORS, **{c: c + 32 for c in range(ord("A"), ord("Z") + 1)}})
"""The same, with capital letters lowercased."""


def _words(text: str) -> Sequence[str]:
    """The casefolded words of ``text`` (runs of letters and digits), as
    :data:`_WORD` finds them; a text that casefolds to ASCII is split with
    ``str.translate`` and ``str.split`` instead, faster (docs/performance.md)."""
    folded = text.casefold()
    if folded.isascii():
        return folded.translate(_ASCII_SEPARATORS).split()
    return _WORD.findall(folded)


def _word_ids(text: str) -> list[int]:
    """The CRC-32 of each of :func:`_words`'s words: for an ASCII text, of the
    words of its lowercased bytes (one ``translate``, one ``encode``, one
    ``split``: no ``encode`` per word)."""
    if text.isascii():
        return list(map(crc32, text.translate(_ASCII_LOWER_WORDS).encode("ascii").split()))
    return list(map(crc32, map(str.encode, _words(text))))


def word_ids(document: TextDocument) -> array:
    """The words of ``document`` in order (as :func:`shingles` splits them),
    as their CRC-32: what :func:`word_similarity` compares (kept with the
    document: :meth:`~skill_eval.linter.textfile.TextDocument.derived`)."""
    return array("I", _word_ids(document.text))


def word_similarity(first: array, second: array, cutoff: float = 0.0) -> float:
    """How alike two word sequences are, edits anywhere counted one by one:
    twice their longest common subsequence over their total length (the
    normalized Indel similarity, computed in C by rapidfuzz, which the
    linter already uses for near-miss names; 0.0 under ``cutoff``). A copy
    of 90 words with three words substituted scores 0.97 wherever the edits
    are; two unrelated texts of one domain, sharing vocabulary but not its
    order, score ~0.3-0.5."""
    if not first or not second:
        return 0.0
    from rapidfuzz.distance import Indel

    return Indel.normalized_similarity(first, second, score_cutoff=cutoff)


def candidate_threshold(threshold: float) -> float:
    """The 5-gram Jaccard similarity from which two artifacts are compared
    (:data:`CANDIDATE_FRACTION` of ``threshold``)."""
    return threshold * CANDIDATE_FRACTION


GRAM_BITS = 30
"""Bits kept of each 5-gram's hash (:func:`shingles`)."""
_KEEP_GRAM_BITS = ((1 << GRAM_BITS) - 1).__and__


def shingles(text: str) -> array:
    """The distinct word 5-grams of ``text`` (casefolded words; markup and
    punctuation ignored), as 30-bit hashes in increasing order (an
    artifact's prefix in :func:`_indexed_candidates` is then a slice).
    An artifact's are kept with its document (:func:`artifact_shingles`).

    The hashes are stable: the same in every process and every run, however
    the process started (they travel between processes and are kept in the
    on-disk cache). A word is its CRC-32 (:func:`zlib.crc32` of its UTF-8,
    in C); a 5-gram the hash of the tuple of its five words' CRCs: Python
    salts the hash of a string (``PYTHONHASHSEED``), never that of an int or
    of a tuple of ints (CPython's tuple hash of ints is fixed for a given
    build, which the cache's key holds). Hashing each 5-gram's text with
    ``blake2b`` instead made the whole computation several times slower
    (docs/performance.md).

    Computed in C from end to end (``zip``, ``hash``, the mask, ``set``,
    ``sorted`` over ``map``s; no Python-level loop): the words as a list of
    ints, not an array, whose slices would box every int again; 30 bits, not
    32, because CPython sorts a list of ints under 2**30 with its one-digit
    compare, which is faster (docs/performance.md). 32-bit storage halves what
    a language server holds for 10,000 artifacts; two artifacts of
    ~250 5-grams share a false one with a chance of ~1 in 17,000, which
    moves their similarity by 0.4%."""
    ids = _word_ids(text)
    if len(ids) < SHINGLE:
        return array("I")
    grams = zip(*(ids[i:] for i in range(SHINGLE)))
    return array("I", sorted(set(map(_KEEP_GRAM_BITS, map(hash, grams)))))


def artifact_shingles(document: TextDocument) -> array:
    """:func:`shingles` of ``document``, computed once per document
    (:meth:`~skill_eval.linter.textfile.TextDocument.derived`): the probe's
    facts and its check against SKILL.md's examples both ask."""
    return document.derived(_shingles_of)


def _shingles_of(document: TextDocument) -> array:
    return shingles(document.text)


def _first_line_span(document: TextDocument) -> Span:
    """The artifact's first non-blank line."""
    line, end_column = _first_line(document.text)
    return Span.at(document.path, line, 1, line, end_column)


def _first_line(text: str) -> tuple[int, int]:
    """``(line, end column)`` of the first non-blank line of ``text`` (``(1, 1)``
    when there is none). Read from the text, not ``document.lines``: that
    list would stay cached on every artifact the language server holds
    (docs/performance.md)."""
    start, number = 0, 1
    while start <= len(text):
        end = text.find("\n", start)
        if end == -1:
            end = len(text)
        line = text[start:end]
        if line.strip():
            return number, len(line) + 1
        start, number = end + 1, number + 1
    return 1, 1


def _examples(skill: MarkdownDocument) -> list[tuple[int, int, str, str]]:
    """``(start line, end line, kind, text)`` of the blocks of SKILL.md that can
    hold a worked example: code blocks, and block quotes (consecutive quoted
    paragraphs merged)."""
    found: list[tuple[int, int, str, str]] = []
    quote: list | None = None
    for block in skill.blocks:
        if block.kind == "code":
            found.append((block.start_line, block.end_line, "code block", block.text))
            continue
        first = skill.lines[block.start_line - 1] if 0 < block.start_line <= len(skill.lines) else ""
        if block.kind == "prose" and first.lstrip().startswith(">"):
            if quote is not None and block.start_line <= quote[1] + 2:
                quote[1] = max(quote[1], block.end_line)
                quote[3] += "\n" + block.text
            else:
                if quote is not None:
                    found.append(tuple(quote))
                quote = [block.start_line, block.end_line, "block quote", block.text]
    if quote is not None:
        found.append(tuple(quote))
    return found


def _skill_examples(document: TextDocument) -> tuple[tuple[int, int, str, frozenset], ...]:
    """The worked examples of a SKILL.md document long enough to compare,
    with their 5-grams (computed once per document, through
    :meth:`~skill_eval.linter.textfile.TextDocument.derived`)."""
    skill = markdown_of(document)
    result = []
    for start, end, kind, body in _examples(skill):
        grams = shingles(body)
        if len(grams) >= MIN_EXAMPLE_SHINGLES:
            result.append((start, end, kind, frozenset(grams)))
    return tuple(result)


FEW_LINTED = 4
"""At most this many linted artifacts, and at most an eighth of the
workspace's (a pre-commit run on a few probes), are compared with every
other artifact directly (:func:`_compares_directly`), not through the
workspace-wide shared-5-gram index: building the index costs far more per
artifact than a direct look for a few (docs/performance.md), and each
further linted artifact adds checks of every artifact that shares one of
its 5-grams (all of them, in a templated workspace)."""


def _compares_directly(linted: int, total: int) -> bool:
    """Whether the near-duplicates of ``linted`` artifacts of a workspace of
    ``total`` are looked for directly (:data:`FEW_LINTED`)."""
    return linted <= FEW_LINTED and linted * 8 <= total


class ArtifactFacts(NamedTuple):
    """What SE501 compares of one probe's artifact (:meth:`ReusedScenario.probe_facts`).

    Plain data (the artifact's path as text, its first line as numbers): the
    parallel CLI's helpers send every probe's facts to the main process, and
    a path is slow to unpickle, a span and its positions more so
    (docs/performance.md)."""

    probe_id: str | None
    artifact: str
    first_line: tuple[int, int]
    """``(line, end column)`` of the artifact's first non-blank line."""
    grams: array
    """Its distinct word 5-grams (:func:`shingles`)."""

    def first_line_span(self, path_of=Path) -> Span:
        """The artifact's first non-blank line; ``path_of`` makes its path
        (a session's :meth:`~skill_eval.linter.session.LintSession.path_of`,
        so that findings share the session's one ``Path`` of the file)."""
        line, end_column = self.first_line
        return Span.at(path_of(self.artifact), line, 1, line, end_column)


class ReusedScenario(Rule):
    """## What it does
    Reports an artifact (question.md) that is a near-duplicate of another
    probe's artifact, or that reuses a worked example of its own SKILL.md (a
    code block or block quote of at least about 14 words).

    Artifacts are compared as sets of word 5-grams (casefolded words; markup
    and punctuation ignored). Two artifacts are near-duplicates when their
    Jaccard similarity reaches `near-duplicate-threshold` (0.8 by default),
    or when it reaches five-eighths of that and their words, in order, are
    that similar (twice their longest common subsequence over their total
    length): a copy edited in a few scattered places breaks five 5-grams
    per edited word but keeps almost every word in place. An
    artifact reuses a SKILL.md example when the shared 5-grams reach the
    threshold of the smaller of the two (containment: an example pasted into
    a longer artifact, or an artifact cut from a longer example). Versions of
    the same probe `id` are not compared with each other (a reseeded variant
    "is a separate version"); artifacts of fewer than five words are not
    compared. The diagnostic is on the artifact's first line, with related
    locations at the other artifacts or at the SKILL.md block.

    The comparison uses an inverted index with prefix filtering: only 5-grams
    in the rarest half of each artifact are indexed, which is exact for the
    candidates' threshold and keeps a workspace of 10,000 probes far from n²
    comparisons;
    a run on a few probes (a pre-commit hook) looks for their artifacts'
    5-grams in every other artifact instead, with the same findings.

    ## Why is this bad?
    The seed, after its worked example: "Do not copy this artifact into a
    probe. It is here to show the reasoning; a scenario reused across probes
    trains toward itself." A reused scenario is recognised rather than
    reasoned about, and an example the skill itself teaches is answered from
    the skill's text instead of its discipline.

    ## Example
    `probes/coverage-a/question.md` and `probes/coverage-b/question.md` are the
    same closeout report with one criterion renamed.

    ## Fix
    Write a fresh scenario for one of the probes. For a new variant of the
    same probe, keep the `id` and raise `version` instead of copying it under
    a new id.
    """

    code = "SE501"
    name = "reused-scenario"
    severity = Severity.WARNING
    scope = (Scope.PROBE, Scope.WORKSPACE)
    tags = ("calibration", "reuse")
    facts_type = Optional[ArtifactFacts]

    def probe_facts(self, probe):
        """The artifact's word 5-grams, with what a finding about it needs."""
        artifact = probe.artifact
        if artifact is None:
            return None
        grams = artifact_shingles(artifact)
        if not grams:
            return None
        return ArtifactFacts(probe.probe_id, str(artifact.path), _first_line(artifact.text), grams)

    def check(self, context):
        if isinstance(context, WorkspaceContext):
            threshold = context.config.near_duplicate_threshold
            linted = context.linted
            entries = list(context.probe_facts(self))
            candidates = candidate_threshold(threshold)
            shared = None
            if _compares_directly(len(linted), len(context.session.all_probe_paths)):
                candidates_of, shared = _direct_candidates(entries, linted, candidates)
            else:
                candidates_of = _indexed_candidates(entries, linted, candidates)
            yield from self._near_duplicates(entries, candidates_of, threshold, context.session.root, context.session,
                                             shared)
        else:
            yield from self._reused_examples(context, context.config.near_duplicate_threshold, context.session.root)

    def _near_duplicates(self, entries: list[tuple[Path, ArtifactFacts]], candidates_of: dict[int, set[int]], threshold, root,
                         session=None, shared_counts: dict[tuple[int, int], int] | None = None):
        """A finding for each linted artifact (by number in ``entries``) whose
        ``candidates_of`` hold a near-duplicate, its closest first: 5-grams
        shared reaching ``threshold``, or else words in order
        (:func:`word_similarity`, of the two artifacts read through
        ``session``: only pairs between the two thresholds, few, so the facts
        need not carry every artifact's words). ``shared_counts``: the
        5-grams each pair ``(linted, candidate)`` shares, where the
        candidates' search counted them already (:func:`_direct_candidates`)."""
        lowest = candidate_threshold(threshold)
        words: dict[str, array] = {}
        path_of = session.path_of if session is not None else Path

        def words_of(facts: ArtifactFacts) -> array:
            found = words.get(facts.artifact)
            if found is None:
                document = session.load(Path(facts.artifact)) if session is not None else None
                found = words[facts.artifact] = document.derived(word_ids) if isinstance(document, TextDocument) else array("I")
            return found

        for number, candidates in candidates_of.items():
            path, facts = entries[number]
            grams = facts.grams
            mine = set(grams)
            matches = []
            for other in candidates:
                other_path, other_facts = entries[other]
                if facts.probe_id is not None and other_facts.probe_id == facts.probe_id:
                    continue
                small, large = sorted((len(grams), len(other_facts.grams)))
                if small < lowest * large - 1e-9:
                    continue  # the length filter: Jaccard <= small / large
                shared = shared_counts[number, other] if shared_counts is not None else len(mine.intersection(other_facts.grams))
                similarity = shared / (len(grams) + len(other_facts.grams) - shared)
                if similarity >= threshold - 1e-9:
                    matches.append((-similarity, str(other_path), other_path, other_facts, similarity, True))
                elif similarity >= lowest - 1e-9:
                    in_order = word_similarity(words_of(facts), words_of(other_facts), threshold - 1e-9)
                    if in_order:
                        matches.append((-in_order, str(other_path), other_path, other_facts, in_order, False))
            if not matches:
                continue
            matches.sort(key=lambda m: (m[0], m[1]))
            _, _, best_path, best_facts, best, by_grams = matches[0]
            measure = "of word 5-grams shared" if by_grams else "of words alike, in order"
            others = f" and {len(matches) - 1} other probe{'s' if len(matches) > 2 else ''}" if len(matches) > 1 else ""
            related = [
                Related(other_facts.first_line_span(path_of),
                        f"artifact of probe {other_facts.probe_id or _relative(other_path.parent, root)!s} ({similarity:.0%} similar)")
                for _, _, other_path, other_facts, similarity, _by_grams in matches[:MAX_RELATED]
            ]
            name = best_facts.probe_id or _relative(best_path.parent, root)
            yield self.diagnostic(
                facts.first_line_span(path_of),
                f"artifact is a near-duplicate ({best:.0%} {measure}) of the artifact of probe {name!r} "
                f"({_relative(best_facts.artifact, root)}){others}: a scenario reused across probes trains toward itself",
                related=related,
                probe=path.parent,
            )

    def _reused_examples(self, probe, threshold, root):
        artifact, skill_document = probe.artifact, probe.skill_document
        if artifact is None or not isinstance(skill_document, TextDocument):
            return
        examples = skill_document.derived(_skill_examples)
        if not examples:
            return
        grams = artifact_shingles(artifact)
        if len(grams) < MIN_EXAMPLE_SHINGLES:
            return
        for start, end, kind, example in examples:
            shared = len(example.intersection(grams))
            containment = shared / min(len(example), len(grams))
            if containment < threshold - 1e-9:
                continue
            end_text = skill_document.lines[end - 1] if 0 < end <= len(skill_document.lines) else ""
            span = Span.at(skill_document.path, start, 1, end, len(end_text) + 1)
            yield self.diagnostic(
                _first_line_span(artifact),
                f"artifact reuses the worked example in the {kind} at {_relative(skill_document.path, root)}:"
                f"{start}-{end} ({containment:.0%} of word 5-grams shared): an example the skill teaches is "
                f"answered from the skill's text, not its discipline",
                related=[Related(span, f"worked example ({kind}) the artifact reuses")],
                probe=probe.folder,
            )


MARGIN = 16
"""How far past its prefix an artifact's 5-grams are counted."""


def _indexed_candidates(entries: list[tuple[Path, ArtifactFacts]], linted, threshold) -> dict[int, set[int]]:
    """The artifacts each linted artifact may be a near-duplicate of (by
    its number in ``entries``, linted ones with any only, in order), from
    an index of every artifact's prefix.

    Prefix filtering: under any one order of all 5-grams, two sets of
    Jaccard >= t share an element among the first ``keep`` = |x| - ceil(t|x|)
    + 1 of each (their prefixes). The order here is by hash (each artifact's
    array is sorted, so its prefix is mostly a slice), except that the
    5-grams met near the front of two artifacts or more (among the first
    ``keep`` + :data:`MARGIN` of each) go last, by hash among themselves: a
    template every artifact of a workspace holds would otherwise make every
    artifact a candidate of every other, and a 5-gram two artifacts share by
    chance make them a pair to verify. Only a 5-gram in two prefixes or more
    can pair two artifacts: those are indexed, and most artifacts have none
    (their prefix is 5-grams met once). Counting the 5-grams near the front
    of each artifact (C-level counts over about half of them, for the
    candidates' threshold) rather than all of them, to put each artifact's
    own first (docs/performance.md)."""
    if len(entries) < 2:
        return {}
    from collections import Counter
    from itertools import filterfalse, islice

    arrays = [facts.grams for _path, facts in entries]
    keeps = [len(grams) - math.ceil(threshold * len(grams) - 1e-9) + 1 for grams in arrays]
    fronts = [grams[: keep + MARGIN] for grams, keep in zip(arrays, keeps)]
    met_twice = _met_twice(fronts)
    frequent = set(met_twice)
    prefixes = []
    beyond: list[int] = []
    skipped = frequent.__contains__
    for grams, keep, front in zip(arrays, keeps, fronts):
        prefix = grams[:keep]
        if not frequent.isdisjoint(prefix):
            prefix = array(grams.typecode, islice(filterfalse(skipped, front), keep))
            if len(prefix) < keep and len(front) < len(grams):  # past the front: count those too
                prefix = array(grams.typecode, islice(filterfalse(skipped, grams), keep))
                beyond.extend(gram for gram in prefix if gram > front[-1])
            if len(prefix) < keep:
                prefix.extend(sorted(frequent.intersection(grams))[: keep - len(prefix)])
        prefixes.append(prefix)
    if beyond:
        counts = Counter(beyond)
        looked_for = set(counts)
        for front in fronts:
            counts.update(looked_for.intersection(front))
        met_twice.update(gram for gram, count in counts.items() if count > 1)
    index: dict[int, list[int]] = {}
    indexed: list[tuple[int, set[int]]] = []
    for number, prefix in enumerate(prefixes):
        common = met_twice.intersection(prefix)
        if common:
            indexed.append((number, common))
            for gram in common:
                index.setdefault(gram, []).append(number)
    candidates_of: dict[int, set[int]] = {}
    for number, common in indexed:
        if entries[number][0] not in linted:
            continue
        candidates = {other for gram in common for other in index[gram] if other != number}
        if candidates:
            candidates_of[number] = candidates
    return candidates_of


COUNTED_PARTS = 16
""":func:`_met_twice` counts the 5-grams in this many ranges of their
hashes, one after the other: a count of all the fronts at once held several
times the memory at its peak (docs/performance.md), which a language server
keeps as fragmented memory."""


def _met_twice(fronts: list[array]) -> set[int]:
    """The 5-grams found in two of ``fronts`` (sorted arrays) or more, range
    of hashes by range (a slice of each array, found by bisection): each
    front's slice is intersected with the 5-grams of the fronts before it,
    then added to them (two C-level set operations per front; a ``Counter``
    of every 5-gram took longer: docs/performance.md)."""
    from bisect import bisect_left

    found: set[int] = set()
    step = (1 << GRAM_BITS) // COUNTED_PARTS
    starts = [0] * len(fronts)
    for part in range(1, COUNTED_PARTS + 1):
        if part < COUNTED_PARTS:
            ends = [bisect_left(front, part * step) for front in fronts]
        else:  # the rest, whatever its hashes
            ends = [len(front) for front in fronts]
        seen: set[int] = set()
        add_seen, add_found, shared = seen.update, found.update, seen.intersection
        for front, start, stop in zip(fronts, starts, ends):
            if start < stop:
                piece = front[start:stop]
                add_found(shared(piece))
                add_seen(piece)
        starts = ends
    return found


def _direct_candidates(entries: list[tuple[Path, ArtifactFacts]], linted,
                       threshold) -> tuple[dict[int, set[int]], dict[tuple[int, int], int]]:
    """:meth:`ReusedScenario._indexed_candidates` for a few linted artifacts,
    without the index, and the 5-grams each linted artifact shares with each
    of its candidates: an artifact of Jaccard >= t with ``x`` holds all but
    ``keep`` - 1 of x's 5-grams (``keep`` being x's prefix length), so it
    holds one of any ``keep`` of them. The other artifacts are looked
    through once, each intersected with every 5-gram of the linted ones
    (one C-level intersection each): what it shares with a linted artifact's
    first ``keep`` tells whether it is a candidate, what it shares with all
    of them is counted from that intersection (a second look through a
    candidate's 5-grams, once per candidate, was slow at 10,000 templated
    artifacts, where every artifact is a candidate: docs/performance.md)."""
    heads: dict[int, set[int]] = {}
    wholes: dict[int, set[int]] = {}
    for number, (path, facts) in enumerate(entries):
        if path in linted:
            size = len(facts.grams)
            heads[number] = set(facts.grams[: size - math.ceil(threshold * size - 1e-9) + 1])
            wholes[number] = set(facts.grams)
    looked_for = set().union(*wholes.values())
    candidates_of: dict[int, set[int]] = {number: set() for number in heads}
    shared: dict[tuple[int, int], int] = {}
    for other, (_path, facts) in enumerate(entries):
        found = looked_for.intersection(facts.grams)
        if found:
            for number, head in heads.items():
                if number != other and not head.isdisjoint(found):
                    candidates_of[number].add(other)
                    shared[number, other] = len(wholes[number].intersection(found))
    return {number: candidates for number, candidates in candidates_of.items() if candidates}, shared


def _relative(path: Path, root: Path) -> str:
    try:
        return Path(path).relative_to(root).as_posix()
    except ValueError:
        return Path(path).as_posix()
