"""Judgement by relation to the defect: the reading behind SE301 (signposting),
SE302 (quiz framing) and SE304's answer-key leaks.

A sentence signposts when it points the reader at *where* the flaw is or at
the *fact* that one exists. Attention words alone say neither: "pay
attention to the `--dry-run` flag" is work, "pay attention to how
criterion 3 is evidenced" points at the defect. So every sentence of the
artifact is read for two things and judged on both:

* **what it does** (:func:`read_sentence`): directs scrutiny ("take a
  closer look at", "double-check", "the one to read twice"), voices doubt
  about the material ("thinner than it looks", "there is a catch",
  "something here quietly eats failures"), asks the reader to hunt for a
  fault ("tell me which clause the Customer should refuse"), or describes
  a flaw in a place the reader is not meant to read (an HTML comment, a
  code comment, a link title, an image's alt text);
* **what it refers to** (:func:`resolve`): the artifact's parts are known
  (headings, tables and their rows, list items, code lines, paragraphs) and
  so are the defects' positions (their quotes, probe.json). A noun phrase
  is resolved to the part it most plausibly names, by the words it shares
  with each part weighted by how few parts hold them, by ordinals ("row 3",
  "the third criterion", "clause 4", "line 7") and by the nouns of the
  containers ("the table", "these rows", "the diff"); a deictic phrase
  ("one of these", "here", "above", "somewhere in this report") refers to
  the artifact as a whole, which holds every defect.

A sentence is an error only when what it does relates to a defect: scrutiny
or doubt aimed at the defect's row, line, item, block or section, or doubt
about the artifact as a whole ("there is a bug somewhere in this diff").
Scrutiny aimed at anything else (a flag, a dashboard, another row) is work;
an occurrence of a phrase of the shipped list with no relation to any
defect is at most an info finding. Each finding says what the sentence was
related to ("refers to the table row holding D1's quote").

This is deterministic, offline and cheap: one markdown parse per reading of
an artifact (:class:`._phrases.ArtifactText`), and no model. ``skill-eval review`` asks a configured
model for a second opinion (evals/review.py).
"""

from __future__ import annotations

import re
from functools import lru_cache
from itertools import repeat
from typing import TYPE_CHECKING, NamedTuple, Sequence

if TYPE_CHECKING:  # pragma: no cover
    from ._phrases import TextSource

__all__ = ["KEYS", "STOP", "WORD", "Anchor", "Judgement", "Relation", "Unit", "judge_artifact", "read_sentence", "resolve",
           "structure_of"]

class _lazy:
    """A regular expression compiled on first use: the reading's large
    alternations cost a start that never needs them (an artifact without
    any of their key words, :data:`KEYS`) about 40 ms to compile."""

    __slots__ = ("_args", "_compiled")

    def __init__(self, *args) -> None:
        self._args = args
        self._compiled = None

    def __getattr__(self, name: str):
        compiled = self._compiled
        if compiled is None:
            compiled = self._compiled = re.compile(*self._args)
        return getattr(compiled, name)


HIDDEN_KINDS = frozenset({"html-comment", "code-comment", "title", "alt"})
"""Units a reader of the rendered artifact does not see as prose: a flaw they
describe is an answer key (SE304), not a signpost."""

# -- words ---------------------------------------------------------------------------

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|\d+(?:[.:,]\d+)*")
"""A word of a sentence (inner apostrophes kept) or a number (``2.4``, ``02:00``)."""

STOP = frozenset("""
a an the this that these those it its it's is are was were be been being am do does did not no
of to in on at for with by from and or but if as so than then there here what which who whom where
when how why you your we us our i me my he she they them their one some any all each every can could
will would shall should may might must have has had let just very also too into onto about above below
under over after before since until during within without between among across through per via like
please kindly only even still again already more most less least much many few own same such
get gets got go goes make makes made take takes see look read check note tell find before after
""".split())
"""Words that name nothing in the artifact (function words and the verbs of
scrutiny themselves): they never make a reference."""

_SUFFIXES = ("ations", "ation", "ions", "ion", "ments", "ment", "ings", "ing", "ied", "ies", "ed", "es", "s", "ate", "er", "ly")


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    """A crude, deterministic stem: enough to equate "validation" with
    "validate", "retries" with "retry", "controls" with "control"."""
    word = word.lower().replace("’", "'")
    if word.endswith("'s"):
        word = word[:-2]
    if not word.isalpha() or len(word) <= 4:
        return word[:-1] if len(word) == 4 and word.endswith("s") and not word.endswith("ss") else word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    if word.endswith("i"):
        word = word[:-1] + "y"
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "lsaeiou":
        word = word[:-1]
    return word.rstrip("e") if len(word) > 4 else word


def words_of(text: str) -> list[str]:
    """The lowercased words of ``text`` (:data:`WORD`), curly apostrophes straightened."""
    return list(map(str.lower, WORD.findall(text.replace("’", "'"))))


_JOINED = re.compile(r"(?<![^\W_])[^\W_]++(?:[-_][^\W_]++)+")
"""A hyphenated or snake_case identifier (possessive: a long word without a
hyphen is not tried at every length)."""
_IDENTIFIER_PART = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def content_stems(text: str) -> set[str]:
    """The stems of the words of ``text`` that may name a part of the
    artifact; an identifier also gives the stems of its parts
    (``TimeoutError``: ``timeout``, ``error``; ``continue-on-error``)."""
    found: set[str] = set()
    for raw in set(WORD.findall(text)):
        found.update(_word_stems(raw))
    if "-" in text or "_" in text:
        for joined in _JOINED.findall(text):
            found.update(stem(p.lower()) for p in re.split(r"[-_]", joined) if len(p) > 2 and p.lower() not in STOP)
    return found


@lru_cache(maxsize=16384)
def _word_stems(raw: str) -> tuple[str, ...]:
    """What one word gives :func:`content_stems` (cached: an artifact's
    parts share most of their words, and so do a run's artifacts)."""
    found = []
    word = raw.lower().replace("’", "'")
    if word not in STOP and (len(word) > 1 or word.isdigit()) and word not in _EVALUATIVE:
        found.append(stem(word))
    if raw.isascii() and (raw.isdigit() or (raw.isalpha() and raw[1:].islower())):
        return tuple(found)  # one part ("word", "Word", "42"): no identifier to split
    parts = _IDENTIFIER_PART.findall(raw)
    if len(parts) > 1:
        found.extend(stem(p.lower()) for p in parts if len(p) > 2 and p.lower() not in STOP)
    return tuple(found)


_EVALUATIVE = frozenset("""
closely carefully careful attention attentively twice again slowly hard harder scrutiny scrutinise scrutinize
suspicion suspicious worth deserves deserve merits merit interesting important matters focus wary cautious
off wrong incorrect bogus thin thinner generous reading solid reassuring forgiving heavy lifting shaky
nagging feeling uneasy convinced quietly silently something anything everything somewhere one
second closer close double reread skim face value lean rather really quite actually probably
never not no without nothing none longer ignored ignores swallows swallowed swallow silently hides drops dropped
discards discarded lose lost failing unproven untested ask yourself whether worry worries concern hunch
tells revisited reconsidered reflection
""".split())
"""Words of scrutiny and doubt: they say what a sentence does, never what it is about."""


# -- the artifact's parts ----------------------------------------------------------


class Unit(NamedTuple):
    """A readable piece of the artifact: a sentence of a paragraph, a list item
    or a block quote, a heading, a table cell, a comment, a link's text or
    title, an image's alt text."""

    kind: str
    """``heading``, ``paragraph``, ``item``, ``quote``, ``cell``, ``link``,
    ``html-comment``, ``code-comment``, ``title``, ``alt``."""
    text: str
    line: int
    """1-based first line."""
    end_line: int
    part: int
    """Index of the :class:`Part` the unit lies in."""


class Part(NamedTuple):
    """A part of the artifact a sentence may refer to: a table row, a list
    item, a code line, a paragraph, a heading."""

    kind: str
    """``row``, ``item``, ``code``, ``paragraph``, ``heading``, ``quote``, ``html``."""
    text: str
    line: int
    end_line: int
    block: int
    """Index of the block (a table, a list, a code block ...) holding it."""
    number: int | None
    """A table row's 1-based place in the body, an ordered item's number, a
    code line's place in its block."""
    label: str
    """A row's first cell (often its own number or name)."""


class Block(NamedTuple):
    kind: str
    """``table``, ``list``, ``code``, ``paragraph``, ``heading``, ``quote``, ``html``."""
    line: int
    end_line: int
    section: int | None
    """Index (in :attr:`Structure.parts`) of the heading above it."""
    header: str
    """A table's header row; a code block's info string."""


class Structure:
    """An artifact's blocks, parts and units, and the stems of each part
    with how many parts hold each stem (``document_frequency``). A plain
    class: a dataclass costs every start its import (docs/performance.md)."""

    __slots__ = ("blocks", "parts", "units", "document_frequency", "part_stems")

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.parts: list[Part] = []
        self.units: list[Unit] = []
        self.document_frequency: dict[str, int] = {}
        self.part_stems: list[frozenset[str]] = []

    def held_elsewhere(self, stem: str, part: int | None) -> int:
        """How many parts other than ``part`` (none: every part) hold ``stem``."""
        own = part is not None and part < len(self.part_stems) and stem in self.part_stems[part]
        return self.document_frequency.get(stem, 0) - own


