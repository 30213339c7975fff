"""Phrase matching on an artifact's words (rules.md, "Phrase rules").

An artifact is reduced to its words: case, markdown markup, HTML tags and
entities, punctuation and line breaks are ignored; curly and straight
apostrophes are the same; contractions are expanded ("what's" = "what is",
"isn't" = "is not", "can't" = "cannot" = "can not", "let's" = "let us").

Phrase lists are data (``linter/data/phrases.toml``, plus config ``extra``).
A phrase may hold alternative groups: ``{please|} note the following`` is
"please note the following" or "note the following"; an empty alternative
makes the group optional. Groups do not nest.

Matching is built for volume:

* an artifact is normalized once per reading (:class:`ArtifactText`) into one string
  of words separated by spaces; the words an expanded contraction yields are
  joined by ``~`` instead (``what~is``) so that a phrase never starts or ends in
  the middle of an artifact word;
* a phrase list is compiled once into one regular expression whose top level is
  a character trie of the phrases' first words, so a scan costs a few character
  comparisons per word;
* a word-set test rules out most artifacts before any scan;
* original offsets are computed only for artifacts that match.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from functools import lru_cache, partial
from itertools import accumulate, islice
from math import fsum
from operator import add
from typing import Iterable, Iterator, NamedTuple, Union

from ... import read_data

__all__ = [
    "ArtifactText",
    "PhraseError",
    "PhraseMatch",
    "PhraseMatcher",
    "compile_phrases",
    "find_phrases",
    "load_phrase_lists",
    "normalize_words",
    "phrase_list",
]

_APOSTROPHES = str.maketrans({
    "\u2019": "'",  # right single quotation mark (the usual curly apostrophe)
    "\u2018": "'",  # left single quotation mark
    "\u201b": "'",  # single high-reversed-9 quotation mark
    "\u02bc": "'",  # modifier letter apostrophe
    "\u2032": "'",  # prime
    "\uff07": "'",  # fullwidth apostrophe
})
"""Curly apostrophes become straight ones (one character for one: offsets are kept)."""

# An HTML entity or tag is markup, not words; anything else that is not a word
# is punctuation or whitespace. A word may carry inner apostrophes (don't).
_TOKEN = re.compile(
    r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);"
    r"|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>\n]*)?/?>"
    r"|([^\W_]+(?:'[^\W_]+)*)"
)

_ASCII_LOWER_WORDS = bytes(ord(chr(c).lower()) if c < 128 and chr(c).isalnum() else ord(" ") for c in range(256))
"""Every ASCII character that is not a letter or digit, as a space; capital
letters lowercased (a table of bytes: :func:`_ascii_lower_words`)."""


def _ascii_lower_words(text: str) -> str:
    """An ASCII ``text`` through :data:`_ASCII_LOWER_WORDS`: its words,
    lowercased, between spaces. ``bytes.translate`` looks each character up
    in a table of 256; ``str.translate`` in a dict, ~2.5x slower."""
    return text.encode("ascii").translate(_ASCII_LOWER_WORDS).decode("ascii")

_PLAIN_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
""":data:`_TOKEN` for a text without ``&`` or ``<`` (no entity, no tag): faster."""


def _token_regex(text: str) -> re.Pattern:
    return _TOKEN if "&" in text or "<" in text else _PLAIN_TOKEN


_ASCII_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum() and chr(c) != "'"})
"""Every ASCII character that cannot be part of a word, as a space."""


def _words_of(text: str) -> list[str]:
    """The words of ``text`` (after :data:`_APOSTROPHES`), as :data:`_TOKEN` finds them.

    An ASCII text without ``&`` or ``<`` (the usual artifact) is split with
    ``str.translate`` and ``str.split``, faster than the regex
    (docs/performance.md): a maximal
    run of letters, digits and apostrophes holds exactly the regex's words of
    that run, so only runs with an apostrophe go through the regex."""
    if text.isascii() and "&" not in text and "<" not in text:
        if "'" not in text:
            return text.translate(_ASCII_SEPARATORS).split()
        words = []
        for run in text.translate(_ASCII_SEPARATORS).split():
            if "'" in run:
                words.extend(_PLAIN_TOKEN.findall(run))
            else:
                words.append(run)
        return words
    regex = _token_regex(text)
    found = regex.findall(text)
    return list(filter(None, found)) if regex is _TOKEN else found


_NOT_STEMS = {"ca": "can", "wo": "will", "sha": "shall", "ai": "is"}
_SUFFIXES = {"s": "is", "re": "are", "ve": "have", "ll": "will", "d": "would", "m": "am"}
_WHOLE = {
    "cannot": ("can", "not"),
    "let's": ("let", "us"),
    # Contractions commonly written without the apostrophe, where the bare
    # spelling is not an ordinary word ("its", "lets", "wont", "well" are).
    "whats": ("what", "is"),
    "thats": ("that", "is"),
    "theres": ("there", "is"),
    "heres": ("here", "is"),
    "isnt": ("is", "not"),
    "arent": ("are", "not"),
    "wasnt": ("was", "not"),
    "werent": ("were", "not"),
    "dont": ("do", "not"),
    "doesnt": ("does", "not"),
    "didnt": ("did", "not"),
    "hasnt": ("has", "not"),
    "havent": ("have", "not"),
    "couldnt": ("could", "not"),
    "shouldnt": ("should", "not"),
    "wouldnt": ("would", "not"),
    "youve": ("you", "have"),
    "weve": ("we", "have"),
}


def expand_word(word: str) -> tuple[str, ...]:
    """The words a (casefolded) word stands for: contractions expanded."""
    whole = _WHOLE.get(word)
    if whole is not None:
        return whole
    if "'" not in word:
        return (word,)
    head, _, tail = word.rpartition("'")
    if tail == "t" and head.endswith("n") and len(head) > 1:
        stem = head[:-1]
        return (*expand_word(_NOT_STEMS.get(stem, stem)), "not")
    if tail in _SUFFIXES and head:
        return (*expand_word(head), _SUFFIXES[tail])
    return (word,)


_WHOLE_WORDS = frozenset(_WHOLE)


def _plain_words(text: str) -> tuple[str, ...] | None:
    """The normalized words of a plain text, or ``None`` when ``text`` needs
    the full path.

    A plain text is ASCII without ``&``, ``<`` or apostrophes (no entity, tag
    or contraction) and none of whose words is an apostrophe-less contraction
    (:data:`_WHOLE`): most artifacts. Its words are exactly those of
    :func:`normalize_words` (ASCII case folding is lowercasing), from one
    ``translate`` and one ``split``, faster than the full path
    (docs/performance.md)."""
    if "&" in text or "<" in text or "'" in text or not text.isascii():
        return None
    words = tuple(_ascii_lower_words(text).split())
    return words if _WHOLE_WORDS.isdisjoint(words) else None


def normalize_words(text: str) -> str:
    """``text`` as its words: casefolded, contractions expanded, separated by
    single spaces (the parts of one expanded word by ``~``). An artifact's
    are computed once per reading (:attr:`ArtifactText.normalized`)."""
    plain = _plain_words(text)
    return " ".join(plain) if plain is not None else _normalize_fully(text)


def _normalize_fully(text: str) -> str:
    """:func:`normalize_words` for any text (entities, tags, contractions)."""
    words = " ".join(_words_of(text.translate(_APOSTROPHES))).casefold()
    tokens = words.split(" ")
    if "'" in words or not _WHOLE_WORDS.isdisjoint(tokens):
        words = " ".join(["~".join(expand_word(t)) if "'" in t or t in _WHOLE_WORDS else t for t in tokens])
    return words


def _word_list(text: str) -> list[str]:
    return normalize_words(text).replace("~", " ").split(" ")


def _word_set(text: str) -> frozenset[str]:
    """The distinct words of :func:`_word_list` (an artifact's: :attr:`ArtifactText.words`).

    A plain text's (:func:`_plain_words`) are its ASCII words, lowercased:
    the test for an apostrophe-less contraction then looks up the ~20 of
    :data:`_WHOLE` in the set rather than each word of the text."""
    if "&" not in text and "<" not in text and "'" not in text and text.isascii():
        words = frozenset(_ascii_lower_words(text).split())
        if _WHOLE_WORDS.isdisjoint(words):
            return words
    return frozenset(_word_list(text))


class ArtifactText:
    """One text as the phrase matching and the judgement (:mod:`._judgement`)
    read it: its words, its markdown blocks (until the structure is built
    from them) and its structure, each computed on first need and kept with
    this object, which the artifact rules share while a probe's unit is
    linted (:func:`._common.reading_of`; markdownlint's shape: what is
    derived from one file lives with its reading, and goes with it; no
    cache keyed by content). The segments a phrase search reads (~50 KB
    for a 1.7 KB artifact) are that search's own (:meth:`PhraseMatcher.find`).

    ``words`` may be given: the artifact's words among a ``vocabulary``
    (every word a matcher's prefilter or the judgement's key words ask
    about, :func:`._common.reading_of`), which the probe's context keeps
    for the other rules, instead of every distinct word (a set of ~250
    words held per artifact for a whole run is ~13 KB)."""

    __slots__ = ("text", "vocabulary", "_words", "_normalized", "_blocks", "_line_structure", "structure",
                 "may_hold_findings")

    def __init__(self, text: str, words: frozenset[str] | None = None,
                 vocabulary: frozenset[str] | None = None) -> None:
        self.text = text
        self.vocabulary = vocabulary if words is not None else None
        """The words :attr:`words` was restricted to (``None``: every word)."""
        self._words = words
        self._normalized: str | None = None
        self._blocks: tuple | None = None
        self._line_structure: tuple[frozenset[int], frozenset[int]] | None = None
        self.structure = None
        """The judgement's :class:`._judgement.Structure` of the text, once built."""
        self.may_hold_findings: bool | None = None
        """The judgement's :func:`._judgement.may_hold_findings` of the text, once asked."""

    @classmethod
    def of(cls, source: "TextSource") -> "ArtifactText":
        """``source`` itself, or a reading of a plain text."""
        return source if isinstance(source, ArtifactText) else cls(source)

    @property
    def words(self) -> frozenset[str]:
        """The distinct normalized words (contractions' parts apart), or
        those of :attr:`vocabulary` when restricted."""
        if self._words is None:
            self._words = _word_set(self.text)
        return self._words

    def words_among(self, vocabulary: frozenset[str]) -> frozenset[str]:
        """The words of :attr:`words` that ``vocabulary`` holds, whatever
        restriction applies (a vocabulary beyond the restriction reads every word)."""
        if self.vocabulary is not None and not _within(vocabulary, self.vocabulary):
            return vocabulary.intersection(_word_set(self.text))
        return vocabulary.intersection(self.words)

    @property
    def normalized(self) -> str:
        """:func:`normalize_words` of the text."""
        if self._normalized is None:
            self._normalized = normalize_words(self.text)
        return self._normalized

    @property
    def blocks(self) -> tuple:
        """The block tokens of the text (:func:`...markdown.block_tokens`: the
        project's parser, block rules only): the phrase rules' boundaries
        (:attr:`line_structure`) and the judgement's structure read the same
        parse. Read-only."""
        if self._blocks is None:
            self._blocks = block_tokens(self.text)
        return self._blocks

    @property
    def line_structure(self) -> tuple[frozenset[int], frozenset[int]]:
        """:func:`_line_structure` of :attr:`blocks`: what the phrase rules
        read of the parse."""
        if self._line_structure is None:
            self._line_structure = _line_structure(self.blocks, _line_break_offsets(self.text))
        return self._line_structure

    def release_blocks(self) -> None:
        """Drop :attr:`blocks` once the judgement's structure is built from
        them, :attr:`line_structure` derived first: a reading the artifact
        rules share while a probe's unit is linted (:func:`._common.reading_of`)
        keeps what is derived from the parse (a few KB), not its tokens (~60 KB)."""
        if self._blocks is not None:
            self.line_structure
            self._blocks = None

@lru_cache(maxsize=64)
def _within(inner: frozenset[str], outer: frozenset[str]) -> bool:
    """Whether vocabulary ``inner`` is part of ``outer`` (asked of the same
    few vocabularies for every artifact: answered once)."""
    return inner <= outer


TextSource = Union[str, ArtifactText]
"""A text, or a reading of one that keeps what is derived from it."""


def _word_spans(text: str) -> Iterator[tuple[int, int]]:
    """The original ``(start, end)`` of each word of ``text``, in order: word
    ``k`` is the ``k``-th space-separated word of :func:`normalize_words`."""
    translated = text.translate(_APOSTROPHES)
    regex = _token_regex(translated)
    if regex is _PLAIN_TOKEN:
        return (m.span() for m in regex.finditer(translated))
    return (m.span(1) for m in regex.finditer(translated) if m.group(1))


class PhraseError(ValueError):
    """A phrase that cannot be compiled (unbalanced or nested ``{...}``)."""


def _phrase_words(text: str) -> tuple[str, ...]:
    """The normalized words of a piece of a phrase (most are already plain
    lowercase words: those skip :func:`normalize_words`)."""
    words = text.split()
    if all(word.isascii() and word.isalpha() and word.islower() and word not in _WHOLE_WORDS for word in words):
        return tuple(words)
    return tuple(normalize_words(text).replace("~", " ").split())


ANY_WORD = "*"
"""The word of a ``<word>`` element: any one artifact word."""
START = "<start>"
"""A ``<start>`` element: the phrase begins a sentence or a block."""
END = "<end>"
"""An ``<end>`` element: the phrase ends a sentence or a clause (``Hint:``)."""
_MARKERS = frozenset({ANY_WORD, START, END})


def _is_marker(element: list[tuple[str, ...]]) -> bool:
    """Whether an element is ``<word>``, ``<start>`` or ``<end>`` (it holds no words to look for)."""
    return any(alt and alt[0] in _MARKERS for alt in element)


def _words_and_classes(text: str, phrase: str, classes: dict[str, tuple[str, ...]]) -> list[list[tuple[str, ...]]]:
    """The elements of a stretch of a phrase outside ``{...}``: each word is
    one element; ``<name>`` is the word class ``name`` (``<name?>`` makes it
    optional); ``<word>`` is any one word, ``<start>``/``<end>`` mark a
    sentence or block boundary."""
    elements: list[list[tuple[str, ...]]] = []
    for token in text.split():
        if not (token.startswith("<") and token.endswith(">")):
            elements.append([_phrase_words(token)])
            continue
        name = token[1:-1]
        optional = name.endswith("?")
        name = name.rstrip("?")
        if name == "word":
            element = [(ANY_WORD,)]
        elif name in ("start", "end") and not optional:
            element = [(START if name == "start" else END,)]
        elif name in classes:
            element = list(dict.fromkeys(_phrase_words(alt) for alt in classes[name]))
            element = [alt for alt in element if alt] or [()]
        else:
            raise PhraseError(f"unknown word class <{name}> in phrase {phrase!r}")
        if optional:
            element.append(())
        elements.append(element)
    return elements


def _parse(phrase: str, classes: dict[str, tuple[str, ...]] | None = None) -> list[list[tuple[str, ...]]]:
    """A phrase as a list of elements, each a list of alternatives (word tuples)."""
    if classes is None:
        classes = _shipped_classes()
    elements: list[list[tuple[str, ...]]] = []
    rest = phrase
    while rest:
        open_at = rest.find("{")
        close_at = rest.find("}")
        if open_at == -1:
            if close_at != -1:
                raise PhraseError(f"unbalanced '}}' in phrase {phrase!r}")
            elements.extend(_words_and_classes(rest, phrase, classes))
            break
        if close_at != -1 and close_at < open_at:
            raise PhraseError(f"unbalanced '}}' in phrase {phrase!r}")
        elements.extend(_words_and_classes(rest[:open_at], phrase, classes))
        close_at = rest.find("}", open_at)
        if close_at == -1:
            raise PhraseError(f"unclosed '{{' in phrase {phrase!r}")
        if (open_at > 0 and not rest[open_at - 1].isspace()) or (close_at + 1 < len(rest) and not rest[close_at + 1].isspace()):
            raise PhraseError(f"a '{{...}}' group must stand apart from the words around it in phrase {phrase!r}")
        body = rest[open_at + 1 : close_at]
        if "{" in body:
            raise PhraseError(f"nested '{{' in phrase {phrase!r}")
        alternatives = list(dict.fromkeys(_phrase_words(alt) for alt in body.split("|")))
        elements.append(alternatives)
        rest = rest[close_at + 1 :]
    elements = [[alt for alt in element] for element in elements if element != [()]]
    if elements and elements[-1] == [(START,)] or any(e == [(END,)] for e in elements[:-1]) \
            or any(e == [(START,)] for e in elements[1:]):
        raise PhraseError(f"<start> must open and <end> close phrase {phrase!r}")
    return elements


def _alternation(alternatives: Iterable[tuple[str, ...]]) -> str:
    """A regex for word sequences, as a character trie (a few comparisons per
    position however many alternatives); words are separated by
    :data:`_WORD_SEPARATORS`; at one position longer alternatives are tried
    first."""
    trie: dict = {}
    for words in alternatives:
        node = trie
        for char in " ".join(words):
            node = node.setdefault(char, {})
        node[None] = True

    def emit(node: dict) -> str:
        parts = [(_WORD_SEPARATORS if char == " " else re.escape(char)) + emit(child)
                 for char, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if None in node:
            parts.append("")
        if len(parts) == 1:
            return parts[0]
        if parts[-1] == "":
            return "(?:" + "|".join(parts[:-1]) + ")?"
        return "(?:" + "|".join(parts) + ")"

    return emit(trie)


_ANY_WORD_REGEX = "[^ ~\n\t\v]+"


def _element_regex(element: list[tuple[str, ...]]) -> str:
    """An element after the first: each alternative preceded by a separator."""
    filled = [alt for alt in element if alt]
    if filled == [(ANY_WORD,)]:
        body = _WORD_SEPARATORS + _ANY_WORD_REGEX
    else:
        body = _WORD_SEPARATORS + _alternation(filled)
    return f"(?:{body})?" if () in element else body


def _first_regex(element: list[tuple[str, ...]]) -> str:
    return _ANY_WORD_REGEX if element == [(ANY_WORD,)] else _alternation(element)


def _without_leading_options(elements: list[list[tuple[str, ...]]]) -> list[list[list[tuple[str, ...]]]]:
    """Phrases equivalent to ``elements`` whose first element is mandatory."""
    if not elements:
        return []
    first = elements[0]
    if () not in first:
        return [elements]
    filled = [alt for alt in first if alt]
    return [[filled, *elements[1:]]] + _without_leading_options(elements[1:])


def _literal_elements(phrase: str) -> list[list[tuple[str, ...]]]:
    """A phrase whose groups do not parse, read as plain words."""
    return [[(word,)] for word in normalize_words(phrase).replace("~", " ").split()]


class PhraseMatch(NamedTuple):
    """A phrase found in a text: original offsets (end exclusive) and the text."""

    start: int
    end: int
    text: str

    @property
    def words(self) -> str:
        """The matched words, normalized (expanded contractions spelt out)."""
        return normalize_words(self.text).replace("~", " ")


class _Phrase:
    """One phrase: its regexes over the artifact's words (compiled on first
    use) and the words one of which any match contains.

    ``regex`` runs over the words separated by spaces (boundaries unknown, a
    cheap first pass); ``strict_regex`` over :attr:`_Segmented.string`,
    whose separators say where an occurrence may start, cross and end
    (:data:`BOUNDARY`, :data:`CLAUSE_START`, :data:`RUN_ON_START`)."""

    __slots__ = ("phrase", "elements", "keys", "required", "max_words", "_body", "_compiled", "_strict")

    def __init__(self, phrase: str, elements: list[list[tuple[str, ...]]], keys: Iterable[str] | None = None,
                 required: Iterable[Iterable[str]] | None = None, max_words: int | None = None) -> None:
        """``keys``, ``required`` and ``max_words`` are derived from
        ``elements`` unless given (a shipped phrase's come from
        :data:`GENERATED_TABLES`, derived once at generation)."""
        self.phrase = phrase
        self.elements = elements
        self.keys = _key_words(elements) if keys is None else keys
        self.required = _required(elements) if required is None else tuple(map(frozenset, required))
        """Per mandatory element (the least likely first), the witness words
        one of which a text the phrase occurs in holds."""
        self.max_words = _max_words(elements) if max_words is None else max_words
        """The most artifact words an occurrence spans."""
        self._body: tuple[str, str] | None = None
        self._compiled: re.Pattern | None = None
        self._strict: re.Pattern | None = None

    def may_occur_in(self, words: frozenset[str]) -> bool:
        """False when a text with these words cannot hold the phrase (no regex
        is compiled or run for it then)."""
        for witnesses in self.required:
            if witnesses.isdisjoint(words):
                return False
        return True

    @property
    def body(self) -> str:
        """The regex source of the first pass (see :meth:`_bodies`)."""
        return self._bodies()[0]

    def _bodies(self) -> tuple[str, str]:
        """The regex sources, built on first need (building every phrase's
        alternation trie up front slowed every process: docs/performance.md):
        a match starts at
        the separator before its first word (never at the "~" inside an
        expanded contraction) and ends before a separator."""
        if self._body is None:
            elements = self.elements
            starts = bool(elements) and elements[0] == [(START,)]
            ends = bool(elements) and elements[-1] == [(END,)]
            core = elements[1 if starts else 0 : -1 if ends else None]
            variants = [_first_regex(v[0]) + "".join(_element_regex(e) for e in v[1:]) for v in _without_leading_options(core)]
            words = variants[0] if len(variants) == 1 else "(?:" + "|".join(variants) + ")"
            loose = " " + words
            if starts:
                opening = "[\n\t]" if ends else "[\n\t\v]"  # a label starts at a line or boundary only
            else:
                opening = "[ \n\t\v]"
            strict = opening + words + ("(?=\n)" if ends else "")
            self._body = (loose, strict)
        return self._body

    @property
    def regex(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self._bodies()[0] + "(?= )")
        return self._compiled

    @property
    def strict_regex(self) -> re.Pattern:
        if self._strict is None:
            self._strict = re.compile(self._bodies()[1] + "(?=[ \n\t\v])")
        return self._strict


def _required(elements: list[list[tuple[str, ...]]]) -> tuple[frozenset[str], ...]:
    """:attr:`_Phrase.required`: each mandatory element's witness words
    (:func:`_requirement`), the least likely element first (summed exactly,
    so that the order, and the generated tables, do not depend on a set's
    iteration order)."""
    return tuple(sorted(
        (_requirement(element) for element in elements if () not in element and not _is_marker(element)),
        key=lambda witnesses: fsum(map(_word_weight, witnesses))))


def _max_words(elements: list[list[tuple[str, ...]]]) -> int:
    """:attr:`_Phrase.max_words`: the most artifact words an occurrence spans."""
    return sum(max((len(alt) for alt in element if alt and alt[0] not in (START, END)), default=0)
               for element in elements)


def _requirement(element: list[tuple[str, ...]]) -> frozenset[str]:
    """An element's witness words for :meth:`_Phrase.may_occur_in`: each
    alternative's rarest word (a text holding the alternative holds it), so
    one C-level ``isdisjoint`` tells that none of them can be there."""
    return frozenset(min(alt, key=lambda w: (_word_weight(w), -len(w))) for alt in element if alt)


class PhraseMatcher:
    """A phrase list, ready to search texts.

    Each phrase is compiled on first need, when a text holds one of its key
    words; a text that holds no key word of any phrase costs one set test.
    A phrase whose ``{...}`` groups are malformed is read as plain words.
    """

    def __init__(self, phrases: Iterable[str]) -> None:
        self.phrases = tuple(dict.fromkeys(p.strip() for p in phrases if p and p.strip()))
        self._entries: list[_Phrase] = []
        by_key: dict[str, list[int]] = {}
        shipped = _shipped_tables().PARSED
        for phrase in self.phrases:
            elements, keys, required, max_words = shipped.get(phrase) or (None, None, None, None)
            if elements is None:
                try:
                    elements = _parse(phrase)
                except PhraseError:
                    elements = _literal_elements(phrase)
            if not any(() not in element and not _is_marker(element) for element in elements):
                continue  # nothing mandatory: it would match anywhere
            entry = _Phrase(phrase, elements, keys, required, max_words)
            for key in entry.keys:
                by_key.setdefault(key, []).append(len(self._entries))
            self._entries.append(entry)
        self._by_key = by_key
        self.keys = frozenset(by_key)
        self.vocabulary = self.keys.union(*(w for entry in self._entries for w in entry.required))
        """Every word the prefilter asks about: the key words and each phrase's witnesses."""

    def __bool__(self) -> bool:
        return bool(self._entries)

    def _candidates(self, reading: ArtifactText) -> list[_Phrase]:
        words = reading.words_among(self.vocabulary)
        present = self.keys.intersection(words)
        if not present:
            return []
        indexes = sorted({i for key in present for i in self._by_key[key]})
        return [entry for entry in map(self._entries.__getitem__, indexes) if entry.may_occur_in(words)]

    def might_match(self, source: TextSource) -> bool:
        """A cheap test: False when no phrase can occur in ``source``."""
        return not self.keys.isdisjoint(ArtifactText.of(source).words_among(self.keys))

    def fullmatch_words(self, words: str) -> bool:
        """Whether normalized ``words`` (single spaces) are, as a whole, one of the phrases."""
        padded = " " + words + " "
        return any(re.fullmatch(entry.body + " ", padded) for entry in self._entries)

    def occurrences(self, source: TextSource, candidates: list[_Phrase] | None = None) -> list[tuple[int, int]]:
        """``(start, end)`` in the normalized words of every occurrence of every
        phrase (occurrences of one phrase do not overlap each other), boundaries
        ignored."""
        reading = ArtifactText.of(source)
        if candidates is None:
            candidates = self._candidates(reading)
        if not candidates:
            return []
        padded = " " + reading.normalized + " "
        found = []
        for entry in candidates:
            found.extend((m.start(), m.end() - 1) for m in entry.regex.finditer(padded))
        return found

    def find(self, source: TextSource) -> list[PhraseMatch]:
        """Every phrase occurrence in ``text``, left to right, not overlapping:
        where occurrences overlap, the one starting first wins, then the longest.

        A first pass looks for the phrases in the words alone; only a text
        where it finds one is split at its sentence and block boundaries
        (:func:`_segmented`, and :func:`_structured` when a line break near
        an occurrence needs the markdown blocks) and searched again: an
        occurrence never crosses a boundary, and one that is only part of a
        longer noun phrase (a word glued or run on before or after it,
        :func:`_stands_alone`) is dropped."""
        reading = ArtifactText.of(source)
        candidates = self._candidates(reading)
        if not candidates:
            return []
        padded = " " + reading.normalized + " "
        candidates = [entry for entry in candidates if entry.regex.search(padded)]
        if not candidates:
            return []
        text = reading.text
        segmented = _segmented(text, reading.normalized)
        if segmented.line_gaps and _reaches(padded, candidates, segmented):
            segmented = _structured(reading, segmented)
        found = []
        for entry in candidates:
            for match in entry.strict_regex.finditer(segmented.string):
                first = bisect_left(segmented.starts, match.start() + 1)
                last = bisect_right(segmented.starts, match.end() - 1) - 1
                if first <= last and _stands_alone(text, segmented, first, last):
                    found.append((first, last))
        found.sort(key=lambda pair: (pair[0], -pair[1]))
        kept: list[tuple[int, int]] = []
        for first, last in found:
            if not kept or first > kept[-1][1]:
                kept.append((first, last))
        spans = segmented.spans
        return [PhraseMatch(spans[first][0], spans[last][1], text[spans[first][0]:spans[last][1]]) for first, last in kept]


class _Segmented(NamedTuple):
    """A text's words for the strict pass: ``string`` holds the normalized
    words, each after its separator (a space, :data:`BOUNDARY`,
    :data:`CLAUSE_START` or :data:`RUN_ON_START`), with a line break before
    and after; ``starts`` is where each word starts in it, ``spans`` its
    original ``(start, end)``, ``words`` the normalized words."""

    string: str
    starts: list[int]
    spans: list[tuple[int, int]]
    words: list[str]
    separators: list[str]
    """The separator before each word (``""`` before the first)."""
    line_gaps: dict[int, list[int]]
    """The gaps (by the index of the word after them) whose separator the
    markdown blocks decide, and the offsets of their line breaks; their
    separator is a space until :func:`_structured` decides."""


BOUNDARY = "\n"
"""The separator of two words of :attr:`_Segmented.string` with a sentence
or block boundary between them: no phrase crosses it, one may start after
it (``<start>``) and end before it (``<end>``)."""
CLAUSE_START = "\t"
"""The separator of two words of :attr:`_Segmented.string` where a line
break inside a block is followed by a capitalised word (a title or log line
without punctuation, then a sentence): no phrase crosses it, one may start
after it, none ends before it."""
RUN_ON_START = "\v"
"""The separator of two words of :attr:`_Segmented.string` where a
capitalised word follows one that is not, on one line with nothing but
spaces or emphasis between ("the totals are below Look carefully at row
3": a sentence whose period is missing): a phrase may start after it unless
it is a label (``<start> hint <end>``: "set Hint: to ..." names a field), and
may cross it (title case: "One of These Rows Is Wrong")."""
_WORD_SEPARATORS = "[ ~\v]"
"""What separates two words inside an occurrence: a space, the ``~`` inside
an expanded contraction, or :data:`RUN_ON_START`."""

_BOUNDARY = re.compile(
    r"(?:\r\n?|\n)[ \t]*(?:\r\n?|\n)"       # a blank line (between blocks, or inside a fence)
    r"|\|"                               # a table cell or row
    r"|[.!?;:][^\w\s]*\s"                 # a sentence or clause end: . ! ? ; : then a space
    r"|[\u2013\u2014]|\s-+\s"              # a dash between clauses
    r"|</?(?:br|p|li|ul|ol|tr|td|th|div|h[1-6]|table|blockquote)\b",
    re.IGNORECASE,
)
"""A gap between two words holding one of these is a boundary no phrase
crosses. Block boundaries (headings, list items, table rows, block quotes,
fences, HTML blocks) come from the parser's block tokens instead
(:func:`_line_structure`); a blank line (CommonMark: nothing but spaces and
tabs) is one wherever it lies."""

_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);")

_MARKUP_ONLY = frozenset(" \t\n*_`~")

_LINE_BREAK = re.compile(r"\r\n?|\n")
"""A line break as the Markdown parser counts lines (CommonMark: CRLF, lone CR
and LF; U+2028, U+0085, form feed... break no line)."""



def _line_break_offsets(text: str, start: int = 0, end: int | None = None) -> list[int]:
    """The offsets of the :data:`_LINE_BREAK` of ``text[start:end]`` (with
    ``str.find``, which is faster, when the text has only LF, as read texts
    do: docs/performance.md)."""
    end = len(text) if end is None else end
    if "\r" in text:
        return [m.start() for m in _LINE_BREAK.finditer(text, start, end)]
    offsets = []
    at = text.find("\n", start, end)
    while at != -1:
        offsets.append(at)
        at = text.find("\n", at + 1, end)
    return offsets


def block_tokens(text: str) -> tuple:
    """The block tokens of ``text`` (:func:`...markdown.block_tokens`: the
    project's parser, block rules only); an artifact's are parsed once per
    reading (:attr:`ArtifactText.blocks`). Read-only."""
    from ...markdown import block_tokens as parse_blocks

    return tuple(parse_blocks(text))


_CODE_BLOCKS = frozenset({"fence", "code_block"})


def _line_structure(blocks: tuple, breaks: list[int]) -> tuple[frozenset[int], frozenset[int]]:
    """``(block breaks, clause breaks)``: which of the line breaks at offsets
    ``breaks`` (every :data:`_LINE_BREAK` of ``text``, in order) are block
    boundaries, and after which of the others a clause may start.

    A line break is a block boundary when it lies just before a block's
    first line or just after its last: every heading (ATX or setext),
    paragraph, list and list item, table row, block quote, fence, indented
    code, HTML block and thematic break, as the ``.map`` line ranges of
    :func:`...markdown.block_tokens` give them. Any other line break lies inside a
    block; unless that block is code (whose lines are verbatim: a log's
    ``Hint:`` line is no clause of the artifact), a clause may start after
    it (:func:`_segmented`)."""
    block_lines: set[int] = set()
    code_lines: set[int] = set()
    for token in blocks:
        if token.map is not None:
            first, end = token.map
            block_lines.add(first)
            block_lines.add(end)
            if token.type in _CODE_BLOCKS:
                code_lines.update(range(first + 1, end))
    block_breaks = frozenset(breaks[line - 1] for line in block_lines if 0 < line <= len(breaks))
    inside = frozenset(breaks[line - 1] for line in code_lines if 0 < line <= len(breaks))
    return block_breaks, frozenset(breaks).difference(block_breaks, inside)


def _starts_clause(word: str) -> bool:
    """Whether an original word may start a clause where no punctuation says
    so: capitalised, but not all capitals (``HINT``, ``ERROR``, ``API`` open
    log lines and names, not sentences)."""
    return word[0].isupper() and (len(word) == 1 or not word.isupper())


_EMPHASIS_OR_SPACE = frozenset(" *_")
"""What may lie between a word and a capitalised one for :data:`RUN_ON_START`."""


def _segmented(text: str, normalized: str) -> _Segmented:
    """The words of ``text`` with its boundaries (see :class:`_Segmented`).

    A gap between two words is a :data:`BOUNDARY` when it holds a
    :data:`_BOUNDARY` (entities blanked first, offsets kept). A gap that holds nothing else but a line break is a line gap: a block
    boundary or not, only the markdown blocks tell (:func:`_structured`
    decides; the text is parsed only when an occurrence may touch one). A
    capitalised word after one that is not, on one line, is a
    :data:`RUN_ON_START`."""
    words = normalized.split(" ")
    spans = list(_word_spans(text))
    if not spans or len(words) != len(spans):  # no words (the tokenizations always agree otherwise)
        return _Segmented("\n\n", [], spans, [], [], {})
    scanned = _ENTITY.sub(lambda m: " " * len(m.group()), text) if "&" in text else text
    count = len(spans)
    word_starts = [start for start, _ in spans]
    gap_of = partial(bisect_right, word_starts)
    """The index of the word after the gap an offset lies in (no match of
    :data:`_BOUNDARY` or :data:`_LINE_BREAK` starts inside a word); 0 or
    ``count`` for none."""
    separators = [" "] * count
    for index in map(gap_of, [m.start() for m in _BOUNDARY.finditer(scanned)]):
        if 0 < index < count:
            separators[index] = BOUNDARY
    breaks = _line_break_offsets(text, spans[0][1], spans[-1][0])
    line_gaps: dict[int, list[int]] = {}
    for offset, index in zip(breaks, map(gap_of, breaks)):
        if separators[index] != BOUNDARY:
            line_gaps.setdefault(index, []).append(offset)
    for index in [i for i, start in enumerate(word_starts) if text[start].isupper()]:
        if index and separators[index] == " " and index not in line_gaps:
            previous_start, previous_end = spans[index - 1]
            if not text[previous_start].isupper() and _EMPHASIS_OR_SPACE.issuperset(text[previous_end:word_starts[index]]) \
                    and _starts_clause(text[word_starts[index]:spans[index][1]]):
                separators[index] = RUN_ON_START
    separators[0] = ""
    string = "\n" + "".join(map(str.__add__, separators, words)) + "\n"
    starts = list(map(add, accumulate(map(len, words), initial=1), range(count)))  # 1 + the lengths and separators before
    return _Segmented(string, starts, spans, words, separators, line_gaps)


def _structured(reading: ArtifactText, segmented: _Segmented) -> _Segmented:
    """``segmented`` (:func:`_segmented` of ``reading``) with the separators of its line gaps decided by the
    markdown blocks (:attr:`ArtifactText.line_structure`): a :data:`BOUNDARY` where a
    block boundary lies in the gap, a :data:`CLAUSE_START` where a line
    break inside a block (not code) is followed by a word that may start a
    clause (:func:`_starts_clause`), a space otherwise."""
    text = reading.text
    if not segmented.line_gaps:
        return segmented
    block_breaks, clause_breaks = reading.line_structure
    separators = list(segmented.separators)
    spans = segmented.spans
    for index, in_gap in segmented.line_gaps.items():
        if not block_breaks.isdisjoint(in_gap):
            separators[index] = BOUNDARY
        elif not clause_breaks.isdisjoint(in_gap) and _starts_clause(text[spans[index][0]:spans[index][1]]):
            separators[index] = CLAUSE_START
    string = "\n" + "".join(map(str.__add__, separators, segmented.words)) + "\n"
    return segmented._replace(string=string, separators=separators, line_gaps={})


def _reaches(padded: str, candidates: list[_Phrase], segmented: _Segmented) -> bool:
    """Whether an occurrence of a candidate may touch a line gap of
    ``segmented`` (then the blocks must be known): every occurrence the
    strict pass can find starts inside or at an occurrence of the first pass
    (over ``padded``, the words) and spans at most ``max_words`` words; it
    depends on the gaps from the one before its first word to the one after
    its last."""
    gaps = sorted(segmented.line_gaps)
    for entry in candidates:
        for match in entry.regex.finditer(padded):
            first = padded.count(" ", 0, match.start() + 1) - 1
            last = padded.count(" ", 0, match.end()) - 1
            index = bisect_left(gaps, first)
            if index < len(gaps) and gaps[index] <= last + entry.max_words + 1:
                return True
    return False


def _stands_alone(text: str, segmented: _Segmented, first: int, last: int) -> bool:
    """Whether words ``first``..``last`` are the phrase itself, not a piece
    of a longer noun phrase of the work: the word after the last (or before
    the first) is neither glued to it (``argument-hint``, ``use_hint``) nor,
    across plain space, an open-class word run on from an open-class one
    ("note the following *owners*", "find the error *handler*", "type
    *hint*"). Across a boundary or punctuation anything may follow; after a
    possible clause start (:data:`CLAUSE_START`) anything may precede, but
    before one the run-on test still holds (a capitalised next line may
    continue a title-case name)."""
    spans, words, string = segmented.spans, segmented.words, segmented.string
    function_words = _function_words()
    if last + 1 < len(words) and string[segmented.starts[last + 1] - 1] != BOUNDARY:
        gap = text[spans[last][1]:spans[last + 1][0]]
        if _glued(gap):
            return False
        if _MARKUP_ONLY.issuperset(gap) and _is_open(words[last].rsplit("~", 1)[-1], function_words) \
                and _is_open(words[last + 1].split("~", 1)[0], function_words):
            return False
    if first > 0 and string[segmented.starts[first] - 1] not in (BOUNDARY, CLAUSE_START, RUN_ON_START):
        gap = text[spans[first - 1][1]:spans[first][0]]
        if _glued(gap):
            return False
        if _MARKUP_ONLY.issuperset(gap) and _is_open(words[first].split("~", 1)[0], function_words) \
                and _is_open(words[first - 1].rsplit("~", 1)[-1], function_words):
            return False
    return True


_TAG_OR_ENTITY = re.compile(r"&(?:#[0-9]+|#[xX][0-9a-fA-F]+|[A-Za-z][A-Za-z0-9]*);|<[^<>]*>")


def _glued(gap: str) -> bool:
    """Whether two words with ``gap`` between them are one token of the work
    (``argument-hint``, ``use_hint``, ``3=hint``): no space, tag or entity
    between them."""
    return not any(c.isspace() for c in gap) and not _TAG_OR_ENTITY.search(gap)


def _is_open(word: str, function_words: frozenset[str]) -> bool:
    """Whether ``word`` may be part of a noun phrase (a noun, adjective or
    verb; a number): not a function word, and not an adverb in -ly."""
    if word in function_words:
        return False
    return not (word.endswith("ly") and len(word) > 4 and word not in function_words)


def _to_original(source: TextSource, spans: Iterable[tuple[int, int]]) -> list[PhraseMatch]:
    """Matches at ``(start, end)`` of the normalized words, mapped back to ``text``.

    A match starts at the start of an original word and ends at the end of
    one (the regexes never split a ``~``-joined expansion), so the number of
    spaces before an offset is the index of the original word. The original
    words are located only as far as the last match needs (a phrase is
    usually near the top of an artifact)."""
    reading = ArtifactText.of(source)
    text, words = reading.text, reading.normalized
    indexes = [(words.count(" ", 0, start), words.count(" ", 0, end)) for start, end in spans]
    if not indexes:
        return []
    needed = {index for pair in indexes for index in pair}
    origin = {}
    for number, span in enumerate(islice(_word_spans(text), max(needed) + 1)):
        if number in needed:
            origin[number] = span
    found = []
    for first, last in indexes:
        if last not in origin:  # cannot happen: both tokenizations are one regex
            continue
        begin, finish = origin[first][0], origin[last][1]
        found.append(PhraseMatch(begin, finish, text[begin:finish]))
    return found


_COMMON = frozenset(
    """a an the this that these those it its is are was were be been being am do does did not no
    of to in on at for with by from and or but if as so than then there here what which who where
    when how why you your we us our i me my he she they them their one some any all each every
    can could will would shall should may might must have has had let just very
    read check look see take show tell work find make know go get give over through out up down
    right off good fine bad true well place point question free single add care time thing things
    line lines item items row rows step steps number numbers value values report plan list table
    log data text code file page change output result results test tests claim claims part
    everything anything something nothing only two three more most less first last new old""".split()
)


_VERY_COMMON = frozenset(
    "a an the and or of to in on at is are was it this that for with be you we i as by not".split()
)


def _word_weight(word: str) -> float:
    """A rough chance that an artifact holds ``word``."""
    if word in _VERY_COMMON:
        return 1.0
    return 0.1 if word in _COMMON else 0.005


def _key_words(elements: list[list[tuple[str, ...]]]) -> set[str]:
    """Words of which at least one occurs in any text the phrase matches.

    Every match holds one alternative of each mandatory element (one without an
    empty alternative), so the least common word of each alternative of one
    such element will do; the element least likely to occur is chosen.
    """
    best_score: float | None = None
    best: set[str] = set()
    for element in elements:
        if () in element or _is_marker(element):
            continue
        chosen = {min(alt, key=lambda w: (_word_weight(w), -len(w))) for alt in element}
        score = sum(map(_word_weight, chosen))
        if best_score is None or score < best_score:
            best_score, best = score, chosen
    return best


def load_phrase_lists() -> dict[str, tuple[str, ...]]:
    """The shipped phrase lists, by table name (``signposting``, ``quiz-framing``)."""
    return _shipped_tables().PHRASE_LISTS


GENERATED_TABLES = "_phrase_tables"
"""Module (beside this one) holding the shipped phrase lists, parsed."""


def _shipped_tables():
    """The generated module of the shipped lists: importing it (a marshalled
    literal) is fast, where reading ``data/phrases.toml`` with tomllib and
    parsing its phrases slowed every process (docs/performance.md). Imported
    on first use."""
    global _TABLES
    if _TABLES is None:
        from . import _phrase_tables

        _TABLES = _phrase_tables
    return _TABLES


_TABLES = None


def _shipped_classes() -> dict[str, tuple[str, ...]]:
    """The word classes of ``data/phrases.toml`` (``[classes]``)."""
    return _shipped_tables().CLASSES


def _function_words() -> frozenset[str]:
    """Words after or before which a phrase may stand (``[function-words]``)."""
    tables = _shipped_tables()
    words = getattr(tables, "_FUNCTION_SET", None)
    if words is None:
        words = tables._FUNCTION_SET = frozenset(tables.FUNCTION_WORDS)
    return words


def _read_toml_tables() -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], tuple[str, ...]]:
    """``(phrase lists, word classes, function words)`` of ``data/phrases.toml``."""
    from ...config import _toml

    data = _toml().loads(read_data("phrases.toml"))
    classes = {name: tuple(alt.strip() for alt in (value.split("|") if isinstance(value, str) else value))
               for name, value in data.get("classes", {}).items()}
    function_words = tuple(sorted(set(" ".join(data.get("function-words", {}).get("words", ())).split())))
    lists = {name: tuple(table.get("phrases", ())) for name, table in data.items()
             if isinstance(table, dict) and name not in ("classes", "function-words")}
    return lists, classes, function_words


