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

* an artifact is normalized once per text (cached by content) into one string
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
from functools import lru_cache
from itertools import islice
from typing import Iterable, Iterator, NamedTuple

from ..._textcache import text_cache
from ... import read_data
from ...words import plain_ascii_words

__all__ = [
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

_PLAIN_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
""":data:`_TOKEN` for a text without ``&`` or ``<`` (no entity, no tag): faster."""


def _token_regex(text: str) -> re.Pattern:
    return _TOKEN if "&" in text or "<" in text else _PLAIN_TOKEN


_ASCII_SEPARATORS = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum() and chr(c) != "'"})
"""Every ASCII character that cannot be part of a word, as a space."""


def _words_of(text: str) -> list[str]:
    """The words of ``text`` (after :data:`_APOSTROPHES`), as :data:`_TOKEN` finds them.

    An ASCII text without ``&`` or ``<`` (the usual artifact) is split with
    ``str.translate`` and ``str.split``, ~3x faster than the regex: a maximal
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
    ``translate`` and one ``split`` (:func:`~skill_eval.linter.words.plain_ascii_words`,
    shared with SE501), ~2x faster."""
    if "&" in text or "<" in text:
        return None
    words = plain_ascii_words(text)
    return words if words is not None and _WHOLE_WORDS.isdisjoint(words) else None


@text_cache(1024, 2_000_000)
def normalize_words(text: str) -> str:
    """``text`` as its words: casefolded, contractions expanded, separated by
    single spaces (the parts of one expanded word by ``~``). Cached by content
    (rules run one after the other over every probe, so the cache is large)."""
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


@text_cache(1024, 2_000_000)
def _word_set(text: str) -> frozenset[str]:
    """The distinct words of :func:`_word_list` (cached by content: both phrase
    rules ask for it)."""
    plain = _plain_words(text)
    return frozenset(_word_list(text) if plain is None else plain)


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


def _parse(phrase: str) -> list[list[tuple[str, ...]]]:
    """A phrase as a list of elements, each a list of alternatives (word tuples)."""
    elements: list[list[tuple[str, ...]]] = []
    rest = phrase
    while rest:
        open_at = rest.find("{")
        close_at = rest.find("}")
        if open_at == -1:
            if close_at != -1:
                raise PhraseError(f"unbalanced '}}' in phrase {phrase!r}")
            elements.extend([_phrase_words(word)] for word in rest.split())
            break
        if close_at != -1 and close_at < open_at:
            raise PhraseError(f"unbalanced '}}' in phrase {phrase!r}")
        elements.extend([_phrase_words(word)] for word in rest[:open_at].split())
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
    return [[alt for alt in element] for element in elements if element != [()]]


def _alternation(alternatives: Iterable[tuple[str, ...]]) -> str:
    """A regex for word sequences, as a character trie (a few comparisons per
    position however many alternatives); words are separated by ``[ ~]``; at
    one position longer alternatives are tried first."""
    trie: dict = {}
    for words in alternatives:
        node = trie
        for char in " ".join(words):
            node = node.setdefault(char, {})
        node[None] = True

    def emit(node: dict) -> str:
        parts = [("[ ~]" if char == " " else re.escape(char)) + emit(child)
                 for char, child in sorted((k, v) for k, v in node.items() if k is not None)]
        if None in node:
            parts.append("")
        if len(parts) == 1:
            return parts[0]
        if parts[-1] == "":
            return "(?:" + "|".join(parts[:-1]) + ")?"
        return "(?:" + "|".join(parts) + ")"

    return emit(trie)


def _element_regex(element: list[tuple[str, ...]]) -> str:
    """An element after the first: each alternative preceded by a separator."""
    filled = [alt for alt in element if alt]
    body = "[ ~]" + _alternation(filled)
    return f"(?:{body})?" if () in element else body


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
    """One phrase: its regex over ``" " + words + " "`` (compiled on first use)
    and the words one of which any match contains."""

    __slots__ = ("phrase", "elements", "keys", "required", "_body", "_compiled")

    def __init__(self, phrase: str, elements: list[list[tuple[str, ...]]], keys: Iterable[str] | None = None) -> None:
        self.phrase = phrase
        self.elements = elements
        self.keys = _key_words(elements) if keys is None else keys
        self.required = tuple(_requirement(element) for element in elements if () not in element)
        """Per mandatory element, what a text the phrase occurs in holds: one of
        the element's one-word alternatives (a set, tested with one C-level
        ``isdisjoint``), or all the words of one of its longer alternatives."""
        self._body: str | None = None
        self._compiled: re.Pattern | None = None

    def may_occur_in(self, words: frozenset[str]) -> bool:
        """False when a text with these words cannot hold the phrase (no regex
        is compiled or run for it then)."""
        for single_words, longer in self.required:
            if single_words and not single_words.isdisjoint(words):
                continue
            if not any(alternative <= words for alternative in longer):
                return False
        return True

    @property
    def body(self) -> str:
        """The regex source, built on first need (building every phrase's
        alternation trie up front cost ~0.1 s per process)."""
        if self._body is None:
            # a match starts at the space before its first word (never at the "~"
            # inside an expanded contraction) and ends before a space
            variants = [" " + _alternation(v[0]) + "".join(_element_regex(e) for e in v[1:])
                        for v in _without_leading_options(self.elements)]
            self._body = variants[0] if len(variants) == 1 else "(?:" + "|".join(variants) + ")"
        return self._body

    @property
    def regex(self) -> re.Pattern:
        if self._compiled is None:
            self._compiled = re.compile(self.body + "(?= )")
        return self._compiled