_COMMENT = re.compile(r"(?:^|\s)(?:#|//|--|;|/\*|<!--)\s?(.*?)(?:\*/|-->)?\s*$")
_HTML_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*_]*\s+(?=[\"'(\[*_`]*[A-Z0-9])|(?<=[;])\s+")


def _sentences(text: str) -> list[str]:
    """The sentences of a block's plain text. Line breaks join lines, except
    after a line without closing punctuation (a title or a log line) when
    the next line starts with a capital."""
    joined: list[str] = []
    for line in (line.strip() for line in text.split("\n")):
        if not line:
            continue
        if joined and not joined[-1].endswith(_CLOSED) and line[:1].isupper() and _is_title_like(joined[-1]) \
                and not joined[-1].split()[-1][:1].isupper():
            joined.append(line)
        elif joined:
            joined[-1] += " " + line
        else:
            joined.append(line)
    out = []
    for piece in joined:
        out.extend(s.strip() for s in _SENTENCE_END.split(piece) if s.strip())
    return out


_CLOSED = (".", "!", "?", ":", ";", ",")
"""Closing punctuation: a line ending in one is joined by the next line, whatever its case (:func:`_sentences`)."""
_RUNS_ON = re.compile(r"\b(?:the|a|an|of|to|and|or|is|are|in|on|at|for|with)$", re.IGNORECASE)


def _is_title_like(line: str) -> bool:
    """A line that ends without punctuation and does not run on (a title, a
    log line): not on a function word, nor on a capitalised word (a Title
    Case name may go on: "Find the Error / Budget dashboard")."""
    return not _RUNS_ON.search(line)


_IMAGE = re.compile(r"!\[([^\]\n]*)\]\(\s*<?[^)\s>]*>?(?:\s+(?:\"([^\"]*)\"|'([^']*)'))?\s*\)")
_LINK = re.compile(r"(?<!!)\[([^\]\n]*)\]\(\s*<?[^)\s>]*>?(?:\s+(?:\"([^\"]*)\"|'([^']*)'))?\s*\)")
_TAG = re.compile(r"</?[A-Za-z][^<>\n]*>")
_EMPHASIS = re.compile(r"(?<![^\W_])[*_]{1,3}|[*_]{1,3}(?![^\W_])|~~")


def _inline_parts(content: str) -> tuple[str, list[tuple[str, str]]]:
    """The plain text of an inline block's source (images as their alt
    text, links as their text, code spans as their content, HTML and
    emphasis markup dropped, entities decoded), and the link texts, link
    titles, image alt texts and HTML comments it holds. The blocks come from
    a block-only parse (the one the phrase rules make); inline syntax is read
    here, which is faster than markdown-it's inline pass (docs/performance.md)."""
    import html

    extra: list[tuple[str, str]] = []
    if "<!--" in content:
        for comment in _HTML_COMMENT.findall(content):
            extra.append(("html-comment", comment))
        content = _HTML_COMMENT.sub(" ", content)
    if "](" in content:
        def image(match: re.Match) -> str:
            if match.group(1).strip():
                extra.append(("alt", match.group(1)))
            title = match.group(2) or match.group(3)
            if title:
                extra.append(("title", title))
            return " "

        def link(match: re.Match) -> str:
            if match.group(1).strip():
                extra.append(("link", _plain(match.group(1))))
            title = match.group(2) or match.group(3)
            if title:
                extra.append(("title", title))
            return match.group(1)

        content = _LINK.sub(link, _IMAGE.sub(image, content))
    text = _plain(content)
    return (html.unescape(text) if "&" in text else text), extra


def _plain(content: str) -> str:
    if "<" in content:
        content = _TAG.sub(" ", content)
    if "`" in content:
        content = content.replace("`", "")
    if "*" in content or "_" in content or "~" in content:
        content = _EMPHASIS.sub("", content)
    return content


def structure_of(source: "TextSource") -> Structure:
    """The parts and readable units of an artifact, built once per reading
    (:attr:`._phrases.ArtifactText.structure`; a probe's reading is shared
    by SE301, SE302 and SE304: :func:`._common.reading_of`) from the
    reading's markdown blocks, which go once it is built."""
    from ._phrases import ArtifactText

    reading = ArtifactText.of(source)
    if reading.structure is None:
        reading.structure = _structure(reading)
        reading.release_blocks()
    return reading.structure


def _structure(reading) -> Structure:
    """:func:`structure_of` of a reading not built yet."""
    from ...markdown import split_front_matter
    from ._phrases import block_tokens

    text = reading.text
    _front, body = split_front_matter(text)
    tokens = reading.blocks if body is text else block_tokens(body)
    lines = text.split("\n")
    found = Structure()
    section: int | None = None
    stack: list[str] = []
    row_number = 0
    item_numbers: list[int] = []
    header_cells: list[str] = []
    row_cells: list[str] = []
    row_texts: list[str] = []
    in_head = False
    pending_heading = False

    def new_block(kind: str, start: int, end: int, header: str = "") -> int:
        found.blocks.append(Block(kind, start, end, section, header))
        return len(found.blocks) - 1

    def add_part(kind: str, text_: str, start: int, end: int, block: int, number: int | None = None, label: str = "") -> int:
        found.parts.append(Part(kind, text_, start, end, block, number, label))
        return len(found.parts) - 1

    block_of_container: list[int] = []
    for index, token in enumerate(tokens):
        kind = token.type
        if kind == "heading_open":
            pending_heading = True
        elif kind in ("bullet_list_open", "ordered_list_open"):
            block_of_container.append(new_block("list", token.map[0] + 1, token.map[1]))
            start = token.attrGet("start")
            item_numbers.append(int(start) - 1 if start is not None else 0)
            stack.append("ordered" if kind == "ordered_list_open" else "bullet")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            block_of_container.pop()
            item_numbers.pop()
            stack.pop()
        elif kind == "list_item_open":
            item_numbers[-1] += 1
            stack.append("item")
        elif kind == "list_item_close":
            stack.pop()
        elif kind == "blockquote_open":
            block_of_container.append(new_block("quote", token.map[0] + 1, token.map[1]))
            stack.append("quote")
        elif kind == "blockquote_close":
            block_of_container.pop()
            stack.pop()
        elif kind == "table_open":
            block_of_container.append(new_block("table", token.map[0] + 1, token.map[1]))
            row_number = 0
            header_cells = []
        elif kind == "table_close":
            block = block_of_container.pop()
            found.blocks[block] = found.blocks[block]._replace(header=" | ".join(header_cells))
        elif kind == "thead_open":
            in_head = True
        elif kind == "thead_close":
            in_head = False
        elif kind == "tr_open":
            row_cells = []
            row_texts = []
            if not in_head:
                row_number += 1
        elif kind == "tr_close":
            if len(row_texts) > 1:  # a row is one part: its cells' text, joined once the row is read
                found.parts[-1] = found.parts[-1]._replace(text=" | ".join(row_texts))
        elif kind in ("fence", "code_block") and token.map:
            start, end = token.map[0] + 1, token.map[1]
            first = start + 1 if kind == "fence" else start
            block = new_block("code", start, end, token.info.strip() if kind == "fence" else "")
            for offset, code_line in enumerate(token.content.split("\n")[: max(0, end - first + (0 if kind == "fence" else 1))]):
                if not code_line.strip():
                    continue
                line = first + offset
                part = add_part("code", code_line, line, line, block, offset + 1)
                comment = _COMMENT.search(code_line) if _might_comment(code_line, token.info) else None
                if comment and comment.group(1).strip():
                    found.units.append(Unit("code-comment", comment.group(1).strip(), line, line, part))
        elif kind == "html_block" and token.map:
            start, end = token.map[0] + 1, token.map[1]
            block = new_block("html", start, end)
            part = add_part("html", token.content, start, end, block)
            for comment in _HTML_COMMENT.findall(token.content):
                if comment.strip():
                    found.units.append(Unit("html-comment", comment.strip(), start, end, part))
        elif kind == "inline" and token.map:
            start, end = token.map[0] + 1, max(token.map[1], token.map[0] + 1)
            plain, extra = _inline_parts(token.content)
            parent = tokens[index - 1].type if index else ""
            if pending_heading:
                pending_heading = False
                block = new_block("heading", start, end)
                part = add_part("heading", plain, start, end, block)
                section = part
                found.blocks[block] = found.blocks[block]._replace(section=part)
                found.units.append(Unit("heading", plain.strip(), start, end, part))
            elif parent in ("th_open", "td_open"):
                block = block_of_container[-1] if block_of_container else new_block("table", start, end)
                if in_head:
                    header_cells.append(plain.strip())
                    part = None
                else:
                    row_cells.append(plain.strip())
                    row_texts.append(plain)
                    if len(row_cells) == 1:
                        part = add_part("row", plain, start, end, block, row_number, plain.strip())
                    else:
                        part = len(found.parts) - 1
                if part is not None and plain.strip():
                    found.units.append(Unit("cell", plain.strip(), start, end, part))
                elif part is None and plain.strip():
                    pass
            else:
                inside = stack[-1] if stack else ""
                in_item = "item" in stack
                in_quote = "quote" in stack
                if in_item:
                    block = block_of_container[-1] if block_of_container else new_block("list", start, end)
                    number = item_numbers[-1] if item_numbers else None
                    part = add_part("item", plain, start, end, block, number, str(number or ""))
                    unit_kind = "item"
                elif in_quote or inside == "quote":
                    block = block_of_container[-1] if block_of_container else new_block("quote", start, end)
                    part = add_part("quote", plain, start, end, block)
                    unit_kind = "quote"
                else:
                    block = new_block("paragraph", start, end)
                    part = add_part("paragraph", plain, start, end, block)
                    unit_kind = "paragraph"
                for sentence in _sentences(plain):
                    found.units.append(Unit(unit_kind, sentence, start, end, part))
            if token.map and extra:
                owner = len(found.parts) - 1 if found.parts else 0
                for extra_kind, extra_text in extra:
                    found.units.append(Unit(extra_kind, extra_text.strip(), start, end, owner))
    frequency: dict[str, int] = {}
    stems = []
    for part in found.parts:
        part_stems = frozenset(content_stems(part.text))
        stems.append(part_stems)
        for s in part_stems:
            frequency[s] = frequency.get(s, 0) + 1
    found.part_stems = stems
    found.document_frequency = frequency
    del lines
    return found


def _might_comment(line: str, info: str) -> bool:
    """Whether a code line may hold a comment (a ``#``, ``//``, ``--``, ``;``
    or ``/*`` after code or at its start, not inside a URL)."""
    return any(mark in line for mark in ("#", "//", "--", "/*", "<!--")) and "://" not in line.split("#")[0][-3:]


# -- the defects ---------------------------------------------------------------------


class Anchor(NamedTuple):
    """Where a defect is: its id, its quote's lines and the part holding it."""

    defect_id: str
    quote: str
    line: int
    end_line: int


def _parts_of(structure: Structure, anchor: Anchor) -> list[int]:
    """The parts the anchor's quote lies in (code lines: with the lines next to it)."""
    found = []
    for index, part in enumerate(structure.parts):
        if part.line <= anchor.end_line and anchor.line <= part.end_line:
            found.append(index)
        elif part.kind == "code" and abs(part.line - anchor.line) <= 1:
            found.append(index)
    return found


_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8,
    "ninth": 9, "tenth": 10, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10,
}
_NUMBERED = re.compile(r"\b(row|line|item|criterion|criteria|step|clause|term|control|stage|table|entry|point|bullet|"
                       r"number|#|no\.?)\s*#?(\d+|[a-z]\d*|one|two|three|four|five|six|seven|eight|nine|ten)\b",
                       re.IGNORECASE)
_ORDINAL_NOUN = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+"
                           r"(?:\w+\s+)?(row|line|item|criterion|step|clause|term|control|stage|table|entry|one|bullet|"
                           r"action item|setting|key)\b", re.IGNORECASE)
_LETTER_ROW = re.compile(r"\b(?:the\s+)?([A-Z])\s+row\b|\brow\s+([A-Z])\b")

CONTAINER_NOUNS = {
    "table": frozenset({"table", "row", "column", "cell", "entry", "entri", "line", "criterion", "criteria"}),
    "list": frozenset({"list", "item", "term", "clause", "step", "point", "bullet"}),
    "code": frozenset({"code", "diff", "function", "loop", "line", "snippet", "workflow", "job", "log",
                       "script", "branch", "block", "query"}),
    "paragraph": frozenset({"paragraph", "sentence", "summary"}),
}
PLURAL_CONTAINERS = frozenset({"rows", "lines", "entries", "items", "criteria", "terms", "clauses", "steps",
                               "cells", "columns", "settings", "keys", "stages", "bullets", "points"})
_CONTAINER_STEMS = frozenset(stem(n) for nouns in CONTAINER_NOUNS.values() for n in nouns)
ARTIFACT_NOUNS = frozenset({
    "report", "closeout", "postmortem", "diff", "draft", "document", "summary", "pr", "change", "run", "plan",
    "protocol", "agreement", "contract", "workflow", "log", "material", "writeup", "write-up", "this",
})
_DEIXIS = _lazy(
    r"\b(?:one|some|two|several|a few|any|none|each|all|every one|not all|not every(?:thing)?|everything|anything|something)"
    r"\s+(?:of\s+)?(?:these|those|them|the following|the above|the below|here|in here|above|below)\b"
    r"|\b(?:these|those)\s+(?:\w+\s+)?(?:rows|lines|items|entries|criteria|steps|claims|numbers|figures|tables|controls|"
    r"settings|terms|clauses|stages|evidence|checks|results|values|keys)\b"
    r"|\bthe following\s*[:.]?\s*$|\bnot (?:everything|all|every \w+|each \w+)\b"
    r"|\bsomewhere\b|\b(?:here|above|below)\b|\bthis\s+(?:report|closeout|postmortem|diff|draft|document|summary|pr|"
    r"change|run|plan|protocol|agreement|contract|workflow|list|table|log|material|page)\b"
    r"|\b(?:at|on|over|through)\s+(?:this|it|these|them)\s*[.!?]?$|\bthe (?:material|artifact)\b",
    re.IGNORECASE,
)


class Relation(NamedTuple):
    """What a sentence or phrase refers to."""

    kind: str
    """``defect`` (the part holding a defect's quote), ``block`` (the block or
    section holding it), ``whole`` (the artifact as a whole), ``other`` (a
    part holding no defect) or ``none``."""
    anchor: Anchor | None = None
    description: str = ""

    @property
    def relates(self) -> bool:
        return self.kind in ("defect", "block", "whole")


_NONE = Relation("none")


def _part_name(part: Part) -> str:
    return {"row": "table row", "item": "list item", "code": "code line", "paragraph": "paragraph",
            "heading": "heading", "quote": "block quote", "html": "HTML block"}.get(part.kind, part.kind)


_DETERMINER = re.compile(r"\b(?:the|this|these|those|that|each|every|which|whose|its|their)\s+", re.IGNORECASE)
_NP_BOUNDARY = frozenset("""
in on at for of from with to by under over into onto about as than when before after while if because since
felt feels feel seems looks
until and or but is are was were be been has have had can could will would should may might must does do did
that which who gets get reads looks seems appears needs need changes change keeps keep moves stays lives goes
""".split())


_NP_STOP = STOP - {"get", "gets", "go", "goes", "make", "makes", "made", "take", "takes", "see", "look", "read",
                    "check", "note", "tell", "find", "own", "same"}
"""Function words that end a noun phrase (the verbs of :data:`STOP` are nouns
as often: "the check column", "the read path")."""