def generate_phrase_tables_code() -> str:
    """The source of :data:`GENERATED_TABLES` from ``data/phrases.toml``: each
    table's phrases, each phrase's elements, key words, witness words
    (:func:`_required`) and longest span (:func:`_max_words`), the word
    classes and the function words. Deriving the witnesses of ~140 phrases
    took ~9 ms of every process that reads an artifact."""
    lists, classes, function_words = _read_toml_tables()
    parsed: dict[str, tuple[list, tuple[str, ...]]] = {}
    for phrases in lists.values():
        for phrase in (p.strip() for p in phrases if p and p.strip()):
            try:
                elements = _parse(phrase, classes)
            except PhraseError:
                elements = _literal_elements(phrase)
            required = tuple(tuple(sorted(witnesses)) for witnesses in _required(elements))
            parsed[phrase] = (elements, tuple(sorted(_key_words(elements))), required, _max_words(elements))
    tables = "".join(
        f"    {name!r}: (\n" + "".join(f"        {phrase!r},\n" for phrase in phrases) + "    ),\n"
        for name, phrases in lists.items()
    )
    entries = "".join(f"    {phrase!r}:\n        {entry!r},\n" for phrase, entry in parsed.items())
    class_lines = "".join(f"    {name!r}: {alts!r},\n" for name, alts in classes.items())
    return (
        '"""Generated by `python -m skill_eval.linter.rules.artifact._phrases --regenerate`\n'
        'from data/phrases.toml. Do not edit."""\n'
        "# fmt: off\n"
        "# ruff: noqa\n\n"
        f"PHRASE_LISTS = {{\n{tables}}}\n\n"
        f"CLASSES = {{\n{class_lines}}}\n\n"
        f"FUNCTION_WORDS = {function_words!r}\n\n"
        f"PARSED = {{\n{entries}}}\n"
    )