def _requirement(element: list[tuple[str, ...]]) -> tuple[frozenset[str], tuple[frozenset[str], ...]]:
    """An element's alternatives for :meth:`_Phrase.may_occur_in`: the words of
    its one-word alternatives, and the word sets of the longer ones."""
    single_words = frozenset(alt[0] for alt in element if len(alt) == 1)
    longer = tuple(frozenset(alt) for alt in element if len(alt) > 1)
    return single_words, longer


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
            elements, keys = shipped.get(phrase) or (None, None)
            if elements is None:
                try:
                    elements = _parse(phrase)
                except PhraseError:
                    elements = _literal_elements(phrase)
            if not any(() not in element for element in elements):
                continue  # nothing mandatory: it would match anywhere
            entry = _Phrase(phrase, elements, keys)
            for key in entry.keys:
                by_key.setdefault(key, []).append(len(self._entries))
            self._entries.append(entry)
        self._by_key = by_key
        self.keys = frozenset(by_key)

    def __bool__(self) -> bool:
        return bool(self._entries)

    def _candidates(self, text: str) -> list[_Phrase]:
        words = _word_set(text)
        present = self.keys.intersection(words)
        if not present:
            return []
        indexes = sorted({i for key in present for i in self._by_key[key]})
        return [entry for entry in map(self._entries.__getitem__, indexes) if entry.may_occur_in(words)]

    def might_match(self, text: str) -> bool:
        """A cheap test: False when no phrase can occur in ``text``."""
        return not self.keys.isdisjoint(_word_set(text))

    def fullmatch_words(self, words: str) -> bool:
        """Whether normalized ``words`` (single spaces) are, as a whole, one of the phrases."""
        padded = " " + words + " "
        return any(re.fullmatch(entry.body + " ", padded) for entry in self._entries)

    def occurrences(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` in the normalized words of every occurrence of every
        phrase (occurrences of one phrase do not overlap each other)."""
        candidates = self._candidates(text)
        if not candidates:
            return []
        padded = " " + normalize_words(text) + " "
        found = []
        for entry in candidates:
            found.extend((m.start(), m.end() - 1) for m in entry.regex.finditer(padded))
        return found

    def find(self, text: str) -> list[PhraseMatch]:
        """Every phrase occurrence in ``text``, left to right, not overlapping:
        where occurrences overlap, the one starting first wins, then the longest."""
        spans = self.occurrences(text)
        if not spans:
            return []
        spans.sort(key=lambda span: (span[0], -span[1]))
        kept = []
        for start, end in spans:
            if not kept or start >= kept[-1][1]:
                kept.append((start, end))
        return _to_original(text, kept)


def _to_original(text: str, spans: Iterable[tuple[int, int]]) -> list[PhraseMatch]:
    """Matches at ``(start, end)`` of the normalized words, mapped back to ``text``.

    A match starts at the start of an original word and ends at the end of
    one (the regexes never split a ``~``-joined expansion), so the number of
    spaces before an offset is the index of the original word. The original
    words are located only as far as the last match needs (a phrase is
    usually near the top of an artifact)."""
    words = normalize_words(text)
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
        if () in element:
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
    literal) costs ~0.3 ms, where reading ``data/phrases.toml`` with tomllib and
    parsing its phrases cost ~15 ms of every process. Imported on first use."""
    global _TABLES
    if _TABLES is None:
        from . import _phrase_tables

        _TABLES = _phrase_tables
    return _TABLES


_TABLES = None


def generate_phrase_tables_code() -> str:
    """The source of :data:`GENERATED_TABLES` from ``data/phrases.toml``: each
    table's phrases, and each phrase's elements and key words."""
    from ...config import _toml

    data = _toml().loads(read_data("phrases.toml"))
    lists = {name: tuple(table.get("phrases", ())) for name, table in data.items() if isinstance(table, dict)}
    parsed: dict[str, tuple[list, tuple[str, ...]]] = {}
    for phrases in lists.values():
        for phrase in (p.strip() for p in phrases if p and p.strip()):
            try:
                elements = _parse(phrase)
            except PhraseError:
                elements = _literal_elements(phrase)
            parsed[phrase] = (elements, tuple(sorted(_key_words(elements))))
    tables = "".join(
        f"    {name!r}: (\n" + "".join(f"        {phrase!r},\n" for phrase in phrases) + "    ),\n"
        for name, phrases in lists.items()
    )
    entries = "".join(f"    {phrase!r}:\n        {entry!r},\n" for phrase, entry in parsed.items())
    return (
        '"""Generated by `python -m skill_eval.linter.rules.artifact._phrases --regenerate`\n'
        'from data/phrases.toml. Do not edit."""\n'
        "# fmt: off\n"
        "# ruff: noqa\n\n"
        f"PHRASE_LISTS = {{\n{tables}}}\n\n"
        f"PARSED = {{\n{entries}}}\n"
    )


def phrase_list(name: str) -> tuple[str, ...]:
    return load_phrase_lists().get(name, ())


@lru_cache(maxsize=64)
def compile_phrases(phrases: tuple[str, ...]) -> PhraseMatcher:
    """A matcher for ``phrases``, compiled once per distinct list."""
    return PhraseMatcher(phrases)


def find_phrases(text: str, phrases: tuple[str, ...], allow: tuple[str, ...] = ()) -> list[PhraseMatch]:
    """Occurrences of ``phrases`` in ``text``, dropping those inside an
    occurrence of an ``allow`` phrase."""
    matches = compile_phrases(phrases).find(text)
    if not matches or not allow:
        return matches
    allowed = compile_phrases(allow)
    spans = [(m.start, m.end) for m in _to_original(text, allowed.occurrences(text))]
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