def noun_phrases(phrase: str) -> list[list[str]]:
    """The determined noun phrases of ``phrase`` ("the evidence column",
    "these rows", "the test job's failure handling"): the words after a
    determiner up to a preposition, a verb or a clause's end, at most four.
    A possessor is a noun phrase of its own ("the test job's failure
    handling" is about something of *the test job*, and names it too)."""
    found = []
    for match in _DETERMINER.finditer(phrase):
        words = []
        for word in words_of(phrase[match.end():match.end() + 80]):
            if word in _NP_BOUNDARY or word in _NP_STOP or (word in _EVALUATIVE and words) or word.endswith("n't") \
                    or (words and len(word) > 4 and word.endswith("ed")):
                break
            words.append(word)
            if word.endswith("'s") and len(word) > 2:
                found.append([*words[:-1], word[:-2]])
            if len(words) == 4:
                break
        if words:
            found.append(words)
    return found


def resolve(phrase: str, structure: Structure, anchors: Sequence[Anchor], *, exclude: int | None = None,
            located: int | None = None, strict: bool = False) -> Relation:
    """The part, block or whole that ``phrase`` refers to, related to the defects.

    In order: the position (``located``: a cell of the defect's row, a
    comment on its code line); an ordinal or number ("row 3", "the third
    criterion", "clause 4", "line 7", "the C row"); the words the phrase
    shares with each part, each weighing 1 / (how many parts hold it), when
    they cover at least half of the phrase's naming words or are two or
    more (the defect's part among the best: ``defect``; another part:
    ``other``); a determined noun phrase whose words name the container
    holding a defect ("the evidence column", "these rows", "the retry
    loop") or the heading of its section ("the action items"): ``block``;
    deixis ("one of these", "here", "somewhere", "this report"):
    ``whole``. ``exclude`` is the part the phrase lies in (its own words
    are no reference to it); with ``strict`` only ``defect`` counts (a weak
    cue such as "Hint:" needs a precise pointer)."""
    if not anchors:
        return _NONE
    defect_parts = {index: anchor for anchor in anchors for index in _parts_of(structure, anchor)}
    defect_blocks = {structure.parts[index].block: anchor for index, anchor in defect_parts.items()}
    defect_sections = {}
    for block_index, anchor in defect_blocks.items():
        section = structure.blocks[block_index].section
        if section is not None:
            defect_sections[section] = anchor
    if located is not None and located in defect_parts:
        part = structure.parts[located]
        return Relation("defect", defect_parts[located], f"sits in the {_part_name(part)} holding {defect_parts[located].defect_id}'s quote")
    if exclude is not None and exclude < len(structure.parts) and ("above" in phrase or "below" in phrase
                                                                   or "previous" in phrase or "next" in phrase):
        relative = _relative(phrase, structure, exclude, defect_parts)
        if relative is not None:
            return relative
    numbers: list[tuple[str, str]] = []
    for match in _NUMBERED.finditer(phrase):
        value = match.group(2).lower()
        numbers.append((match.group(1).lower(), str(_ORDINALS.get(value, match.group(2)))))
    for match in _ORDINAL_NOUN.finditer(phrase):
        value = match.group(1).lower()
        numbers.append((match.group(2).lower(), str(_ORDINALS.get(value, re.sub(r"\D", "", value)))))
    for match in _LETTER_ROW.finditer(phrase):
        numbers.append(("row", (match.group(1) or match.group(2))))
    for noun, value in numbers:
        for index, anchor in defect_parts.items():
            part = structure.parts[index]
            label = part.label.strip().lower()
            name = f"the {_part_name(part)} holding {anchor.defect_id}'s quote"
            if part.kind == "code" and noun == "line" and value.isdigit() and int(value) in (part.number, part.line):
                return Relation("defect", anchor, f"names line {value}, {name}")
            if value.isdigit() and part.number == int(value) and part.kind in ("row", "item"):
                return Relation("defect", anchor, f"names {noun} {value}, {name}")
            if label and (label == value.lower() or (len(value) == 1 and value.isalpha() and re.match(
                    re.escape(value.lower()) + r"\d", _first_cell_with(part, value)))):
                return Relation("defect", anchor, f"names {noun} {value}, {name}")
    stems = content_stems(phrase)
    scores: dict[int, tuple[float, set[str]]] = {}
    for index, part_stems in enumerate(structure.part_stems):
        if index == exclude:
            continue
        shared = stems & part_stems
        if not shared:
            continue
        weight = sum(1.0 / max(structure.held_elsewhere(s, exclude), 1) for s in shared)
        scores[index] = (weight, shared)
    for index in list(scores):
        block = structure.blocks[structure.parts[index].block]
        if block.kind == "table" and structure.parts[index].kind == "row":
            columns = stems & content_stems(block.header)
            scores[index] = (scores[index][0] + 0.5 * len(columns), scores[index][1])
    containers = {stem(n) for nouns in CONTAINER_NOUNS.values() for n in nouns}
    naming = {s for s in stems if s not in containers}
    best = max((score for score, _ in scores.values()), default=0.0)
    if best >= 0.3 and naming:
        top = [index for index, (score, _) in scores.items() if score >= best - 1e-9]
        top += _tied_defect_parts(phrase, structure, scores, top, defect_parts)
        noun_phrase_stems = [{stem(w) for w in words} - containers for words in noun_phrases(phrase)]
        for index in top:
            score, shared = scores[index]
            block = structure.blocks[structure.parts[index].block]
            columns = content_stems(block.header) & naming if block.kind == "table" else set()
            covers = len(shared | columns) >= 2 or len(shared & naming) / len(naming) >= 0.5 \
                or any(np and len(shared & np) / len(np) >= 0.5 for np in noun_phrase_stems)
            if index in defect_parts and covers:
                part, anchor = structure.parts[index], defect_parts[index]
                return Relation("defect", anchor, f"shares {', '.join(repr(s) for s in sorted(shared)[:3])} with the "
                                                  f"{_part_name(part)} holding {anchor.defect_id}'s quote")
    if strict:
        return _NONE
    # Determined noun phrases naming a defect's container or section.
    for words in noun_phrases(phrase):
        np_stems = {stem(w) for w in words}
        head = stem(words[-1])
        for block_index, anchor in defect_blocks.items():
            block = structure.blocks[block_index]
            nouns = {stem(n) for n in CONTAINER_NOUNS.get(block.kind, ())}
            header = content_stems(block.header) if block.kind == "table" else set()
            section = block.section
            heading = set(structure.part_stems[section]) if section is not None else set()
            named = ({head} & (nouns | header | heading)) or (np_stems & heading - {"report", "change"})
            if not named and np_stems & nouns:
                # "the test job's settings": a container noun whose other words are the block's own
                inside = set().union(*(structure.part_stems[i] for i, part in enumerate(structure.parts)
                                       if part.block == block_index))
                others = {stem(w) for w in words[:-1] if w not in STOP} - nouns - _EVALUATIVE
                if others and others <= inside | {stem(w) for w in _EVALUATIVE} | header:
                    named = np_stems & nouns
            if named:
                what = {"table": "table", "list": "list", "code": "code block", "paragraph": "paragraph",
                        "quote": "block quote"}.get(block.kind, block.kind)
                return Relation("block", anchor, f"refers to the {what} holding {anchor.defect_id}'s quote "
                                                 f"({' '.join(words)})")
    if best >= 0.3 and naming:
        top = [index for index, (score, _) in scores.items() if score >= best - 1e-9]
        for index in top:
            part = structure.parts[index]
            score, shared = scores[index]
            if part.kind != "heading" and (len(shared) >= 2 or len(shared & naming) / len(naming) >= 0.5):
                return Relation("other", None, f"refers to the {_part_name(part)} "
                                               f"{' '.join(part.text.split())[:40]!r}, which holds no defect")
    if _DEIXIS.search(phrase) or _SINGLED_OUT.search(phrase):
        return Relation("whole", anchors[0], "points at the artifact as a whole, which holds "
                        + ", ".join(a.defect_id for a in anchors))
    return Relation("none", None, "names no part of the artifact that holds a defect")


def _tied_defect_parts(phrase: str, structure: Structure, scores: dict[int, tuple[float, set[str]]], top: list[int],
                       defect_parts: dict[int, Anchor]) -> list[int]:
    """The defect's parts that tie with the best-scored parts ``top`` on the
    evidence itself: they hold every word the best parts share with
    ``phrase``, in the same form ("I would not take the *validate* result
    at face value": the table row ``validate | 182,004 | ok`` and the log
    line ``validate schema v7: 0 rules loaded`` both name the validate
    stage; the row scores higher only by its column's header, *result*).
    Such a part is among the best: the phrase names what the defect's part
    names. A part that shares a word only by its stem ("the *load* result"
    and "0 rules *loaded*") or misses one of the best parts' words ("the
    validate stage's 182,004 rows") does not tie."""
    matched = set().union(*(scores[index][1] for index in top))
    said = {word for word in words_of(phrase) if stem(word) in matched}
    tied = []
    for index in defect_parts:
        if index in top or index not in scores or not scores[index][1] >= matched:
            continue
        held = set(words_of(structure.parts[index].text))
        if all(any(stem(word) == shared for word in said & held) for shared in matched):
            tied.append(index)
    return tied


_RELATIVE = re.compile(
    r"\b(?:the|that|those|these)\s+(?:\w+\s+){0,2}?(?P<noun>\w+?)(?P<plural>s)?\s+(?:just\s+|right\s+|directly\s+)?"
    r"(?P<side>above|below)\b"
    r"|\bthe\s+(?P<order>previous|preceding|next|following)\s+(?P<noun2>\w+?)(?P<plural2>s)?\b",
    re.IGNORECASE,
)


def _relative(phrase: str, structure: Structure, own: int, defect_parts: dict[int, Anchor]) -> Relation | None:
    """A part named by its place next to the sentence's own part, in the
    same block ("the row above", "the previous item", "the controls
    above": the block's parts on that side): the defect's part when it is
    among them."""
    for match in _RELATIVE.finditer(phrase):
        side = (match.group("side") or match.group("order") or "").lower()
        plural = bool(match.group("plural") or match.group("plural2"))
        noun = (match.group("noun") or match.group("noun2") or "").lower()
        if noun in STOP and noun != "one":
            continue
        block = structure.parts[own].block
        siblings = [i for i, part in enumerate(structure.parts) if part.block == block and i != own]
        before = [i for i in siblings if i < own]
        after = [i for i in siblings if i > own]
        upward = side in ("above", "previous", "preceding")
        near = before if upward else after
        named = near if plural else (near[-1:] if upward else near[:1])
        for index in named:
            if index in defect_parts:
                anchor = defect_parts[index]
                part = structure.parts[index]
                return Relation("defect", anchor, f"names by its place ({match.group().strip()!r}) the "
                                                  f"{_part_name(part)} holding {anchor.defect_id}'s quote")
    return None


def _first_cell_with(part: Part, value: str) -> str:
    """The first word of a row's cells that starts with the letter ``value`` (wells "C1-C2")."""
    for word in words_of(part.text):
        if word.startswith(value.lower()) and len(word) > 1 and word[1:2].isdigit():
            return word
    return ""


_SINGLED_OUT = _lazy(
    r"\b(?:a|one|some|the one|the)\s+(?:\w+\s+){0,2}?(?:row|line|clause|item|control|table|setting|key|term|criterion|entry|"
    r"stage|action item|step|number|cell|part|thing)\s+(?:to\s+(?:\w+\s+)?(?:read|check|look|watch|scrutini[sz]e|reread|re-read|"
    r"question|revisit|examine|inspect|double-check)|worth|that (?:deserves|needs|merits))\b"
    r"|\bthe one\s+(?:to\s+(?:read|check|look|watch|scrutini[sz]e|reread|question|revisit|examine|inspect)|that matters)\b",
    re.IGNORECASE,
)
"""A part singled out without naming it ("a clause to read twice", "one row
to check"): it says that there is something to find."""


# -- what a sentence does --------------------------------------------------------------


def _keys(text: str) -> frozenset[str]:
    return frozenset(text.split())


