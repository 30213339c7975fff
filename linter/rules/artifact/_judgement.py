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

This is deterministic, offline and cheap: one markdown parse per artifact
(cached by content), and no model. ``skill-eval review`` asks a configured
model for a second opinion (evals/review.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterable, NamedTuple, Sequence

from ..._textcache import text_cache

__all__ = ["Anchor", "Judgement", "Unit", "judge_artifact", "read_sentence", "units_of"]

HIDDEN_KINDS = frozenset({"html-comment", "code-comment", "title", "alt"})
"""Units a reader of the rendered artifact does not see as prose: a flaw they
describe is an answer key (SE304), not a signpost."""

# -- words ---------------------------------------------------------------------------

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*|\d+(?:[.:,]\d+)*")

_STOP = frozenset("""
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
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 4:
            word = word[: -len(suffix)]
            break
    if word.endswith("i"):
        word = word[:-1] + "y"
    return word.rstrip("e") if len(word) > 4 else word


def words_of(text: str) -> list[str]:
    return [w.lower().replace("’", "'") for w in _WORD.findall(text)]


def content_stems(text: str) -> set[str]:
    """The stems of the words of ``text`` that may name a part of the artifact."""
    return {stem(w) for w in words_of(text) if w not in _STOP and (len(w) > 1 or w.isdigit())}


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


@dataclass
class Structure:
    blocks: list[Block] = field(default_factory=list)
    parts: list[Part] = field(default_factory=list)
    units: list[Unit] = field(default_factory=list)
    document_frequency: dict[str, int] = field(default_factory=dict)
    """Stem -> how many parts hold it."""
    part_stems: list[frozenset[str]] = field(default_factory=list)


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
        if joined and not re.search(r"[.!?:;,]$", joined[-1]) and line[:1].isupper() and _is_title_like(joined[-1]):
            joined.append(line)
        elif joined:
            joined[-1] += " " + line
        else:
            joined.append(line)
    out = []
    for piece in joined:
        out.extend(s.strip() for s in _SENTENCE_END.split(piece) if s.strip())
    return out


def _is_title_like(line: str) -> bool:
    """A line that ends without punctuation and does not run on (a title, a log line)."""
    return not re.search(r"\b(?:the|a|an|of|to|and|or|is|are|in|on|at|for|with)$", line, re.IGNORECASE)


def _inline_parts(children) -> tuple[str, list[tuple[str, str]]]:
    """The plain text of an inline token's children, and the link texts,
    link titles, image alt texts and inline HTML comments it holds."""
    text: list[str] = []
    extra: list[tuple[str, str]] = []
    link_text: list[str] | None = None
    for token in children or ():
        kind = token.type
        if kind == "text":
            text.append(token.content)
            if link_text is not None:
                link_text.append(token.content)
        elif kind == "code_inline":
            text.append(token.content)
            if link_text is not None:
                link_text.append(token.content)
        elif kind in ("softbreak", "hardbreak"):
            text.append("\n")
        elif kind == "link_open":
            link_text = []
            title = token.attrGet("title")
            if title:
                extra.append(("title", str(title)))
        elif kind == "link_close":
            if link_text is not None and "".join(link_text).strip():
                extra.append(("link", "".join(link_text)))
            link_text = None
        elif kind == "image":
            alt = "".join(c.content for c in token.children or () if c.type in ("text", "code_inline"))
            if alt.strip():
                extra.append(("alt", alt))
            title = token.attrGet("title")
            if title:
                extra.append(("title", str(title)))
        elif kind == "html_inline":
            for comment in _HTML_COMMENT.findall(token.content):
                extra.append(("html-comment", comment))
            text.append(" ")
    return "".join(text), extra


@text_cache(256, 1_000_000)
def structure_of(text: str) -> Structure:
    """The parts and readable units of an artifact (cached by content)."""
    from ...markdown import _parser, split_front_matter

    _front, body = split_front_matter(text)
    tokens = _parser().parse(body)
    lines = text.split("\n")
    found = Structure()
    section: int | None = None
    stack: list[str] = []
    row_number = 0
    item_numbers: list[int] = []
    header_cells: list[str] = []
    row_cells: list[str] = []
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
            if not in_head:
                row_number += 1
        elif kind == "tr_close":
            if not in_head and token.map is None:
                pass
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
            plain, extra = _inline_parts(token.children)
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
                    # A row is one part: extend it cell by cell.
                    if len(row_cells) == 1:
                        part = add_part("row", plain, start, end, block, row_number, plain.strip())
                    else:
                        part = len(found.parts) - 1
                        found.parts[part] = found.parts[part]._replace(text=found.parts[part].text + " | " + plain)
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
                       r"number|#|no\.?)\s*#?(\d+|[a-z]\d*)\b", re.IGNORECASE)
_ORDINAL_NOUN = re.compile(r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+"
                           r"(?:\w+\s+)?(row|line|item|criterion|step|clause|term|control|stage|table|entry|one|bullet|"
                           r"action item|setting|key)\b", re.IGNORECASE)
_LETTER_ROW = re.compile(r"\b(?:the\s+)?([A-Z])\s+row\b|\brow\s+([A-Z])\b")

CONTAINER_NOUNS = {
    "table": frozenset({"table", "row", "column", "cell", "entry", "entri", "line", "criterion", "criteria"}),
    "list": frozenset({"list", "item", "term", "clause", "step", "point", "bullet"}),
    "code": frozenset({"code", "diff", "function", "loop", "line", "snippet", "workflow", "config", "job", "log",
                       "script", "branch", "block", "query", "setting", "key", "stage", "output"}),
    "paragraph": frozenset({"paragraph", "sentence", "summary"}),
}
PLURAL_CONTAINERS = frozenset({"rows", "lines", "entries", "items", "criteria", "terms", "clauses", "steps",
                               "cells", "columns", "settings", "keys", "stages", "bullets", "points"})
ARTIFACT_NOUNS = frozenset({
    "report", "closeout", "postmortem", "diff", "draft", "document", "summary", "pr", "change", "run", "plan",
    "protocol", "agreement", "contract", "workflow", "log", "material", "writeup", "write-up", "this",
})
_DEIXIS = re.compile(
    r"\b(?:one|some|two|several|a few|any|none|each|all|every one|not all|not every(?:thing)?|everything|anything|something)"
    r"\s+(?:of\s+)?(?:these|those|them|the following|the above|the below|here|in here|above|below)\b"
    r"|\b(?:these|those)\s+(?:\w+\s+)?(?:rows|lines|items|entries|criteria|steps|claims|numbers|figures|tables|controls|"
    r"settings|terms|clauses|stages|evidence|checks|results|values|keys)\b"
    r"|\bsomewhere\b|\b(?:here|above|below)\b|\bthis\s+(?:report|closeout|postmortem|diff|draft|document|summary|pr|"
    r"change|run|plan|protocol|agreement|contract|workflow|list|table|log|material|page)\b"
    r"|\b(?:at|on|over|through)\s+(?:this|it|these|them)\s*[.!?]?$|\bthe (?:material|artifact)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Relation:
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


def resolve(phrase: str, structure: Structure, anchors: Sequence[Anchor], *, exclude: int | None = None,
            located: int | None = None) -> Relation:
    """The part, block or whole that ``phrase`` refers to, related to the defects.

    ``exclude`` is the part the phrase itself lies in (its own words do not
    count as a reference to it); ``located`` is that part when the phrase's
    position relates it (a cell of a row, a comment on a code line)."""
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
    lowered = phrase.lower()
    stems = content_stems(phrase)
    # Ordinals and numbered references: "row 3", "the third criterion", "clause 4", "line 7", "the C row".
    numbers: list[tuple[str, str]] = []
    for match in _NUMBERED.finditer(phrase):
        numbers.append((match.group(1).lower(), match.group(2)))
    for match in _ORDINAL_NOUN.finditer(phrase):
        value = match.group(1).lower()
        numbers.append((match.group(2).lower(), str(_ORDINALS.get(value, re.sub(r"\D", "", value)))))
    for match in _LETTER_ROW.finditer(phrase):
        numbers.append(("row", (match.group(1) or match.group(2))))
    for noun, value in numbers:
        for index, anchor in defect_parts.items():
            part = structure.parts[index]
            label = part.label.strip().lower()
            if part.kind == "code" and noun == "line" and value.isdigit() and int(value) in (part.number, part.line):
                return Relation("defect", anchor, f"names line {value}, the code line holding {anchor.defect_id}'s quote")
            if value.isdigit() and part.number == int(value) and part.kind in ("row", "item"):
                return Relation("defect", anchor, f"names {noun} {value}, the {_part_name(part)} holding {anchor.defect_id}'s quote")
            if label and (label == value.lower() or (len(value) == 1 and label.startswith(value.lower()))):
                return Relation("defect", anchor, f"names {noun} {value}, the {_part_name(part)} holding {anchor.defect_id}'s quote")
            if value.isdigit() and part.kind == "code" and noun == "line":
                continue
        if numbers and noun not in ("number", "#", "no", "no."):
            pass
    # Words: each part scores the stems it shares with the phrase, a stem
    # weighing 1 / (how many parts hold it).
    frequency = structure.document_frequency
    scores: dict[int, float] = {}
    for index, part_stems in enumerate(structure.part_stems):
        if index == exclude:
            continue
        shared = stems & part_stems
        if not shared:
            continue
        weight = 0.0
        for s in shared:
            count = frequency.get(s, 1) - (1 if exclude is not None and s in structure.part_stems[exclude] else 0)
            weight += 1.0 / max(count, 1)
        scores[index] = weight
    best = max(scores.values(), default=0.0)
    plural_container = any(w in PLURAL_CONTAINERS for w in words_of(lowered))
    if best >= 0.5:
        top = [index for index, score in scores.items() if score >= best - 1e-9]
        hits = [index for index in top if index in defect_parts]
        if hits:
            part = structure.parts[hits[0]]
            anchor = defect_parts[hits[0]]
            shared = sorted(stems & structure.part_stems[hits[0]])
            return Relation("defect", anchor, f"shares {', '.join(repr(s) for s in shared[:3])} with the "
                                              f"{_part_name(part)} holding {anchor.defect_id}'s quote")
        # A heading of a section holding a defect, or a table's header: the block.
        for index in top:
            part = structure.parts[index]
            if part.kind == "heading" and index in defect_sections:
                return Relation("block", defect_sections[index], f"names the section {part.text.strip()!r} holding "
                                                                 f"{defect_sections[index].defect_id}'s quote")
        if not plural_container:
            part = structure.parts[top[0]]
            return Relation("other", None, f"refers to the {_part_name(part)} {part.text.strip()[:40]!r}, which holds no defect")
    # Container nouns: "the table", "these rows", "the diff", a table's header words.
    phrase_words = set(words_of(lowered))
    phrase_stems = {stem(w) for w in phrase_words}
    for block_index, anchor in defect_blocks.items():
        block = structure.blocks[block_index]
        nouns = CONTAINER_NOUNS.get(block.kind, frozenset())
        header = content_stems(block.header) if block.kind == "table" else set()
        if block.kind == "code" and block.header:
            nouns = nouns | {block.header.lower()}
        named = (phrase_stems & {stem(n) for n in nouns}) | (phrase_stems & header)
        if named:
            what = {"table": "table", "list": "list", "code": "code block", "paragraph": "paragraph"}.get(block.kind, block.kind)
            return Relation("block", anchor, f"refers to the {what} holding {anchor.defect_id}'s quote "
                                             f"({', '.join(sorted(named))})")
        section = block.section
        if section is not None and phrase_stems & structure.part_stems[section]:
            return Relation("block", anchor, f"names the section {structure.parts[section].text.strip()!r} holding "
                                             f"{anchor.defect_id}'s quote")
    if _DEIXIS.search(phrase) or (phrase_words & ARTIFACT_NOUNS and re.search(r"\b(?:this|the|these)\s+(?:\w+\s+)?(?:"
                                                                                + "|".join(sorted(ARTIFACT_NOUNS)) + r")\b", lowered)):
        anchor = anchors[0]
        return Relation("whole", anchor, "points at the artifact as a whole, which holds "
                        + ", ".join(a.defect_id for a in anchors))
    if best > 0:
        return Relation("other", None, "refers to no part holding a defect")
    return _NONE


# -- what a sentence does --------------------------------------------------------------

_SCRUTINY_VERB = r"(?:look|read|reread|re-read|check|double-check|examine|inspect|scrutini[sz]e|review|go over|study|compare|give|take)"
_SCRUTINY = re.compile(
    r"\b" + _SCRUTINY_VERB + r"\b[^.;:!?]{0,60}?\b(?:closely|carefully|twice|again|slowly|hard|harder|with care|"
    r"row by row|line by line|critically|skeptically|sceptically)\b"
    r"|\b(?:close|closer|careful|second|hard|harder|long|good) (?:look|reading|read)\b"
    r"|\b(?:pay|draw|give|turn|direct|bring)\b[^.;:!?]{0,30}\battention\b|\battention (?:to|on)\b"
    r"|\bdouble[- ]check\b|\breread\b|\bre-read\b|\bkeep an eye (?:on|out)\b|\bwatch (?:out for|the)\b|\bmind the\b"
    r"|\bbe (?:careful|wary|cautious|suspicious|skeptical|sceptical)\b|\bcareful with\b|\bwary of\b"
    r"|\b(?:do not|don't|dont|never) (?:just )?(?:skim|gloss over|take [^.;]{0,30}at face value)\b|\bat face value\b"
    r"|\bslow down\b|\bslowing down\b|\bwhere to focus\b|\bfocus on\b|\bworth (?:a|checking|reading|slowing|another)\b"
    r"|\bdeserves?\b|\bmerits?\b|\bthe one to\b|\bthe (?:part|line|row|one) (?:worth|to (?:read|check|look|watch))\b"
    r"|\b(?:look|read|check) (?:at )?(?:\w+ ){0,3}(?:twice|again)\b|\blook twice\b|\bscrutiny\b|\bmore attention\b"
    r"|\bheads up\b|\bnote the\b|\bsee the\b|\bsee negative\b|\blook again\b|\bcheck the log\b"
    r"|\b(?:is|are) (?:the|where) (?:interesting|important|one that matters)\b|\bgets interesting\b"
    r"|\bthe (?:interesting|important) one\b|\bthe one that matters\b|\bwhere to look\b|\bworth checking\b"
    r"|\bcompare with\b",
    re.IGNORECASE,
)
"""Directing the reader's scrutiny: the verb (or noun) of looking with what
makes it more than reading (closely, twice, a second look, attention)."""

_LABEL = re.compile(r"^\s*(?:note|hint|tip|heads up|reminder|fyi|n\.?b\.?|important|caution|warning)\s*[:,-]\s*", re.IGNORECASE)

_FAULT_NOUN = (r"(?:bug|bugs|mistake|mistakes|error|errors|problem|problems|issue|issues|flaw|flaws|gap|gaps|hole|holes|"
               r"catch|trap|traps|snag|trouble|weak (?:spot|point|link)|defect|defects|inconsistency|discrepancy|lie|lies)")
_DOUBT = re.compile(
    # an existing fault: "there is a bug", "a catch in", "an issue lurking", "where the trouble is"
    r"\b(?:there(?:'s| is| are|’s)|has|have|contains?|hides?|hiding|lurking|carries)\s+(?:a|an|one|some|at least one)?\s*"
    r"(?:\w+\s+)?" + _FAULT_NOUN + r"\b"
    r"|\b" + _FAULT_NOUN + r"\s+(?:hiding|lurking|somewhere|in (?:here|there|this|these|the)\b)"
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
    r"|\bmore forgiving\b|\btolerates more\b|\bchanges? (?:what|the meaning of)\b|\bthe one that matters\b"
    r"|\beats failures\b|\bweak link\b|\bgets shaky\b|\bdoing a lot of\b|\bchanged more than\b"
    r"|\bmore favou?rabl[ey]\b[^.;]{0,40}\bthan it should\b|\bnot what (?:we|was) (?:agreed|negotiated)\b"
    r"|\bnot (?:really )?(?:closed|run|done|proven)\b|\bwas not really\b|\bnot really run\b",
    re.IGNORECASE,
)
"""Doubt about the material: a fault said to exist, appearance set against
reality, a hedge, a reading called generous."""

_RESOLVED = re.compile(
    r"\b(?:was|were|is|are|has been|have been|got)\s+(?:\w+\s+)?(?:fixed|resolved|corrected|closed|addressed|patched|"
    r"reverted|handled)\b|\bfixed in\b|\bno (?:issues|problems|errors|bugs)\b|\bdid not affect\b|\bif (?:a|an|any|the)\b"
    r"|\b(?:bug|ticket|issue|incident)\s+#?[A-Z]*-?\d+\b|\berror (?:budget|handler|rate|rates|code)\b",
    re.IGNORECASE,
)
"""A fault that is not this artifact's open question: fixed, conditional,
a ticket, a technical term."""

_REQUEST = re.compile(
    r"^(?:(?:please|now|so|then|first|also|just|and)\s+)*(?:(?:your (?:job|task)(?: here)?(?: is)?(?: to)?\s*:?\s*)|"
    r"(?:we need you to|i need you to|you should|you must|try to|see if you can|can you|could you|would you|will you)\s+)?"
    r"(?:tell|find|identify|point out|figure out|work out|name|pick out|flag|list|decide|spot|locate|determine|"
    r"show|explain|highlight|mark|circle|single out|call out|catch|detect|uncover|see (?:if|whether|which|what)|"
    r"go through|read|review|check|look (?:at|over|through)|work through|audit|examine|inspect)\b",
    re.IGNORECASE,
)
"""A request to the reader (an imperative or "can you ...")."""

_QUESTION = re.compile(r"^(?:which|what|where|is|are|does|do|did|can|could|would|will|has|have|was|were|how)\b[^?]*\?\s*$",
                       re.IGNORECASE)

_FAULT_TARGET = re.compile(
    r"\b(?:wrong|incorrect|inaccurate|invalid|bogus|false|misleading|broken|unsafe|unusable|unacceptable|missing|off|"
    r"lies|lie|problem|problems|bug|bugs|mistake|mistakes|error|errors|flaw|flaws|issue|issues|gap|gaps|defect|"
    r"weak (?:point|spot|link)|falls? short|push back|object to|objects? to|refuse|hurts?|against (?:us|the)|"
    r"(?:would|will|could) (?:not|n't) survive|wouldn't survive|doesn't hold|does not hold|hold water|break|bite|"
    r"slips? through|hide a failure|undermines?|weakens?|be lost|would be lost|glosses over|gloss over|"
    r"cannot be trusted|can't be trusted|not be trusted|should not be|shouldn't be|unaddressed|invalidates?|"
    r"fail (?:a|an|the)|blocks?|stop (?:this|it) from|not (?:actually|really)? ?(?:proven|done|safe|met|closed|"
    r"migrated|run|ready)|isn't really|is not really|really done|actually (?:done|run|proven)|bad|wrong with|lets?|"
    r"let (?:a|broken)|merge|the trap)\b",
    re.IGNORECASE,
)
"""What a quiz asks the reader to find: a fault, or what falls short."""

_ANSWER_KEY = re.compile(
    r"\b(?:FIXME|XXX|BUG|HACK)\b|\banswer(?: key)?\b|\bexpected\s*:|\bgraders?\b|\breviewers? (?:should|must|will)\b"
    r"|\bthe agent\b|\b(?:must|should) (?:catch|flag|notice|spot)\b|\btrap\b|\bseeded\b|\bplanted\b|\bdefect\b",
    re.IGNORECASE | re.VERBOSE,
)
_ANSWER_KEY_CASED = re.compile(r"\b(?:FIXME|XXX|BUG|HACK)\b")
_NEGATIVE = re.compile(
    r"\b(?:no|not|never|without|nothing|none|zero|empty|skipped|skips?|missing|ignored|ignores?|swallow(?:s|ed)?|"
    r"silently|quietly|hides?|hidden|drops?|dropped|discards?|discarded|cut|reduced|lose|lost|fails?|failing|failures?|"
    r"no longer|n't|cannot|unproven|untested|bypass(?:es|ed)?|still report|green|success)\b",
    re.IGNORECASE,
)
"""A description of what goes wrong (in a comment or a title: the flaw told)."""


class Reading(NamedTuple):
    """What a sentence does (before it is related to the artifact)."""

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
    resolved = bool(_RESOLVED.search(body))
    scrutiny = _SCRUTINY.search(body)
    doubt = None if resolved else _DOUBT.search(body)
    quiz = False
    if not resolved:
        asks = bool(_REQUEST.match(body)) or bool(_QUESTION.match(body))
        if asks and _FAULT_TARGET.search(body):
            quiz = True
        elif _QUESTION.match(body) and re.search(r"\breally\b|\ball (?:of )?(?:these|those|the)\b", body, re.IGNORECASE):
            quiz = True
    return Reading(scrutiny, doubt, quiz, bool(label), resolved)


def _focus(sentence: str, scrutiny: re.Match | None) -> str:
    """What scrutiny is aimed at: the words after the cue up to the clause's
    end ("pay attention to *the runner label* when you copy ..."), or the
    whole sentence when the cue ends it ("... is the one to read carefully")."""
    if scrutiny is None:
        return sentence
    after = sentence[scrutiny.end():]
    after = re.split(r"[:;,.!?(]|\s(?:before|when|if|after|while|because|since|so that|as|until|it|they|then|and)\s", after)[0]
    before = sentence[: scrutiny.start()]
    if len(content_stems(after)) == 0:
        return before + " " + after
    if len(content_stems(before)) and re.search(r"\b(?:is|are)\s+(?:the|where)\b|\bdeserves?\b|\bmerits?\b|\bworth\b", sentence, re.IGNORECASE):
        return before + " " + after
    return after


# -- the verdicts -----------------------------------------------------------------------


class Judgement(NamedTuple):
    """A finding of the reading: ``code`` (SE301, SE302, SE304), whether it is
    an error, the unit and the relation that decided."""

    code: str
    error: bool
    unit: Unit
    relation: Relation
    reason: str


def judge_artifact(text: str, anchors: Sequence[Anchor]) -> list[Judgement]:
    """Every unit of ``text`` that signposts, frames a quiz or leaks the
    answer (errors), and the scrutiny aimed elsewhere (not errors)."""
    return list(_judge(text, tuple(anchors)))


@lru_cache(maxsize=256)
def _judge(text: str, anchors: tuple[Anchor, ...]) -> tuple[Judgement, ...]:
    structure = structure_of(text)
    found: list[Judgement] = []
    defect_lines = {(a.line, a.end_line) for a in anchors}
    for unit in structure.units:
        if not unit.text.strip():
            continue
        if unit.kind in HIDDEN_KINDS:
            judgement = _judge_hidden(unit, structure, anchors)
            if judgement is not None:
                found.append(judgement)
            continue
        if any(line <= unit.line <= end or line <= unit.end_line <= end for line, end in defect_lines) \
                and any(a.quote and _squash(a.quote) in _squash(unit.text) for a in anchors):
            continue  # the defect's own sentence is the material, not a pointer at it
        reading = read_sentence(unit.text)
        located = unit.part if unit.kind == "cell" else None
        if reading.quiz:
            relation = resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
            found.append(Judgement("SE302", True, unit, relation, "asks the reader to hunt for a fault"))
            continue
        if reading.doubt is not None:
            relation = resolve(unit.text, structure, anchors, exclude=unit.part, located=located)
            if relation.relates:
                found.append(Judgement("SE301", True, unit, relation,
                                       f"voices doubt ({reading.doubt.group().strip()!r})"))
                continue
        if reading.scrutiny is not None:
            focus = _focus(unit.text, reading.scrutiny)
            relation = resolve(focus, structure, anchors, exclude=unit.part, located=located)
            if relation.relates:
                found.append(Judgement("SE301", True, unit, relation,
                                       f"directs scrutiny ({reading.scrutiny.group().strip()!r})"))
            else:
                found.append(Judgement("SE301", False, unit, relation,
                                       f"directs scrutiny ({reading.scrutiny.group().strip()!r})"))
            continue
        if reading.label:
            relation = resolve(_LABEL.sub("", unit.text), structure, anchors, exclude=unit.part, located=located)
            if relation.kind == "defect" and len(content_stems(_LABEL.sub("", unit.text))) <= 4:
                found.append(Judgement("SE301", True, unit, relation, "a bare hint"))
    return tuple(found)


def _squash(text: str) -> str:
    return " ".join(text.split()).lower()


def _judge_hidden(unit: Unit, structure: Structure, anchors: Sequence[Anchor]) -> Judgement | None:
    """An answer key: a comment, title or alt text that marks the answer
    (FIXME, "answer", "graders"...) or tells what is wrong with a defect's
    part, or that sits on a defect's code line and tells a flaw."""
    text = unit.text
    marker = _ANSWER_KEY_CASED.search(text) or _ANSWER_KEY.search(text)
    located = unit.part if unit.kind == "code-comment" else None
    relation = resolve(text, structure, anchors, exclude=unit.part, located=located)
    negative = _NEGATIVE.search(text)
    if marker is not None and (relation.relates or marker.group().isupper() or unit.kind == "html-comment"):
        return Judgement("SE304", True, unit, relation, f"marks the answer ({marker.group()!r})")
    if negative is not None and relation.kind in ("defect", "block"):
        return Judgement("SE304", True, unit, relation, f"tells the flaw ({negative.group()!r})")
    return None