def phrase_list(name: str) -> tuple[str, ...]:
    return load_phrase_lists().get(name, ())


@lru_cache(maxsize=64)
def compile_phrases(phrases: tuple[str, ...]) -> PhraseMatcher:
    """A matcher for ``phrases``, compiled once per distinct list."""
    return PhraseMatcher(phrases)


def find_phrases(source: TextSource, phrases: tuple[str, ...], allow: tuple[str, ...] = ()) -> list[PhraseMatch]:
    """Occurrences of ``phrases`` in ``source``, dropping those inside an
    occurrence of an ``allow`` phrase."""
    reading = ArtifactText.of(source)
    matches = compile_phrases(phrases).find(reading)
    if not matches or not allow:
        return matches
    allowed = compile_phrases(allow)
    spans = [(m.start, m.end) for m in _to_original(reading, allowed.occurrences(reading))]
    return [m for m in matches if not any(s <= m.start and m.end <= e for s, e in spans)]


if __name__ == "__main__":
    import sys
    from pathlib import Path

    if sys.argv[1:] != ["--regenerate"]:
        print("usage: python -m skill_eval.linter.rules.artifact._phrases --regenerate", file=sys.stderr)
        raise SystemExit(2)
    target = Path(__file__).with_name(GENERATED_TABLES + ".py")
    target.write_text(generate_phrase_tables_code(), encoding="utf-8")
    print(f"wrote {target}")