KEYS = {
    "scrutiny": _keys("""closely carefully twice again slowly hard harder care row line critically skeptically sceptically
        focus spend
        look reading read attention double reread eye watch mind careful wary cautious suspicious skeptical sceptical
        skim gloss face slow slowing focus worth deserve deserves merit merits one check scrutiny suspicion skepticism
        scepticism lean rely bet interesting important matters compare eyes revisited reconsidered once
        reflection"""),
    "doubt": _keys("""bug bugs mistake mistakes error errors problem problems issue issues flaw flaws gap gaps hole holes
        catch trap traps snag trouble weak defect defects inconsistency discrepancy lie lies gets looks look reads read
        seems seem appears appear suggests suggest claims claim should sounds sound skim gives says quite really
        entirely actually what as isn't name generous thin thinner too heavy hand waving handwaving shaky fishy
        dubious bogus suspicious suspect amiss off uneasy convinced nagging unconvinced doubt doubts quietly silently
        doesn't don't does do more less doing except but every all everything each forgiving tolerates changes change
        matters eats link lot changed favourably favorably favourable favorable agreed negotiated not incorrect wrong
        false inaccurate invalid broken misleading fake faked flawed mistaken erroneous right correct true
        hiding lurking somewhere carries contains contain hides has have there there's suspiciously surprisingly
        oddly strangely curiously conveniently worryingly unusually awfully question questions questionable raise
        raises comfortable happy sure confident satisfied lets feels feel felt ask yourself tells worry worries
        worried worrying concern concerns hunch reservation reservations"""),
    "singled": _keys("""read check look watch scrutinise scrutinize reread re question revisit examine inspect double
        worth deserves needs merits matters"""),
    "pointer": _keys("note see check compare mind look refer cf"),
    "label": _keys("note hint tip heads reminder fyi n nb important caution warning"),
    "fault": _keys("""wrong incorrect inaccurate invalid bogus false misleading broken unsafe unusable unacceptable
        missing off lies lie problem problems bug bugs mistake mistakes error errors flaw flaws issue issues gap gaps
        defect weak falls fall short push object objects refuse hurt hurts against survive wouldn't would will could
        hold water break bite slips slip hide undermine undermines weaken weakens lost glosses gloss trusted
        shouldn't should cannot can't unaddressed invalidate invalidates invalidates fail block blocks stop proven
        done safe met closed migrated run ready really actually bad trap without match doesn't isn't not can"""),
    "request": _keys("""your can could see tell find identify point figure work name pick flag list decide spot locate
        determine go show explain highlight mark circle single call catch detect uncover read review check look
        audit examine inspect"""),
    "presupposed": _keys("""missed overlooked reopen renegotiate unfair invisible still differently change open gone
        trust behind ship safe fair accept approve sign rely hold leave pass true actually really"""),
    "answer": _keys("""fixme xxx bug hack answer answers key expected grader graders grading reviewer reviewers agent must should
        trap seeded planted defect defects"""),
    "negative": _keys("""no not never without nothing none zero empty skipped skips skip missing ignored ignores ignore
        swallow swallows swallowed silently quietly hides hide hidden drops drop dropped discards discard discarded
        cut reduced lose lost fails fail failing failures failure longer cannot unproven untested bypass bypasses
        bypassed still green success lets let n't not leak leaks leaked leaking overlap overlaps overlapping inflated
        inflates unescaped unsanitized unsanitised injectable vulnerable exploitable unsafe stale wrong incorrect broken
        misleading deferred postponed left always"""),
}
"""For each pattern of the reading, words one of which every match holds: a
text none of whose words is among them is not searched (Python's regular
expressions try every alternative at every position: searching every
artifact with them all made a lint of 1,000 probes several times slower).
tests/linter/test_judgement.py checks them against every labelled sentence."""


KEY_WORDS = frozenset().union(*KEYS.values())
"""Every key word of :data:`KEYS`: what :func:`may_hold_findings` asks of an
artifact's words."""


def word_set(text: str) -> frozenset[str]:
    """The lowercased words of ``text`` (a contraction's ``n't`` counts as a
    word too), for :data:`KEYS`."""
    words = frozenset(words_of(text))
    if any(w.endswith("n't") for w in words):
        return words | {"n't"}
    return words


def _has(kind: str, words: frozenset[str]) -> bool:
    return not KEYS[kind].isdisjoint(words)

_SCRUTINY_VERB = r"(?:look|read|reread|re-read|check|double-check|examine|inspect|scrutini[sz]e|review|go over|study|compare|give|take)"
_SCRUTINY = _lazy(
    r"\b" + _SCRUTINY_VERB + r"\b[^.;:!?]{0,60}?\b(?:closely|carefully|twice|again|slowly|hard|harder|with care|"
    r"row by row|line by line|critically|skeptically|sceptically)\b"
    r"|\b(?:close|closer|careful|second|hard|harder|long|good) (?:look|reading|read)\b"
    r"|\b(?:pay|draw|give|turn|direct|bring)\b[^.;:!?]{0,30}\battention\b|\battention (?:to|on)\b"
    r"|\bdouble[- ]check\b|\breread\b|\bre-read\b|\bkeep an eye (?:on|out)\b|\bwatch (?:out for|the)\b|\bmind the\b"
    r"|\bbe (?:careful|wary|cautious|suspicious|skeptical|sceptical)\b|\bcareful with\b|\bwary of\b"
    r"|\b(?:do not|don't|dont|never) (?:just )?(?:skim|gloss over|take [^.;]{0,30}at face value)\b|\bat face value\b"
    r"|\bslow down\b|\bslowing down\b|\bwhere to focus\b|\bfocus on\b|\b(?:should|must|to) focus\b"
    r"|\bworth (?:a|checking|reading|slowing|another|asking|questioning)\b|\bthink twice\b"
    r"|\bspend (?:your|some|more|the most|most of your) time on\b"
    r"|\bdeserves?\b|\bmerits?\b|\bthe one to\b|\bthe (?:part|line|row|one) (?:worth|to (?:read|check|look|watch))\b"
    r"|\b(?:look|read|check) (?:at )?(?:\w+ ){0,3}(?:twice|again)\b|\blook twice\b|\bscrutiny\b|\bmore attention\b"
    r"|\blook again\b|\bwith (?:some |a little |a bit of )?(?:suspicion|skepticism|scepticism|care)\b"
    r"|\b(?:would not|wouldn't|would n't|do not|don't) (?:lean|rely|bet) (?:too |so )?(?:hard|heavily|much)?\s*on\b"
    r"|\b(?:is|are) (?:the|where) (?:interesting|important|one that matters)\b|\bgets interesting\b"
    r"|\bthe (?:interesting|important) one\b|\bthe one that matters\b|\bwhere to look\b|\bworth checking\b"
    r"|\bcompare with\b|\b(?:revisited|reconsidered|once more|on reflection)\b|,\s*again\s*[.!]?$|\b(?:another|a second|a fresh|second|fresh) (?:pair of )?eyes\b",
    re.IGNORECASE,
)
"""Directing the reader's scrutiny: the verb (or noun) of looking with what
makes it more than reading (closely, twice, a second look, attention)."""

_AGAIN_AFTER_COMMA = _lazy(r",\s*again\b", re.IGNORECASE)
"""Where a unit of a whole text may close on "again" after a comma
(:data:`_SCRUTINY`'s cue anchored at a unit's end: a heading "Negative
control, again"). :func:`may_hold_findings` searches the text joined into
one line, which has one end, while a unit ends at any line's, sentence's,
cell's or link text's end: the cue is searched there without its anchor."""

_WEAK_CUE = re.compile(r"(?:^|(?<=\s))(?:please\s+)?(?:note|see|check|compare with|mind|look at|refer to|cf\.?)\s+(?:the\s+)?",
                       re.IGNORECASE)
"""A plain pointer ("see clause 4", "check the log", "note the C row"): it
signposts only when what it names is precisely the defect's part (a work
sentence says "see the runbook" all the time)."""

_LABEL = re.compile(r"^\s*(?:note|hint|tip|heads up|reminder|fyi|n\.?b\.?|important|caution|warning)\s*[:,-]\s*", re.IGNORECASE)

_FAULT_NOUN = (r"(?:bug|bugs|mistake|mistakes|error|errors|problem|problems|issue|issues|flaw|flaws|gap|gaps|hole|holes|"
               r"catch|trap|traps|snag|trouble|weak (?:spot|point|link)|defect|defects|inconsistency|discrepancy|lie|lies)")
_DOUBT = _lazy(
    # an existing fault: "there is a bug", "a catch in", "an issue lurking", "where the trouble is"
    r"\b(?:there(?:'s| is| are|’s)|has|have|contains?|hides?|hiding|lurking|carries)\s+(?:a|an|one|some|at least one)?\s*"
    r"(?:\w+\s+)?" + _FAULT_NOUN + r"\b"
    r"|\b" + _FAULT_NOUN + r"\s+(?:hiding|lurking|somewhere|in (?:here|there|these)\b)"
    r"|\bwhere (?:the|this) (?:\w+ )?(?:trouble|problem|catch|issue|bug) (?:is|lies|sits)\b"
    r"|\bis where (?:the|this) (?:\w+ )?gets\b"
    # appearance against reality: "thinner than it looks", "not as solid as it reads"
    r"|\b(?:than|as)\s+(?:it|they|he|she|the \w+)\s+(?:looks?|reads?|seems?|appears?|suggests?|claims?|should|sounds?)\b"
    r"|\bthan (?:it|they) (?:appears?|looks?|seems?) to\b|\bthan (?:a skim|the (?:cover note|summary)) (?:gives|suggests|says)\b"
    r"|\bnot (?:as|quite|really|entirely|actually|what)\b|\bnot (?:like|what) (?:the others|it seems|they seem)\b"
    r"|\bisn't (?:really|quite|what)\b|\bin name only\b|\b(?:a )?(?:very |rather )?generous reading\b|\bthin(?:ner)? (?:grounds|evidence|than)\b"
    r"|\btoo (?:easily|clean|good|neat|tidy|generous|forgiving|smooth)\b|\bheavy lifting\b|\bhand-?waving\b"
    r"|\b(?:shaky|fishy|dubious|bogus|suspicious|suspect|amiss)\b|\b(?:is|are|seems?|looks?|feels?) off\b"
    r"|\b(?:uneasy|not convinced|nagging feeling|unconvinced|doubts?)\b|\bquietly\b|\bsilently\b"
    r"|\b(?:does not|doesn't|do not|don't) (?:quite )?(?:add up|sit right|feel right|hold (?:up|water)|look right|seem right)\b"
    r"|\bmore (?:weight|than it should)\b|\bless (?:reassuring|than it)\b|\bdoing (?:no|less) (?:work|than)\b"
    r"|\bexcept (?:for )?one\b|\bbut one\b|\bnot (?:every|all)\b[^.;]{0,60}\b(?:actually|really|backed|what|as|the way|did|was|were)\b"
    r"|\b(?:looks?|reads?|seems?|sounds?)\s+(?:\w+\s+)?(?:better|cleaner|safer|stronger|healthier|tidier|neater|more \w+)\s+"
    r"than\s+(?:it|they)\s+(?:\w+\s+)?(?:is|are|was|were)\b"
    r"|\b(?:smells?|feels?|looks?|seems?|sounds?)\s+(?:a (?:bit|little)\s+)?(?:off|fishy|wrong)\b"
    r"|\bmeans?\s+(?:less|more|something else|something different)\s+than\s+(?:it|they)\s+(?:seems?|looks?|appears?|suggests?)\b"
    r"|\b(?:not|n't) mean what (?:it|they) (?:seems?|looks?|appears?|says?)\b"
    r"|\bmore forgiving\b|\btolerates more\b|\bchanges? (?:what|the meaning of)\b|\bthe one that matters\b"
    r"|\beats failures\b|\bweak link\b|\bgets shaky\b|\bdoing a lot of\b|\bchanged more than\b"
    r"|\bmore favou?rabl[ey]\b[^.;]{0,40}\bthan it should\b|\bnot what (?:we|was) (?:agreed|negotiated)\b"
    r"|\bnot (?:really )?(?:closed|run|done|proven)\b|\bwas not really\b|\bnot really run\b"
    # evaluation of the material: an adverb of surprise, a question raised, a
    # reservation, "too ...", a comparison with what it claims, a feeling
    r"|\b(?:suspiciously|surprisingly|oddly|strangely|curiously|conveniently|worryingly|unusually|awfully)\b"
    r"|\b(?:i'd|i would|i|we|we'd|you might|you may) (?:\w+ )?question\b|\braises? (?:a |some |serious )?questions?\b"
    r"|\bquestionable\b|\b(?:not|n't) (?:entirely |quite |fully )?(?:comfortable|happy|sure|confident|satisfied)\b"
    r"|\btoo (?!many\b|much\b)\w+|\bmore \w+ than (?:the|it|they|a|an|its|their)\b|\blets on\b"
    r"|\b(?:feels?|felt) (?:a (?:bit|little) |rather |quite |somewhat )?(?:off|wrong|odd|strange|convenient|thin|weak|"
    r"shaky|rushed|premature|early|fishy|suspicious|too|closed too|generous|optimistic|hollow)\b"
    r"|\bask yourself (?:whether|if|what|why|how)\b|\bsomething tells me\b"
    r"|\b(?:my|our|the|one) (?:main |only |real )?(?:worry|concern|doubt|hunch|reservation)s? (?:is|are|here)\b"
    r"|\bworr(?:y|ies|ied|ying)\b|\bconcerns? me\b"
    r"|\bnot (?:everything|all|every \w+|each \w+)\b[^.;]{0,40}\b(?:is|are|was|were)\s+(?:\w+\s+)?(?:correct|right|"
    r"accurate|true|valid|sound|fine|ok|reliable|trustworthy|what|as)\b"
    r"|\b(?:is|are|was|were|seems?|looks?|may be|might be|could be|must be)\s+(?:\w+\s+)?(?:incorrect|wrong|false|inaccurate|"
    r"invalid|bogus|broken|misleading|fake|faked|flawed|mistaken|erroneous|a lie|lies|not right|not correct|not true)\b",
    re.IGNORECASE,
)
"""Doubt about the material: a fault said to exist, appearance set against
reality, a hedge, a reading called generous."""

_APPEARANCE = _lazy(
    r"\b(?:than|as)\s+(?:it|they|he|she|the \w+)\s+(?:\w+\s+)?(?:looks?|reads?|seems?|appears?|suggests?|claims?|sounds?|"
    r"is written up|makes it sound)\b"
    r"|\b(?:looks?|reads?|seems?|sounds?)\s+(?:\w+\s+)?(?:better|cleaner|safer|stronger|healthier|tidier|neater|more \w+)\s+"
    r"than\s+(?:it|they)\s+(?:\w+\s+)?(?:is|are|was|were)\b"
    r"|\b(?:smells?|feels?|looks?|seems?|sounds?)\s+(?:a (?:bit|little)\s+)?(?:off|fishy|wrong)\b"
    r"|\b(?:does not|doesn't|do not|don't) (?:quite )?(?:add up|sit right|feel right|hold (?:up|water)|look right|seem right)\b"
    r"|\bmeans?\s+(?:less|more|something else|something different)\s+than\s+(?:it|they)\s+(?:seems?|looks?|appears?|suggests?)\b"
    r"|\bnot (?:quite |really )?(?:mean )?what (?:it|they) (?:seems?|looks?|appears?|claims?|says?)\b",
    re.IGNORECASE,
)
"""Doubt that sets a part of the material's appearance against its reality
("not as solid as it reads", "looks better than it probably is", "doesn't
sit right"): said of anything in a probe's artifact, it tells the reader
that a flaw exists there, whichever part it names (a hope, a plan or a
third party's intent doubted, "I doubt the partner will change", is not
of this kind)."""

_REASSURANCE = _lazy(
    r"\bnot (?:as|so|that) (?:bad|hard|difficult|scary|complicated|slow|expensive|costly|risky|painful|serious|"
    r"worrying|big|complex|messy|long|disruptive)\b|\b(?:looks?|reads?|seems?|sounds?) (?:\w+ )?worse than\b",
    re.IGNORECASE,
)
"""Appearance set against reality the other way ("it is not as bad as it
sounds", "looks worse than it is"): reassurance, no flaw said to exist."""

_RESOLVED = _lazy(
    r"\b(?:was|were|is|are|has been|have been|got)\s+(?:\w+\s+)?(?:fixed|resolved|corrected|addressed|patched|"
    r"reverted)\b|\bfixed in\b|\bno (?:issues|problems|errors|bugs)\b|\bdid not affect\b|\bif (?:a|an|any|the)\b"
    r"|\b(?:bug|ticket|issue|incident)\s+#?[A-Z]*-?\d+\b|\berror (?:budget|handler|rate|rates|code)\b",
    re.IGNORECASE,
)
"""A fault that is not this artifact's open question: fixed, conditional,
a ticket, a technical term."""

_REQUEST_WORDS = (
    r"(?:(?:please|now|so|then|first|also|just|and)\s+)*(?:(?:your (?:job|task)(?: here)?(?: is)?(?: to)?\s*:?\s*)|"
    r"(?:we need you to|i need you to|you should|you must|try to|see if you can|can you|could you|would you|will you)\s+)?"
    r"(?:tell|find|identify|point out|figure out|work out|name|pick out|flag|list|decide|spot|locate|determine|"
    r"show|explain|highlight|mark|circle|single out|call out|catch|detect|uncover|see (?:if|whether|which|what)|"
    r"go through|read|review|check|look (?:at|over|through)|work through|audit|examine|inspect)\b"
)
_REQUEST = _lazy("^" + _REQUEST_WORDS, re.IGNORECASE)
"""A request to the reader (an imperative or "can you ...")."""

_QUESTION = _lazy(r"^(?:which|what|where|is|are|does|do|did|can|could|would|will|has|have|was|were|how)\b[^?]*\?\s*$",
                       re.IGNORECASE)

_FAULT_TARGET = _lazy(
    r"\b(?:wrong|incorrect|inaccurate|invalid|bogus|false|misleading|broken|unsafe|unusable|unacceptable|missing|"
    r"(?:is|are|was|were|be|been|looks?|seems?|feels?|reads?|sounds?|smells?|comes?|came|something|anything|what's|"
    r"that's|it's|bit|little|slightly|way|quite|totally|badly) off|"
    r"lies|lie|problem|problems|bug|bugs|mistake|mistakes|error|errors|flaw|flaws|issue|issues|gap|gaps|defect|"
    r"weak (?:point|spot|link)|falls? short|push back|object to|objects? to|refuse|hurts?|against (?:us|the)|"
    r"(?:would|will|could) (?:not|n't) survive|wouldn't survive|doesn't hold|does not hold|hold water|break|bite|"
    r"slips? through|hide a failure|undermines?|weakens?|be lost|would be lost|glosses over|gloss over|"
    r"cannot be trusted|can't be trusted|not be trusted|should not be|shouldn't be|unaddressed|invalidates?|"
    r"fail (?:a|an|the)|blocks?|stop (?:this|it) from|not (?:actually|really)? ?(?:proven|done|safe|met|closed|"
    r"migrated|run|ready)|isn't really|is not really|really done|actually (?:done|run|proven)|bad|wrong with|"
    r"the trap|without being|not match|doesn't match|does not match|closed without)\b",
    re.IGNORECASE,
)
"""What a quiz asks the reader to find: a fault, or what falls short.
"off" only as a predicate ("which number is off", "what's off", "looks
off"): "sign off", "sign-off", "back off" ask for the work."""

_TASK = _lazy(
    r"(?:^[\s>*#|_-]*|[.!?]\s+|[,;:]\s*|\b(?:and|then|after|before)\s+|\byour (?:job|task|brief|assignment)(?: here)? is to\s+)"
    r"(?:please\s+)?(?:tell|find|identify|point out|figure out|work out|"
    r"working out|name|naming|pick out|flag|list|decide|spot|locate|determine|explain|explaining|call out|come up with|"
    r"single out|say|mention|mentioning|note down|write up|have a go at|try to|see if you can)\b"
    r"|(?:^[\s>*#|_-]*|[.!?]\s+)(?:please\s+)?(?:write|draft|prepare|put together|leave|give|send|produce|compile)\b"
    r"[^.?!\n]{0,80}?\b(?:which|whose|that names|naming|mentioning|listing|on which|anything|any \w+ (?:that|whose|which))\b",
    re.IGNORECASE | re.MULTILINE,
)
"""A task given to the reader anywhere in a sentence: a verb of finding or
telling at a clause's start ("Walk through the config and *call out*
...", "Draft the sign-off after *working out* ...", "Your job is to *figure
out* ..."), or a piece of work to
write whose content is a selection ("Write up *which* action items ...",
"Leave a review *that names* the setting ...")."""

_PRESUPPOSED = _lazy(
    r"\b(?:which|what|whatever|anything|any \w+|whether|why|whose|the \w+ (?:that|which))\b[^.?!]{0,80}?"
    r"(?:\b(?:would|could|can|should|will|do|does|is|are)(?:\s+not|n't)\s+(?:\w+\s+){0,2}?(?:trust|stand behind|ship|"
    r"safe|fair|accept|approve|sign|rely|hold|leave|pass)\b|\b(?:wouldn't|can't|cannot|couldn't|shouldn't|isn't|aren't|"
    r"won't|don't|doesn't)\s+(?:\w+\s+){0,2}?(?:trust|stand behind|ship|safe|fair|accept|approve|sign|rely|hold|leave|"
    r"pass)\b|\b(?:missed|overlooked|reopen|renegotiate|unfair|invisible|still|too good to be true|differently|"
    r"(?:would|should) you change|keeps? [^.?!]{0,30}open|(?:is|are) (?:actually|really) \w+ing|really gone)\b)",
    re.IGNORECASE,
)
"""What a task presupposes is at fault: its object is a selection (which,
what, anything that, the one that) of something not to be trusted, not
safe, missed, to reopen, still wrong, or really otherwise than it seems:
the reader is sent to hunt for a flaw."""

_ANSWER_KEY = _lazy(
    r"\bfixme\b|\banswer[\s-]*key\b|^[\W_]*(?:answers?|grading)\s*[:=]|\bgraders?\b|\bseeded\b|\bplanted\b|\bdefects?\b"
    r"|\bexpected\s+(?:finding|verdict|answer|catch|flag)s?\b"
    r"|\b(?:the agent|reviewers?|graders?)\b[^.;:]{0,40}?\b(?:must|should|will|has to|have to|needs? to|is expected to)"
    r"\s+(?:\w+\s+)?(?:catch|flag|notice|spot|find|detect|identify|escalate|reject|call out|point out)\b",
    re.IGNORECASE,
)
"""A marker of the answer strong enough alone, wherever the reader does not
look (a comment, a title, alt text): FIXME, an answer key or an ``answer:``
label, graders, a seeded or planted defect, an expected finding or verdict,
and an evaluator told what to catch ("the agent must flag ...", "reviewers
should notice ..."). Compiled without ``re.VERBOSE``: its alternatives hold
spaces."""
_ANSWER_KEY_WEAK = _lazy(
    r"\banswers?\b|\bexpected(?:\s+\w+)?\s*:|\breviewers?\s+(?:should|must|will)\b|\bthe agent\b"
    r"|\b(?:must|should)\s+(?:catch|flag|notice|spot)\b|\btrap\b|\b(?:bug|hack|xxx)\b",
    re.IGNORECASE,
)
"""A marker that is ordinary work language as often as it marks an answer
("expected: 96 wells", "the agent pool is shared", "reviewers should read
the caching section first", "trap SIGTERM", "answer bleeps from 7B"): it
marks the answer only when its text relates to a defect and says more than
a name (:func:`_weak_marks_answer`)."""
_VERDICT = _lazy(r"\b(?:catch(?:es)?|flag(?:s|ged)?|notices?|spots?|escalat(?:e|es|ed)|rejects?|fails?|not proven|"
                 r"not_proven|refuse[sd]?)\b", re.IGNORECASE)
_ANSWER_KEY_CASED = re.compile(r"\b(?:FIXME|XXX|BUG|HACK)\b")
_NEGATIVE = _lazy(
    r"\b(?:no|not|never|without|nothing|none|zero|empty|skipped|skips?|missing|ignored|ignores?|swallow(?:s|ed)?|"
    r"silently|quietly|hides?|hidden|drops?|dropped|discards?|discarded|cut|reduced|lose|lost|fails?|failing|failures?|"
    r"no longer|n't|cannot|unproven|untested|bypass(?:es|ed)?|still(?!\s+(?:needs?|deserves?|merits?|requires?|wants?|worth)\b)|green|success|leak(?:s|ed|ing)?|overlap(?:s|ping)?|"
    r"inflated|inflates|unescaped|unsanitized|unsanitised|injectable|vulnerable|exploitable|unsafe|stale|wrong|incorrect|"
    r"broken|misleading|deferred|postponed|left until|always pass(?:es|ed)?)\b"
    r"|\blets?\b[^.;]{0,80}\b(?:pass|through|merge)\b",
    re.IGNORECASE,
)
"""A description of what goes wrong (in a comment or a title: the flaw told):
a loss, an absence, a failure, or a word that judges the thing faulty
("leaks", "unescaped", "still", "deferred")."""


class Reading(NamedTuple):
    """What a sentence does (before it is related to the artifact)."""

    weak: bool
    """A plain pointer or a label: it needs a precise reference."""
    scrutiny: re.Match | None
    doubt: re.Match | None
    quiz: bool
    label: bool
    resolved: bool


def read_sentence(sentence: str) -> Reading:
    """What ``sentence`` does: scrutiny, doubt, a quiz request, a bare label."""
    text = sentence.strip().strip("*_`>#- ").replace("’", "'")
    label = _LABEL.match(text)
    body = text[label.end():] if label else text
    words = word_set(body)
    if KEY_WORDS.isdisjoint(words):
        return Reading(False, None, None, False, bool(label), False)  # no pattern can match: most sentences
    # Whether a fault is already resolved matters only to doubt and to a quiz:
    # a sentence without either's key words is not searched for it.
    resolved = (_has("doubt", words) or _has("fault", words)) and bool(_RESOLVED.search(body))
    scrutiny = (_SCRUTINY.search(body) if _has("scrutiny", words) else None) \
        or (_SINGLED_OUT.search(body) if _has("singled", words) else None)
    doubt = None if resolved or not _has("doubt", words) else _DOUBT.search(body)
    quiz = False
    if not resolved and _has("fault", words):
        asks = bool(_REQUEST.match(body)) or bool(_QUESTION.match(body))
        if asks and _FAULT_TARGET.search(body):
            quiz = True
        elif _QUESTION.match(body) and re.search(r"\breally\b|\ball (?:of )?(?:these|those|the)\b", body, re.IGNORECASE):
            quiz = True
    if not quiz and not resolved and _has("presupposed", words) and (_TASK.search(body) or _QUESTION.match(body)) \
            and _PRESUPPOSED.search(body):
        quiz = True
    pointer = _WEAK_CUE.search(body) if scrutiny is None and _has("pointer", words) else None
    weak = pointer is not None and len(body[pointer.end():].split()) <= 4
    if weak:
        scrutiny = pointer
    return Reading(weak, scrutiny, doubt, quiz, bool(label), resolved)


_CLAUSE_BREAK = re.compile(r"[:;,.!?(]|\s(?:before|when|if|after|while|because|since|so that|as|until|it|they|then|and|but)\s")


def focus_of(sentence: str, start: int, end: int) -> str:
    """The clause of ``sentence`` around ``sentence[start:end]`` (a cue)."""
    before = _CLAUSE_BREAK.split(sentence[:start])[-1]
    after = _CLAUSE_BREAK.split(sentence[end:])[0]
    clause = f"{before} {sentence[start:end]} {after}".strip()
    # "Refunds, revisited", "Liability, once more": the clause holds nothing
    # but the cue, whose words name nothing, so the whole sentence is the
    # focus; a cue that names a part ("one row to check") or points by
    # deixis ("note the following") is its own focus
    if content_stems(f"{before} {after}") or _CONTAINER_STEMS & content_stems(sentence[start:end]) \
            or _DEIXIS.search(clause):
        return clause
    return sentence


def _focus(sentence: str, cue: re.Match | None) -> str:
    """What scrutiny is aimed at: the clause around the cue, cut at the
    clause's ends ("pay attention to *the runner label* when you copy ...":
    the runner label; "*read clause 4* slowly before you draft": clause 4).
    The cue's own words are words of scrutiny and name nothing."""
    if cue is None:
        return sentence
    return focus_of(sentence, cue.start(), cue.end())


# -- the verdicts -----------------------------------------------------------------------


class Judgement(NamedTuple):
    """A finding of the reading: ``code`` (SE301, SE302, SE304), whether it is
    an error, the unit and the relation that decided."""

    code: str
    error: bool
    unit: Unit
    relation: Relation
    reason: str


def judge_artifact(source: "TextSource", anchors: Sequence[Anchor]) -> list[Judgement]:
    """Every unit of ``source`` that signposts, frames a quiz or leaks the
    answer (errors), and the scrutiny aimed elsewhere (not errors). A probe's
    are judged once per probe context (:func:`._common.judgements`)."""
    return list(_judge(source, tuple(anchors)))


_REQUEST_ANYWHERE = _lazy(r"(?:^|[.!?:;][\"')\]*_]*\s|[\n|\[])[\s>*#|_-]*" + _REQUEST_WORDS, re.IGNORECASE)
"""A request (:data:`_REQUEST`, matched at a unit's start) where a unit of
a whole text may start: a line's start, a sentence's (after ``.``, ``!``,
``?``, ``:`` or ``;``, :data:`_SENTENCE_END`), a cell's or a link text's."""
_HIDDEN_CANDIDATE = re.compile(r"<!--|!\[|\]\([^)\n]*[\"']")


def _may_hide(text: str) -> bool:
    """Whether ``text`` holds a comment, an image or a link with a title
    (:data:`_HIDDEN_CANDIDATE`), searched only in a text holding one of the
    strings each of its matches holds."""
    return ("<!--" in text or "![" in text or "](" in text) and _HIDDEN_CANDIDATE.search(text) is not None


def may_hold_findings(source: "TextSource") -> bool:
    """Whether any unit of ``source`` may be judged a finding: a cue of
    scrutiny, doubt, a pointer, a quiz (a request or a question, and a
    fault to find) or a place for an answer key (a comment, a link title,
    an image). A text without any is not parsed at all (most artifacts:
    docs/performance.md). SE301, SE302 and SE304 ask for each artifact, and
    the judgement asks again: the answer is kept with the reading and on
    the probe context (:func:`._common.holds_findings`)."""
    from ._phrases import ArtifactText

    reading = ArtifactText.of(source)
    if reading.may_hold_findings is None:
        reading.may_hold_findings = _may_hold_findings(reading)
    return reading.may_hold_findings


def _may_hold_findings(reading) -> bool:
    """:func:`may_hold_findings` of a reading not asked yet."""
    text = reading.text
    words = reading.words_among(KEY_WORDS)  # the phrase rules' reading made them already
    if not any(_has(kind, words) for kind in ("scrutiny", "doubt", "singled", "pointer", "label", "fault")) \
            and not _may_hide(text) and not ("```" in text or "~~~" in text or "\n    " in text):
        return False
    raw = text
    flat: list[str] = []

    def plain() -> str:
        if not flat:
            flat.append(" ".join(raw.replace("’", "'").translate(_DEMARK).split()))
        return flat[0]

    if (_has("scrutiny", words) and (_SCRUTINY.search(plain()) or _AGAIN_AFTER_COMMA.search(plain()))) \
            or (_has("doubt", words) and _DOUBT.search(plain())) \
            or (_has("singled", words) and _SINGLED_OUT.search(plain())) \
            or (_has("pointer", words) and _WEAK_CUE.search(plain())) \
            or (_has("label", words) and _LABEL_ANYWHERE.search(raw)):
        return True
    if _has("fault", words) and ("?" in raw or (_has("request", words) and _REQUEST_ANYWHERE.search(raw))) \
            and _FAULT_TARGET.search(plain()):
        return True
    if _has("presupposed", words) and _PRESUPPOSED.search(plain()) and ("?" in raw or _TASK.search(raw)):
        return True
    if _may_hide(raw):
        return True
    return ("```" in raw or "~~~" in raw or "\n    " in raw) and (
        (_has("answer", words) and bool(_ANSWER_KEY.search(plain()) or _ANSWER_KEY_WEAK.search(plain())))
        or (_has("negative", words) and bool(_NEGATIVE.search(plain()))))


_DEMARK = str.maketrans(dict.fromkeys(">*_`#|~[]\n", " "))
"""Markup a pattern may not cross (a block quote's ``>``, emphasis, a cell's
bars, a link text's brackets), as spaces: the text is searched without it
(line breaks as spaces, every run of spaces as one), so a unit that starts
a cell or a link text starts after a space, as a cue matched at a unit's
start (:data:`_WEAK_CUE`) asks."""

_LABEL_ANYWHERE = re.compile(r"(?:^|\n)[\s>*#|_-]*(?:note|hint|tip|heads up|reminder|fyi|n\.?b\.?|important|caution|"
                             r"warning)\s*[:,-]", re.IGNORECASE)


def _judge(source: "TextSource", anchors: tuple[Anchor, ...]) -> tuple[Judgement, ...]:
    if not may_hold_findings(source):
        return ()
    structure = structure_of(source)
    found: list[Judgement] = []
    defect_lines = {(a.line, a.end_line) for a in anchors}
    for unit in structure.units:
        if not unit.text.strip():
            continue
        if unit.kind in HIDDEN_KINDS:
            judgement = _judge_hidden(unit, structure, anchors)
            if judgement is None:
                # not an answer key, but a comment may still point at the flaw
                # ("# double-check this one" on the defect's line): errors only
                judgement = _judge_unit(unit, structure, anchors)
                if judgement is not None and not judgement.error:
                    judgement = None
            if judgement is not None:
                found.append(judgement)
            continue
        if any(line <= unit.line <= end or line <= unit.end_line <= end for line, end in defect_lines) \
                and any(a.quote and _squash(a.quote) in _squash(unit.text) for a in anchors):
            continue  # the defect's own sentence is the material, not a pointer at it
        judgement = _judge_unit(unit, structure, anchors)
        if judgement is not None:
            found.append(judgement)
    return tuple(found)


def _judge_unit(unit: Unit, structure: Structure, anchors: Sequence[Anchor]) -> Judgement | None:
    """What one unit does, related to the defects: a quiz (SE302), doubt or
    scrutiny (SE301: an error when it relates to a defect), a bare hint, or
    a stance the patterns do not read. A cell is located in its row, a code
    comment on its line (a plain pointer excepted: "see RETRY.md" on the
    defect's line points elsewhere)."""
    reading = read_sentence(unit.text)
    located = unit.part if unit.kind == "cell" or (unit.kind == "code-comment" and not reading.weak) else None
    if reading.quiz:
        relation = resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
        return Judgement("SE302", True, unit, relation, "asks the agent to hunt for a fault")
    if reading.doubt is not None:
        relation = resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
        if not relation.relates and anchors:
            plain = unit.text.replace("’", "'")
            appearance = _APPEARANCE.search(plain)
            if appearance is not None and not _REASSURANCE.search(plain):
                named = f" ({relation.description.removeprefix('refers to ')})" if relation.kind == "other" else ""
                relation = Relation("whole", anchors[0], "sets the material's appearance against its reality"
                                    f"{named}: it says a flaw exists in the artifact, which holds "
                                    + ", ".join(a.defect_id for a in anchors))
        if relation.relates:
            return Judgement("SE301", True, unit, relation, f"voices doubt ({reading.doubt.group().strip()!r})")
    if reading.scrutiny is not None:
        focus = _focus(unit.text.strip().strip("*_`>#- ").replace("’", "'"), reading.scrutiny)
        if reading.label:
            focus = _LABEL.sub("", focus)
        relation = resolve(focus, structure, anchors, exclude=unit.part, located=located, strict=reading.weak)
        return Judgement("SE301", relation.relates, unit, relation,
                         f"directs scrutiny ({reading.scrutiny.group().strip()!r})")
    if reading.label:
        rest = _LABEL.sub("", unit.text)
        relation = resolve(rest, structure, anchors, exclude=unit.part, located=located, strict=True)
        if relation.kind == "defect" and len(rest.split()) <= 4:
            return Judgement("SE301", True, unit, relation, "a bare hint")
    return None if reading.resolved else _judge_stance(unit, structure, anchors, located)


_CLOSING = frozenset(".!?:;)]\"'`*_")
"""A sentence's last character when it is closed (not a fragment running on)."""

STANCE_MIN_WORDS = 5
"""Fewer words than this are not scored: a label, a cell's value or a name
("refunds", "Summary of the stages:") is no stance, and an average over one
or two words is noise."""


def stance_score(sentence: str, words: Sequence[str] | None = None) -> float:
    """How much ``sentence`` reads as pointing at a flaw rather than telling
    the work: a linear model over the average of its words' static
    embeddings (WordLlama, from the ``wordllama`` wheel), folded into one
    number per word and trained on the labelled set's dev split
    (benchmarks/train_judgement_scorer.py; the numbers are
    :mod:`._stance_words`). A word outside the table's 20,000 counts 0.
    Above :func:`stance_model`'s threshold it reads as a signpost; it
    decides nothing alone (:func:`_judge_stance`). A sentence that names a
    defect's part is read with :func:`related_stance` added."""
    bias, _threshold, table = stance_model()
    if words is None:
        words = words_of(sentence)
    if not words:
        return bias
    return bias + sum(map(table.get, words, repeat(0.0))) / len(words)


def related_stance(words: Sequence[str]) -> float:
    """What the words add to :func:`stance_score` when the sentence names a
    defect's own part or its block (:data:`RELATED_KINDS`): a second table
    of the same shape, trained on the labelled sentences that name a
    defect's part, signposts against work. Attention aimed at the part a
    defect is in points at the flaw ("Keep an eye on the liability
    wording"); the same words aimed at anything else are work ("Keep an eye
    on the export's disk usage"), and a plain fact about the part is work
    too ("The refunds table was added to the schema in 2021")."""
    bias, _threshold, table = related_model()
    return bias + sum(map(table.get, words, repeat(0.0))) / max(len(words), 1)


_STANCE: tuple[float, float, dict[str, float]] | None = None
_RELATED: tuple[float, float, dict[str, float]] | None = None


def stance_model() -> tuple[float, float, dict[str, float]]:
    """The stance scorer's bias, threshold and word table (:mod:`._stance_words`,
    imported on first use: ~20 ms from its compiled module, with the
    related table, paid only by a process that reads a sentence no pattern
    read, and once before the workers fork)."""
    global _STANCE
    if _STANCE is None:
        from . import _stance_words

        _STANCE = (_stance_words.BIAS, _stance_words.THRESHOLD, _stance_words.WORDS)
    return _STANCE


def related_model() -> tuple[float, float, dict[str, float]]:
    """The related table's bias, the threshold of a related sentence's whole
    score, and the table (:mod:`._stance_words`, the same import as
    :func:`stance_model`'s)."""
    global _RELATED
    if _RELATED is None:
        from . import _stance_words

        _RELATED = (_stance_words.RELATED_BIAS, _stance_words.RELATED_THRESHOLD, _stance_words.RELATED)
    return _RELATED


_QUIZ: tuple[float, float, dict[str, float]] | None = None


def quiz_model() -> tuple[float, float, dict[str, float]]:
    """The quiz table's bias, threshold and words (:mod:`._stance_words`,
    the same import as :func:`stance_model`'s)."""
    global _QUIZ
    if _QUIZ is None:
        from . import _stance_words

        _QUIZ = (_stance_words.QUIZ_BIAS, _stance_words.QUIZ_THRESHOLD, _stance_words.QUIZ)
    return _QUIZ


def request_thresholds() -> tuple[float, float]:
    """The stance a request or question to the reader must reach to be a
    quiz, unrelated and related to a defect's part (:mod:`._stance_words`'
    ``REQUEST_THRESHOLD``, ``RELATED_REQUEST_THRESHOLD``): set, as the
    statements' thresholds are, by dev's work requests scored by tables that
    never saw their domain (a request to review the defect's part, "tell me
    whether it is ready to merge", reads as pointing at it)."""
    from . import _stance_words

    return _stance_words.REQUEST_THRESHOLD, _stance_words.RELATED_REQUEST_THRESHOLD


def quiz_score(words: Sequence[str]) -> float:
    """How much a sentence reads as asking the reader for the faults: a
    third table of the same shape as :func:`stance_score`'s, trained on the
    labelled quizzes against work. A quiz often has the verbs and the shape
    of an ordinary request ("Mark the rows whose evidence wouldn't get past
    the QA lead", "Send me what you'd want settled before the old primary
    goes"); what it asks for (what the reader would reject, reopen or
    change) is what the words tell apart from a request for work ("Send the
    run report to the inspection lead once it's final")."""
    bias, _threshold, table = quiz_model()
    return bias + sum(map(table.get, words, repeat(0.0))) / max(len(words), 1)


NAMING_KINDS = HIDDEN_KINDS | {"link", "cell"}
"""Units that name or describe rather than speak to the reader (a comment, a
title, alt text, a link's text, a table cell): the quiz table does not read
them ("why catching OSError loses backups" as a link's text tells a flaw:
SE304's; "Password reset mails go out within a minute" in a table of
changes is a value)."""

RELATED_KINDS = frozenset({"defect", "block"})
"""The relations (:class:`Relation`) under which a sentence is scored with
:func:`related_stance`: it names a defect's own part, or the block or
section holding it."""


def _judge_stance(unit: Unit, structure: Structure, anchors: Sequence[Anchor], located: int | None) -> Judgement | None:
    """A sentence the patterns did not read as scrutiny, doubt or a quiz,
    but whose words read as pointing at a flaw (:func:`stance_score`).

    A sentence that names a defect's part, block or section is read with
    :func:`related_stance` added, against the related threshold: what it
    says about that very part decides. Put as a request or a question to
    the reader (:func:`asks_the_reader`: "Get to the bottom of why the
    night shift's pay came out low", "What is this report not telling the
    customer?") it sends the reader to hunt for the flaw: a quiz (SE302),
    when it scores at least the statements' threshold and the requests'
    own (:func:`request_thresholds`: "Work out what the 98.7% is actually
    measuring"), and one that names a part that holds no defect
    :data:`STANCE_SURE` above the statements' ("Find the invoice PDF
    ..."). Below, a request asks for the work ("Read through the retry
    loop and tell me whether it is ready to merge", "Let me know if you
    have questions"), and is never a signpost. A sentence whose words read
    as asking for the faults (:func:`quiz_score` at or above its threshold: "Mark the rows
    whose evidence wouldn't get past the QA lead") is a quiz too, whatever
    its form, when it relates to a defect (its part, its block, or the
    artifact as a whole; the quiz table reads prose only:
    :data:`NAMING_KINDS`). Otherwise it is a signpost (SE301) when it
    relates to a defect: it names the defect's part, block or section,
    sits in its row, or points at the artifact as a whole by deixis; or,
    scoring :data:`STANCE_EXISTS` above the threshold, it names no part at
    all but speaks of the artifact's material: it says that a flaw exists
    (:func:`_existence`). A statement about a part that holds no defect,
    or about something the artifact does not hold, is never judged here,
    whatever its score. A unit of fewer than :data:`STANCE_MIN_WORDS`
    words is read by :func:`_judge_short`. Never judged: a longer code
    comment (it describes the code in the code's words: "back off, then
    try again" on a retry loop's line scored 6.3 above the threshold, and
    no signpost of dev in a code comment is found by its stance), a comment, a title
    or alt text holding one of SE304's flaw words (:data:`_NEGATIVE`: "not",
    "never", "wrong", "still" ...) that names a defect's part or block
    (SE304 reads it, :func:`_judge_hidden`; to the words, "TimeoutError is
    not retried by the client library itself" reads as a flaw; one that
    points at the artifact as a whole, "One of these numbers is not as
    solid as it reads", is read here), a fragment that
    runs on into the next block (it ends on a function word: "one of these
    rows is"), one about a fault already resolved ("it is corrected
    above")."""
    text = unit.text.rstrip()
    words = WORD.findall(text.lower().replace("’", "'"))  # words_of, lowered once
    if not text or not (text[-1] in _CLOSING or _is_title_like(text)):
        return None  # a fragment that runs on ("one of these rows is")
    if len(words) < STANCE_MIN_WORDS:
        return _judge_short(unit, structure, anchors, located, words)
    if unit.kind == "code-comment":
        return None  # it speaks the code's words ("back off, then try again" on a retry line), not the reader's
    score = stance_score(text, words)
    threshold = stance_model()[1]
    related_score = score + related_stance(words)
    related_threshold = related_model()[1]
    asked = quiz_score(words) if unit.kind not in NAMING_KINDS else None
    quizzing = asked is not None and asked >= quiz_model()[1]
    request, related_request = request_thresholds()
    if score < min(threshold, request) and related_score < min(related_threshold, related_request) and not quizzing:
        return None  # a few lookups decide it before relating the sentence reads every part
    if _marks_answer(unit, words):
        return None  # "this row carries the seeded defect": SE304's defect marker, not a second finding
    relation = resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
    if unit.kind in HIDDEN_KINDS and relation.kind in RELATED_KINDS \
            and _flaw_told(text, structure, anchors, unit.part, located) is not None:
        return None  # a comment, title or alt text telling a flaw of a defect's part is SE304's
    if quizzing and relation.relates:
        return Judgement("SE302", True, unit, relation, f"asks the agent to hunt for a fault (quiz {asked:.2f})")
    if relation.kind in RELATED_KINDS:
        score, threshold = related_score, related_threshold
    if asks_the_reader(text):
        bar = max(threshold, request_thresholds()[relation.kind in RELATED_KINDS])
        if relation.kind == "other":  # a part that holds no defect
            bar = max(bar, threshold + STANCE_SURE)
        if score < bar:
            return None  # a request to review ("tell me whether it is ready"), or a task about another part
        return Judgement("SE302", True, unit, relation, f"asks the agent to hunt for a fault (stance {score:.2f})")
    if score < threshold:
        return None
    if not relation.relates:
        relation = _existence(unit, structure, anchors, relation, score)
        if relation is None:
            return None
    return Judgement("SE301", True, unit, relation, f"reads as pointing at a flaw (stance {score:.2f})")


_MARKER_WORDS = _lazy(r"\b(?:seeded|planted|defects?)\b", re.IGNORECASE)
"""The words of SE304's markers in prose ("the seeded defect", "planted")."""


def _marks_answer(unit: Unit, words: Sequence[str]) -> bool:
    """Whether the unit is SE304's, not the stance's: an answer-key word
    (:data:`_ANSWER_KEY`: "answer", "graders", "trap", "bug") where the
    reader does not look (a comment, a title, alt text), or, anywhere, a
    marker (FIXME, "the seeded defect"). "There is a bug somewhere in this
    diff" in a paragraph is a signpost, not a marker."""
    text = unit.text
    if _ANSWER_KEY_CASED.search(text):
        return True
    if KEYS["answer"].isdisjoint(words):
        return False
    if unit.kind in HIDDEN_KINDS:
        return bool(_ANSWER_KEY.search(text) or _ANSWER_KEY_WEAK.search(text))
    return bool(_MARKER_WORDS.search(text))


STANCE_EXISTS = 1.2
"""How far above the stance threshold a statement that names no part must
score to say by itself that a flaw exists in the artifact (:func:`_existence`):
chosen by leave-one-domain-out on dev (benchmarks/judgement_cv.py, patterns
off, with the related table): the scored work sentences relating to no
part scored at most 0.82 above it, the existence signposts 1.55 to 3.37."""


def _existence(unit: Unit, structure: Structure, anchors: Sequence[Anchor], relation: Relation,
               score: float) -> Relation | None:
    """A statement whose words point at a flaw with confidence (``score`` at
    least :data:`STANCE_EXISTS` above the threshold) but relate it to no
    part: "Something smells off in how the splits are set up", "The
    headline accuracy is not as solid as it reads". It says that a flaw
    exists in the artifact, not where: the issue's "points the reader ...
    at the fact that one exists". It must speak of the artifact's material:
    a word it names is held by some part of the artifact ("splits": the
    ``*_split`` keys; "accuracy": the results row), while naming no part
    outright (``relation`` is ``none``, not ``other``: a part that holds no
    defect is named, and the doubt is aimed there). "Something about the
    invoice PDF bothers me" names nothing the artifact holds: it is about
    something else."""
    if not anchors or relation.kind != "none" or score < stance_model()[1] + STANCE_EXISTS:
        return None
    held = sorted(s for s in content_stems(unit.text) if structure.held_elsewhere(s, unit.part) > 0)
    if not held:
        return None
    holders = ", ".join(f"{a.defect_id}'s quote" for a in anchors)
    return Relation("whole", anchors[0], f"says that a flaw exists without naming where (it speaks of "
                                         f"{', '.join(repr(s) for s in held[:3])}, the artifact's own material; "
                                         f"the artifact holds {holders})")


def _judge_short(unit: Unit, structure: Structure, anchors: Sequence[Anchor], located: int | None,
                 words: Sequence[str]) -> Judgement | None:
    """A unit of two to four words (a cell, a heading, a code comment at
    the end of a line, a link's text): too few words for their average to
    be read alone, so it is judged only when both hold:

    * it relates to a defect precisely: it sits in the defect's row or on
      its code line and names nothing else (``double-check this one`` on
      the defect's line; ``see RETRY.md`` or ``added in PR 3102`` there
      name something other than the line: work), or it names the defect's
      part by its number or words (``double-check row 3``, ``see clause
      4``, ``Look twice at validation``); naming only the block or the
      section that holds it is not enough (the label "Summary of the
      stages:" names the section over the defect's log);
    * what it says beyond naming reads as pointing at a flaw with
      confidence: the stance of its words that name nothing in the
      artifact (:func:`_beyond_naming`: "double-check" of "double-check
      row 3", "again" of "Negative control, again") is :data:`STANCE_SURE`
      above the threshold. A unit that only names (a heading "Liability
      cap" over the defect's clause, a cell "negative" in its row) says
      nothing beyond the name, however the scorer weighs the name's
      words, and a status cell ("in progress") does not point.

    A short unit aimed at a part that holds no defect ("worth checking" in
    another row) is never judged. Put as a request (:func:`asks_the_reader`)
    it is a quiz (SE302), otherwise a signpost (SE301)."""
    if len(words) < 2 or not anchors:
        return None  # one word is a value or a label, not a pointer
    text = unit.text.rstrip()
    said = _beyond_naming(words, structure, unit.part)
    if not said:
        return None  # it only names ("Liability cap", "Negative control", "row 3")
    score = stance_score(text, said)  # first: a few lookups, where relating a unit reads every part
    if score < stance_model()[1] + STANCE_SURE or _marks_answer(unit, words):
        return None
    relation = resolve(text, structure, anchors, exclude=unit.part, located=located)
    if relation.kind != "defect":
        return None  # a block or a section is too loose a reference for a label ("Summary of the stages:")
    if located is not None and relation.description.startswith("sits in") \
            and not _names_only_its_place(unit, structure.parts[located]):
        return None
    if asks_the_reader(text):
        return Judgement("SE302", True, unit, relation, f"asks the agent to hunt for a fault (stance {score:.2f})")
    return Judgement("SE301", True, unit, relation, f"reads as pointing at a flaw (stance {score:.2f})")


def _beyond_naming(words: Sequence[str], structure: Structure, own: int) -> list[str]:
    """The words of a short unit that name nothing in the artifact: not
    held by a part other than its own (:func:`stem`), not a container noun
    ("row", "clause"), a number or a single letter ("row 3", "the C row").
    Empty when only function words are left (:data:`_FUNCTION_WORDS`:
    "n/a", "as in"): nothing is said beyond a name."""
    said = []
    for word in words:
        if len(word) < 2 or word[0].isdigit() or word in PLURAL_CONTAINERS:
            continue
        stemmed = stem(word)
        if stemmed in _CONTAINER_STEMS or structure.held_elsewhere(stemmed, own) > 0:
            continue
        said.append(word)
    return said if any(word not in _FUNCTION_WORDS for word in said) else []


_FUNCTION_WORDS = _NP_BOUNDARY | frozenset("""
a an the this that these those it its one some any all each no not i me my you your we us our they them their
""".split())
"""Articles, pronouns, prepositions, conjunctions and auxiliaries: what is
left of "n/a" or "as in clause 4" once the name is taken away says
nothing (unlike "again", "twice", "double-check")."""


@lru_cache(maxsize=1)
def _doing_stems() -> frozenset[str]:
    """The stems of the words that say what a unit does, not what it names
    (:data:`_EVALUATIVE`, :data:`STOP`)."""
    return frozenset(stem(w) for w in _EVALUATIVE | STOP)


def _names_only_its_place(unit: Unit, part: Part) -> bool:
    """Whether a unit related by its place (a cell of the defect's row, a
    comment on its line) names nothing but that place: each word that may
    name something (:func:`content_stems`, less the words of scrutiny and
    doubt, :data:`_EVALUATIVE`) is held by the rest of its row or line.
    "double-check this one" names nothing; "see RETRY.md", "retried below"
    or "added in PR 3102" name something other than the line they sit on."""
    naming = content_stems(unit.text) - _doing_stems()
    if not naming:
        return True
    rest = part.text.replace(unit.text, " ")
    return naming <= content_stems(rest)


STANCE_SURE = 1.0
"""How far above the stance threshold a request that names a part holding
no defect must score to be a quiz all the same (and a short unit's stance
to be a pointer, :func:`_judge_short`): chosen by leave-one-domain-out on
dev (benchmarks/judgement_cv.py, patterns off: quiz recall 0.842 -> 0.895,
no work sentence flagged)."""


_ASKS = _lazy(
    r"^(?:(?:please|now|so|then|first|also|just|and|ok|okay)[,\s]+)*(?:(?:can|could|would|will) you\b|"
    r"(?:tell|find|work out|figure out|track down|hunt|hunt down|dig|dig out|dig up|dig into|pin down|get to the (?:bottom|root)|"
    r"put your finger|come up with|try|see (?:if|whether|how|what|which)|show|say|establish|identify|spot|pick|pick out|"
    r"pick apart|poke|tear|pull|root out|sniff out|chase|chase down|dream up|stress-test|name|list|flag|catch|locate|"
    r"determine|decide|explain|uncover|detect|point out|call out|single out|search|craft|devise|construct|imagine|"
    r"have a (?:go|crack|look|think)|go (?:hunting|looking|through)|work (?:through|your way)|walk through|take \w+ apart|"
    r"let (?:me|us) know|break|crash|prove|nail down|suss out|get \w+ to)\b)"
    r"|^(?:which|what|where|is|are|does|do|did|can|could|would|will|has|have|was|were|how|why|who)\b[^?]*\?\s*$",
    re.IGNORECASE,
)
"""A sentence that asks the reader to do or answer something: an imperative
of finding, telling or trying (not of looking: "read it twice" directs
scrutiny), "can you ...", or a question."""


def asks_the_reader(sentence: str) -> bool:
    """Whether ``sentence`` is a request or a question to the reader
    (:data:`_ASKS`, or a verb of finding or telling at a clause's start,
    :data:`_TASK`): a stance that reads as pointing at a flaw, put as a
    request, sends the reader to hunt for it (SE302), not to look (SE301)."""
    text = sentence.strip().strip("*_`>#- ").replace("’", "'")
    return bool(_ASKS.match(text)) or bool(_TASK.search(text))


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _judge_hidden(unit: Unit, structure: Structure, anchors: Sequence[Anchor]) -> Judgement | None:
    """An answer key: a comment, title or alt text that marks the answer
    (FIXME, "answer key", "graders", "the agent must flag ...": :data:`_ANSWER_KEY`),
    or holds a marker that is also work language ("expected:", "the agent",
    "reviewers should", "trap": :data:`_ANSWER_KEY_WEAK`) and relates to a
    defect's part (its row, its line, or its block by words of the defect's
    own lines: :func:`_tells_of_block`), or tells what is wrong with a
    defect's part, or sits on a defect's code line and tells a flaw. Doubt that
    only sets appearance against reality ("the figure may not mean what it
    seems") says that a flaw exists, not what it is: it is left to the
    unit's reading as a signpost."""
    text = unit.text
    marker = _ANSWER_KEY_CASED.search(text) or _ANSWER_KEY.search(text)
    weak_marker = None if marker is not None else _weak_marks_answer(text)
    located = unit.part if unit.kind == "code-comment" else None
    relation = resolve(text, structure, anchors, exclude=unit.part, located=located)
    if relation.kind not in ("defect", "block"):
        for clause in re.split(r"[;:]\s|\s[-–—]\s", text):
            if clause.strip() and clause.strip() != text:
                candidate = resolve(clause, structure, anchors, exclude=unit.part, located=located)
                if candidate.kind in ("defect", "block"):
                    relation = candidate
                    break
    negative = _flaw_told(text, structure, anchors, unit.part, located)
    if marker is not None:
        return Judgement("SE304", True, unit, relation, f"marks the answer ({marker.group()!r})")
    if weak_marker is not None and (relation.kind == "defect" or (
            relation.kind == "block" and _tells_of_block(unit, structure, anchors, relation))):
        return Judgement("SE304", True, unit, relation, f"marks the answer ({weak_marker.group()!r}) of a defect's part")
    if negative is None or relation.kind not in ("defect", "block") or _APPEARANCE.search(text):
        return None
    if relation.kind == "block" and not _tells_of_block(unit, structure, anchors, relation):
        return None
    return Judgement("SE304", True, unit, relation, f"tells the flaw ({negative.group()!r})")


def _weak_marks_answer(text: str) -> re.Match | None:
    """A weak marker (:data:`_ANSWER_KEY_WEAK`) of ``text`` that says more
    than its words' sense as work language would: a marker that names a
    flaw itself ("trap", "bug"), a second marker ("expected: the agent
    ..."), a verdict or a verb of catching ("expected: agent flags criterion
    3 as not proven"), or a word of a flaw (:data:`_NEGATIVE`). "expected: a
    list of (id, email) tuples" or "the agent retries each shard once",
    even on the defect's own line, describe the work."""
    markers = list(_ANSWER_KEY_WEAK.finditer(text))
    if not markers:
        return None
    if len(markers) > 1 or markers[0].group().lower() in ("trap", "bug", "hack", "xxx") \
            or _VERDICT.search(text) or _NEGATIVE.search(text):
        return markers[0]
    return None


_CLAUSE = re.compile(r"[;:,]\s|\s[-–—]\s")

_POLARITY = frozenset({"no", "not", "never", "without", "nothing", "none", "zero", "empty", "no longer", "n't",
                       "cannot", "still", "green", "success"})
"""Words of :data:`_NEGATIVE` that only set a fact's polarity or persistence
("no longer used", "not run", "still scheduled", "green"): they tell a flaw
only of what the defect itself holds. The others ("swallows", "unescaped",
"dropped", "leaks") judge what they are said of faulty."""

_CONTRAST = _lazy(r"\b(?:not|never)\s+(?:by|with|from|of|in|on|to|at|for|into|onto|through|via|just|only)\b",
                  re.IGNORECASE)
"""Constituent negation: "not" or "never" negating the prepositional phrase
that follows it ("added by ravi, not by the bot", "not on this page", "not
in the scope of ..."), which sets one fact against another. Sentential
negation ("was never run", "not yet tested", "is not a real test") tells
that something is not so, and counts."""


def _flaw_told(text: str, structure: Structure, anchors: Sequence[Anchor], exclude: int | None,
               located: int | None) -> re.Match | None:
    """The first word of ``text`` that tells a flaw of a defect's part
    (:data:`_NEGATIVE`). A word that only sets polarity (:data:`_POLARITY`:
    "not", "no", "never") counts only in a clause that names a defect's part
    or block itself ("no annotations added yet" beside the name of the
    defect's panel tells nothing of the panel), and neither does constituent
    negation (:data:`_CONTRAST`) nor a polarity word right after a comma,
    which sets one fact beside another ("the potassium came from the lab
    analyser, not from the blood gas machine", "GitHub's spelling of the
    key, not GitLab's", "traced on staging, no other errors in the window")."""
    clauses = [(m.start(), m.end()) for m in re.finditer(r"[^;,()]+", text)]
    for match in _NEGATIVE.finditer(text):
        word = match.group().lower()
        if word not in _POLARITY:
            return match
        if _CONTRAST.match(text, match.start()) or text[:match.start()].rstrip().endswith(","):
            continue
        start, end = next(((a, b) for a, b in clauses if a <= match.start() < b), (0, len(text)))
        if (start, end) == (0, len(text)) or resolve(text[start:end], structure, anchors, exclude=exclude,
                                                     located=located).kind in ("defect", "block"):
            return match
    return None


_LINE_EVIDENCE = 0.3
"""How much of the defect's own lines a text must name, each shared word
weighing 1 / (how many parts hold it): one word held by at most three parts,
as :func:`resolve`'s threshold for naming a part."""


def _tells_of_block(unit: Unit, structure: Structure, anchors: Sequence[Anchor], relation: Relation) -> bool:
    """Whether a text related only to the block holding a defect's quote
    (by a container noun: "the job", "the query", "the function") tells a
    flaw *of the defect*, not of something else the block's noun also fits.

    A container noun is weak evidence: "the old cron job is no longer used"
    names a job, and a backup script's code block is one only as any code
    is. So the text must either say a word that judges the named thing
    faulty (not a mere "no", "not", "still": :data:`_POLARITY`) in a clause
    that names the block ("the query reaches the database unescaped", "the
    function swallows everything"), or name what the defect's own lines
    hold (its quote and the code lines next to it), by words few parts of
    the artifact hold ("a failed copy no longer stops the job" beside
    ``copy_tree(...)``; "job", "file" or "data", held by many parts, weigh
    little)."""
    text, anchor = unit.text, relation.anchor
    for clause in [c for c in _CLAUSE.split(text) if c.strip()] or [text]:
        if any(match.group().lower() not in _POLARITY for match in _NEGATIVE.finditer(clause)):
            named = resolve(clause, structure, anchors, exclude=unit.part)
            if named.kind == "block" and named.anchor == anchor:
                return True
    if anchor is None:
        return False
    defect_stems = content_stems(anchor.quote).union(*(structure.part_stems[i] for i in _parts_of(structure, anchor)))
    weight = sum(1.0 / max(structure.held_elsewhere(s, unit.part), 1) for s in content_stems(text) & defect_stems)
    return weight >= _LINE_EVIDENCE
