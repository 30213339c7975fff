"""CommonMark structure of SKILL.md, output-spec.md and artifacts, from
pyromark's (pulldown-cmark's) events as markdown-it-py-shaped tokens (:func:`block_tokens`).

Headings come from the parser's events and their line ranges, never from a regex
over lines (a ``#`` line in code, HTML or front matter is no heading; setext
headings exist). Where pulldown-cmark and markdown-it-py, the parser before,
disagree, CommonMark decides (tests/linter/test_markdown_reference.py lists the
cases). The front matter is split off first, its lines blanked so that line
numbers stay true; it closes only at a line that is exactly ``---`` or ``...``
at column 0.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from functools import cached_property, partial
from itertools import combinations
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from .textfile import TextDocument

__all__ = ["AmbiguousHeading", "FrontMatter", "Heading", "HeadingNotFound", "MarkdownDocument", "ProseBlock",
           "Window", "block_tokens", "extract_skill_section", "markdown_of", "normalize_heading_text",
           "parse_markdown"]

_FRONT_MATTER_CLOSE = re.compile(r"^(?:---|\.\.\.)[ \t]*$")
_FRONT_MATTER_OPEN = re.compile(r"^---[ \t]*$")
_DIRECTIVE = re.compile(r"<!--\s*skill-eval:\s*(disable-file|disable)\b([^>]*?)-->", re.IGNORECASE)
_CODE = re.compile(r"\bSE\d{3}\b")
_MARKUP_CHARS = re.compile(r"[*_`\[\]<>&\\!]")
_ESCAPABLE = frozenset("\\`*_[]<>&!#")
_WORD = re.compile(r"\w+")
_Value = TypeVar("_Value")


class Token(NamedTuple):
    """One token of a parse, shaped as markdown-it-py's block tokens: ``map``
    is the 0-based ``[first, end)`` line range; an ``inline`` token's
    ``content`` is its source (container marks and indentation dropped), its
    ``children`` ``text``, ``code_inline``, ``html_inline``, ``softbreak`` and
    ``hardbreak`` tokens (links, emphasis and images leave their text)."""

    type: str
    map: tuple[int, int] | None = None
    content: str = ""
    info: str = ""
    children: tuple["Token", ...] = ()
    tag: str = ""
    start: int | None = None

    def attrGet(self, name: str) -> int | None:  # noqa: N802 (markdown-it-py's name)
        """An ordered list's ``start`` number when it is not 1, as markdown-it-py's."""
        return self.start if name == "start" else None


_QUOTE_MARK = re.compile(r"[ \t]{0,3}>[ \t]?")
_INLINE_TAGS = frozenset({"Emphasis", "Strong", "Strikethrough", "Link", "Image"})
_CHILD_TYPES = {"Text": "text", "Code": "code_inline", "InlineHtml": "html_inline"}
_OPENS = {"Item": "list_item_open", "BlockQuote": "blockquote_open", "Table": "table_open"}
_CLOSES = {"Item": ("list_item_close",), "BlockQuote": ("blockquote_close",), "Table": ("table_close",),
           "TableRow": ("tr_close",), "TableHead": ("tr_close", "thead_close")}


def block_tokens(text: str) -> list[Token]:
    """The tokens of ``text`` (CommonMark with GFM tables: pulldown-cmark's
    events through pyromark, as :class:`Token`\\s in markdown-it-py's order:
    container opens and closes, ``paragraph_open``/``inline`` for every
    paragraph (a tight list item's too), ``heading_open``/``inline``, table
    head, rows and cells, ``fence``, ``code_block``, ``html_block``, ``hr``;
    no ``tbody`` tokens, nor the closes of paragraphs, headings and cells)."""
    import pyromark

    text = text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text
    text = _encodable(text.replace("\0", "\ufffd") if "\0" in text else text)
    data = text.encode()
    starts = [0]  # byte offsets of line starts: pyromark's ranges count UTF-8 bytes
    at = data.find(b"\n")
    while at >= 0:
        starts.append(at + 1)
        at = data.find(b"\n", at + 1)
    ends = [start - 1 for start in starts[1:]] + [len(data)]
    line_of = partial(bisect_right, starts)  # 1 + the 0-based line of a byte offset

    def lines_of(where: dict) -> tuple[int, int]:
        """The 0-based ``[first, end)`` lines of a range (one that starts at a
        line break, as a list in an item opened on an empty line does, starts
        on the next line)."""
        start, end = where["start"], where["end"]
        return line_of(start) - (data[start : start + 1] != b"\n" or end <= start + 1), line_of(max(end - 1, start))

    def source(start: int, last: int) -> str:
        """The inline source from byte ``start`` through line ``last``:
        each later line without its block quote marks and indentation."""
        first = line_of(start) - 1
        parts = [data[start : ends[first]].decode()]
        for number in range(first + 1, last + 1):
            line = data[starts[number] : ends[number]].decode()
            for _ in range(quotes):
                mark = _QUOTE_MARK.match(line)
                line = line[mark.end() :] if mark else line
            parts.append(line.lstrip(" \t"))
        return "\n".join(parts).strip()

    tokens: list[Token] = []
    quotes = 0
    group: list | None = None  # the inline block being read: [kind, byte start, byte end, children, where]
    code: list | None = None  # the code or HTML block being read: [kind, where, texts]
    lists: list[list[int]] = []  # [token index, end line] of each open list: it ends with its last item
    cell = "th"

    def flush() -> None:
        nonlocal group
        kind, start, end, children, where = group
        group = None
        if kind == "cell":  # ``where``: the 0-based line of its row
            stop = data.find(b"|", end, ends[where])  # the cell's pipe (a collapsed link's `[]` is outside its range)
            content = data[start : ends[where] if stop < 0 else stop].decode().strip().replace("\\|", "|")
            tokens.extend((Token(f"{cell}_open"), Token("inline", (where, where + 1), content, "", tuple(children))))
            return
        first, last = lines_of(where) if kind != "paragraph" else (line_of(start) - 1, line_of(max(end - 1, start)))
        if kind == "paragraph":
            tokens.extend((Token("paragraph_open", (first, last)),
                           Token("inline", (first, last), source(start, last - 1), "", tuple(children))))
        elif last - first == 1:  # an ATX heading: the markers and a closing sequence go
            line = data[start : ends[first]].decode().strip()[where["level"] :].rstrip(" \t")
            body = line.rstrip("#")
            content = (body if body != line and body.endswith((" ", "\t")) else line).strip()
            tokens.extend((Token("heading_open", (first, last), tag=f"h{where['level']}"),
                           Token("inline", (first, last), content, "", tuple(children))))
        else:  # a setext heading: the underline goes
            tokens.extend((Token("heading_open", (first, last), tag=f"h{where['level']}"),
                           Token("inline", (first, last - 1), source(start, last - 2), "", tuple(children))))

    for event, where in pyromark.events_with_range(text, options=pyromark.Options.ENABLE_TABLES):
        if event.__class__ is str:  # SoftBreak, HardBreak, Rule
            if event == "Rule":
                if group is not None:
                    flush()
                tokens.append(Token("hr", lines_of(where)))
            else:
                group[2] = where["end"]
                group[3].append(Token(event.lower()))
            continue
        kind, = event  # an event is a one-key dict
        value = event[kind]
        if kind in _CHILD_TYPES or kind == "Html":
            if code is not None:
                code[2].append(value)
                continue
            if group is None:  # a tight list item's paragraph has no Paragraph event (nor its escape's backslash)
                start = where["start"]
                group = ["paragraph", start - (data[start - 1 : start] == b"\\"), 0, [], where]
            group[2] = where["end"]
            group[3].append(Token(_CHILD_TYPES[kind], None, value))
            continue
        tag = value if value.__class__ is str else next(iter(value))
        if tag in _INLINE_TAGS:
            if group is None:
                group = ["paragraph", where["start"], 0, [], where]
            group[2] = max(group[2], where["end"])
            continue
        if group is not None:
            flush()
        if kind == "Start":
            if tag in ("Paragraph", "Heading", "TableCell"):
                kind = {"Paragraph": "paragraph", "Heading": "heading", "TableCell": "cell"}[tag]
                group = [kind, where["start"], where["end"], [], where if kind != "cell" else line]
                if kind == "heading":
                    where["level"] = int(value["Heading"]["level"][1])
            elif tag in ("CodeBlock", "HtmlBlock"):
                code = [value if tag == "HtmlBlock" else value["CodeBlock"], where, []]
            elif tag == "List":
                lists.append([len(tokens), 0])
                number = value["List"]
                tokens.append(Token("bullet_list_open" if number is None else "ordered_list_open", lines_of(where),
                                    start=number if number != 1 else None))
            elif tag in ("TableHead", "TableRow"):
                line, cell = lines_of(where)[0], "th" if tag == "TableHead" else "td"
                if tag == "TableHead":
                    tokens.append(Token("thead_open", (line, line + 1)))
                tokens.append(Token("tr_open", (line, line + 1)))
            else:
                lines = lines_of(where)
                if tag == "Item":
                    lists[-1][1] = lines[1]
                quotes += tag == "BlockQuote"
                tokens.append(Token(_OPENS[tag], lines))
        elif tag == "List":
            index, end = lists.pop()
            tokens[index] = tokens[index]._replace(map=(tokens[index].map[0], end))
            tokens.append(Token("ordered_list_close" if value["List"] else "bullet_list_close"))
        elif tag in ("CodeBlock", "HtmlBlock"):
            info, opened, texts = code
            code = None
            if tag == "HtmlBlock" or info == "Indented":
                tokens.append(Token("html_block" if tag == "HtmlBlock" else "code_block", lines_of(opened), "".join(texts)))
            else:
                fence = source(opened["start"], line_of(opened["start"]) - 1).lstrip()
                tokens.append(Token("fence", lines_of(opened), "".join(texts), fence.lstrip(fence[0])))
        elif tag in _CLOSES:
            quotes -= tag == "BlockQuote"
            tokens.extend(Token(kind) for kind in _CLOSES[tag])
    if group is not None:
        flush()
    return tokens


def _encodable(text: str) -> str:
    """``text``, each lone surrogate (no UTF-8, so no parser's) as ``?``."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace").decode()
    return text


def _inline_children(text: str) -> tuple[Token, ...]:
    """The inline tokens of one line of markdown, parsed as a heading's text
    is (an ATX heading holds inline markup only; a trailing ``#`` is escaped
    so that it is not taken for a closing sequence)."""
    text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    marks = len(text) - len(text.rstrip("#"))
    if marks:
        text = text[:-marks] + "\\#" * marks
    tokens = block_tokens("# " + text)
    return tokens[1].children if len(tokens) > 1 else ()


class Heading(NamedTuple):
    """One CommonMark heading. ``text`` is its plain text (markup dropped, code
    spans kept, entities decoded, whitespace collapsed); ``line`` its first line,
    ``end_line`` its last (a setext heading's underline); ``column``/``end_column``
    delimit the text on ``line`` (end exclusive); ``parent`` is the index of the
    nearest enclosing heading of a lower level; ``code_spans`` the contents of
    its code spans, in order."""

    level: int
    text: str
    line: int
    end_line: int
    column: int
    end_column: int
    index: int
    parent: int | None
    code_spans: tuple[str, ...] = ()


class FrontMatter(NamedTuple):
    """The YAML front matter block: ``text`` lies between the two markers;
    ``end_line`` is the closing marker's line, or ``None`` when it never closes."""

    text: str
    start_line: int
    end_line: int | None


class ProseBlock(NamedTuple):
    """A block's lines and text. ``kind`` is ``prose`` (paragraphs, list items,
    headings, table cells, block quotes), ``code`` (fenced or indented) or
    ``html`` (an HTML block). A prose block's ``text`` is its plain text:
    inline markup and HTML (comments included) dropped, code spans kept."""

    kind: str
    start_line: int
    end_line: int
    text: str


class Directive(NamedTuple):
    """A ``<!-- skill-eval: disable[-file] CODES -->`` comment."""

    line: int
    whole_file: bool
    codes: frozenset[str]


class HeadingNotFound(LookupError):
    """``step_heading`` matches no heading; ``suggestions`` are close headings."""

    def __init__(self, step_heading: str, suggestions: Sequence[str]) -> None:
        hint = f" (did you mean {', '.join(repr(s) for s in suggestions)}?)" if suggestions else ""
        super().__init__(f"no heading {step_heading!r}{hint}")
        self.step_heading = step_heading
        self.suggestions = tuple(suggestions)


class AmbiguousHeading(LookupError):
    """``step_heading`` matches several headings; ``paths`` are the
    ``step_heading`` forms that each name exactly one of them (a heading that
    no form tells apart has none)."""

    def __init__(self, step_heading: str, headings: Sequence[Heading], paths: Sequence[str | None]) -> None:
        usable = tuple(path for path in paths if path is not None)
        if not usable:
            hint = "no `Parent > Child` form tells them apart: rename a heading"
        elif len(usable) < len(headings):
            hint = f"{', '.join(map(repr, usable))} name one each, the others cannot be told apart"
        else:
            hint = f"use one of {', '.join(map(repr, usable))}"
        super().__init__(f"{step_heading!r} matches {len(headings)} headings: {hint}")
        self.step_heading = step_heading
        self.headings = tuple(headings)
        self.paths = usable


def _plain_text(children: Iterable["Token"]) -> str:
    """The plain text of a heading's inline tokens (:attr:`Heading.text`)."""
    parts: list[str] = []
    for token in children:
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return unicodedata.normalize("NFC", " ".join("".join(parts).split()))


def _prose_text(children: Iterable["Token"]) -> str:
    """The words of an inline block as a reader sees them: markup, URLs and
    inline HTML dropped, entities decoded, code spans set off by spaces."""
    parts: list[str] = []
    for token in children:
        if token.type == "text":
            parts.append(token.content)
        elif token.type == "code_inline":
            parts.append(f" {token.content} ")
        elif token.type in ("softbreak", "hardbreak"):
            parts.append("\n")
        elif token.type == "html_inline":
            parts.append(" ")
    return "".join(parts)


def inline_code_spans(text: str) -> list[str]:
    """The contents of the code spans of one line of inline markdown."""
    if "`" not in text:
        return []
    return [child.content for child in _inline_children(text) if child.type == "code_inline"]


def heading_rank(wanted: str, plain: str, score: float) -> tuple:
    """How well a heading's plain text ``plain`` answers a ``step_heading``
    (plain text ``wanted``) that named no heading, as a sort key (smaller is
    better): the share of the words of ``wanted``'s last part the heading's
    last part holds, whether it carries the step's (first) number, the fuzzy
    ``score``, then the heading's text (so never file order)."""
    wanted_words = _WORD.findall(wanted.split(" > ")[-1].casefold())
    words = _WORD.findall(plain.split(" > ")[-1].casefold())
    share = sum(word in words for word in wanted_words) / len(wanted_words) if wanted_words else 0.0
    number = next((word for word in wanted_words if word.isdigit()), None)
    same_number = number is not None and next((w for w in words if w.isdigit()), None) == number
    return (-share, not same_number, -score, plain.casefold(), plain)


def normalize_heading_text(text: str) -> str:
    """A heading written by a person (a ``step_heading`` part) as plain text:
    leading ``#`` marks dropped, inline markup rendered as a SKILL.md
    heading's is, in Unicode NFC (as "Re\u0301sume\u0301" is "Résumé")."""
    text = unicodedata.normalize("NFC", text.strip().lstrip("#").strip())
    if not _MARKUP_CHARS.search(text):
        return " ".join(text.split())
    return _plain_text(_inline_children(text))


def split_front_matter(text: str) -> tuple[FrontMatter | None, str]:
    """Split YAML front matter off ``text``; return it and the markdown with the
    front matter's lines blanked (so that line numbers are unchanged)."""
    if not text.startswith("---"):
        return None, text
    lines = text.split("\n")
    if not _FRONT_MATTER_OPEN.match(lines[0]):
        return None, text
    close = next((index for index in range(1, len(lines)) if _FRONT_MATTER_CLOSE.match(lines[index])), None)
    if close is None:
        return FrontMatter("\n".join(lines[1:]), 1, None), text
    front = FrontMatter("\n".join(lines[1:close]), 1, close + 1)
    return front, "\n" * (close + 1) + "\n".join(lines[close + 1 :])


class MarkdownDocument:
    """The parsed structure of one markdown text (cached by content). Read-only."""

    def __init__(self, text: str, front_matter: FrontMatter | None, headings: tuple[Heading, ...],
                 blocks: tuple[ProseBlock, ...], directives: tuple[Directive, ...]) -> None:
        self.text = text
        self.front_matter = front_matter
        self.headings = headings
        self.blocks = blocks
        self.directives = directives
        self._windows: dict[Heading, Window] = {}
        self._memo: dict[tuple[Callable, str], object] = {}

    def __repr__(self) -> str:
        return f"MarkdownDocument({len(self.headings)} headings, {len(self.blocks)} blocks)"

    def _remembered(self, compute: Callable[[str], _Value], step_heading: str) -> _Value:
        """``compute(step_heading)``, remembered for the last 4,096 queries of
        this document (the memo is emptied when full)."""
        key = (compute.__func__, step_heading)
        found = self._memo.get(key)
        if found is None:
            if len(self._memo) >= 4096:
                self._memo.clear()
            found = self._memo[key] = compute(step_heading)
        return found

    @cached_property
    def lines(self) -> list[str]:
        """The text's lines, without their breaks."""
        return self.text.split("\n")

    @property
    def line_count(self) -> int:
        """How many lines the text has."""
        return len(self.lines)

    def ancestors(self, heading: Heading) -> list[Heading]:
        """The enclosing headings of ``heading``, nearest first."""
        chain = []
        parent = heading.parent
        while parent is not None:
            chain.append(self.headings[parent])
            parent = self.headings[parent].parent
        return chain

    def window(self, heading: Heading) -> "Window":
        """The section of ``heading``: its line through the last non-blank line
        before the next heading of the same or a higher level. One
        :class:`Window` per heading (the probes of a step share it)."""
        window = self._windows.get(heading)
        if window is None:
            later = (h.line - 1 for h in self.headings[heading.index + 1 :] if h.level <= heading.level)
            end_line = next(later, self.line_count)
            while end_line > heading.end_line and not self.lines[end_line - 1].strip():
                end_line -= 1
            window = self._windows[heading] = Window(self, heading, heading.line, end_line)
        return window

    def find_headings(self, step_heading: str) -> list[Heading]:
        """Headings matching ``step_heading`` (exact text, or a ``Parent > Child``
        path), from indexes by text, remembered for the last 4,096 queries
        (:attr:`heading_paths` stays linear). The list is shared: do not change it."""
        return self._remembered(self._find_headings, step_heading)

    @cached_property
    def _by_text(self) -> dict[str, list[Heading]]:
        """The headings by their text, each list in document order."""
        index: dict[str, list[Heading]] = {}
        for heading in self.headings:
            index.setdefault(heading.text, []).append(heading)
        return index

    @cached_property
    def _by_ancestor_and_text(self) -> dict[tuple[str, str], list[Heading]]:
        """The headings by (the text of any of their ancestors, their text):
        what a two-part ``Parent > Child`` query matches."""
        index: dict[tuple[str, str], list[Heading]] = {}
        for heading in self.headings:
            for text in dict.fromkeys(ancestor.text for ancestor in self.ancestors(heading)):
                index.setdefault((text, heading.text), []).append(heading)
        return index

    def _find_headings(self, step_heading: str) -> list[Heading]:
        """:meth:`find_headings`, not remembered."""
        wanted = normalize_heading_text(step_heading)
        matches = list(self._by_text.get(wanted, ()))
        if matches or " > " not in step_heading:
            return matches
        parts = [normalize_heading_text(part) for part in step_heading.split(" > ")]
        if len(parts) == 2:
            return list(self._by_ancestor_and_text.get((parts[0], parts[1]), ()))
        found = []
        for heading in self._by_text.get(parts[-1], ()):
            ancestors = iter([ancestor.text for ancestor in self.ancestors(heading)])
            if all(part in ancestors for part in reversed(parts[:-1])):  # in order, nearest first
                found.append(heading)
        return found

    def path_of(self, heading: Heading) -> str | None:
        """The shortest ``step_heading`` that names ``heading`` alone: its text
        when unique, else a ``Parent > Child`` path of :meth:`reference_of`
        parts; ``None`` when no form tells the heading apart. ``heading`` is
        one of this document's."""
        return self.heading_paths[heading.index]

    @cached_property
    def heading_paths(self) -> tuple[str | None, ...]:
        """:meth:`path_of` of every heading, by index, computed once per document."""
        return tuple(self._path_of(heading) for heading in self.headings)

    def reference_of(self, heading: Heading) -> str:
        """A ``step_heading`` part, without an unescaped `` > ``, that
        :func:`normalize_heading_text` maps to ``heading.text``: the text, else
        with its code spans written back, else with markup characters escaped."""
        text = heading.text
        if " > " not in text and normalize_heading_text(text) == text:
            return text
        if heading.code_spans and " > " not in text:
            rebuilt, rest = [], text
            for content in heading.code_spans:
                span = content.strip()
                at = rest.find(span) if span else -1
                if at < 0:
                    break
                fence = "``" if "`" in content else "`"
                pad = " " if span.startswith("`") or span.endswith("`") else ""
                rebuilt.append(rest[:at] + f"{fence}{pad}{span}{pad}{fence}")
                rest = rest[at + len(span):]
            else:
                candidate = "".join(rebuilt) + rest
                if normalize_heading_text(candidate) == text:
                    return candidate
        escaped = "".join("\\" + c if c in _ESCAPABLE else c for c in text)
        return escaped if normalize_heading_text(escaped) == text else text

    def _names_only(self, step_heading: str, heading: Heading) -> bool:
        """Whether ``step_heading`` names ``heading`` and no other heading."""
        found = self.find_headings(step_heading)
        return len(found) == 1 and found[0] is heading

    def _path_of(self, heading: Heading) -> str | None:
        """:meth:`path_of`, computed."""
        own = self.reference_of(heading)
        if self._names_only(own, heading):
            return own
        ancestors = self.ancestors(heading)  # nearest first
        references = [self.reference_of(a) for a in ancestors]
        # the fewest ancestors first, nearer ones first among equals: one
        # ancestor ("Parent > Child"), then two, ... up to the whole chain
        for size in range(1, len(ancestors) + 1):
            for chosen in combinations(range(len(ancestors)), size):
                parts = [references[i] for i in sorted(chosen, reverse=True)]
                candidate = " > ".join([*parts, own])
                if self._names_only(candidate, heading):
                    return candidate
            if size >= 3:  # deeper combinations are unreadable; try the whole chain only
                candidate = " > ".join([*reversed(references), own])
                return candidate if self._names_only(candidate, heading) else None
        return None

    def suggest_headings(self, step_heading: str) -> list[str]:
        """Up to 3 close headings for a ``step_heading`` that matches none,
        best first, each as a ``step_heading`` that names exactly that heading.

        A case-insensitive equal text comes first, then the headings whose
        rapidfuzz WRatio is at least 60 and either within 8 points of the best
        or holding most of the step's words, ranked by :func:`heading_rank`
        (never by file order). Headings are compared by their plain text; one
        that no form names alone is never suggested. Computed once per
        document and ``step_heading`` (the probes of a renamed step ask
        alike), remembered for the last 4,096 as :meth:`find_headings` is."""
        return list(self._remembered(self._suggest_headings, step_heading))

    @cached_property
    def _plain_paths(self) -> tuple[list[str], list[str]]:
        """``(references, plains)``: each distinct :attr:`heading_paths`
        form, and its plain text (:func:`normalize_heading_text` of each part)."""
        plain_of: dict[str, str] = {}
        for path in self.heading_paths:
            if path is not None:
                plain_of.setdefault(path, " > ".join(map(normalize_heading_text, path.split(" > "))))
        return list(plain_of), list(plain_of.values())

    def _suggest_headings(self, step_heading: str) -> tuple[str, ...]:
        """:meth:`suggest_headings`, not remembered."""
        from rapidfuzz import fuzz, process

        wanted = normalize_heading_text(step_heading)
        references, plains = self._plain_paths
        exact = [r for r, plain in zip(references, plains) if plain.casefold() == wanted.casefold()]
        scored = process.extract(wanted, plains, scorer=fuzz.WRatio, limit=None, score_cutoff=60)
        best = max((score for _plain, score, _index in scored), default=0)
        ranked = []
        for plain, score, index in scored:
            if references[index] in exact:
                continue
            rank = heading_rank(wanted, plain, score)
            if score >= best - 8 or -rank[0] > 0.5:
                ranked.append((rank, references[index]))
        ranked.sort()
        return tuple(exact + [reference for _rank, reference in ranked])[:3]

    def code_lines_like(self, step_heading: str) -> list[tuple[int, str]]:
        """``(line, block kind)`` of the lines in code or HTML blocks that read
        like the heading ``step_heading`` names (``## Step 3`` in a fenced
        example), found once per document and ``step_heading`` (the last 4,096)."""
        return list(self._remembered(self._code_lines_like, step_heading))

    def _code_lines_like(self, step_heading: str) -> tuple[tuple[int, str], ...]:
        """:meth:`code_lines_like`, not remembered."""
        wanted = normalize_heading_text(step_heading.split(" > ")[-1])
        if not wanted:
            return ()
        found = []
        for block in self.blocks:
            if block.kind == "prose":
                continue
            for number in range(block.start_line, min(block.end_line, self.line_count) + 1):
                line = self.lines[number - 1].strip()
                if line.startswith("#") and normalize_heading_text(line.rstrip("#").strip() or line) == wanted:
                    found.append((number, block.kind))
        return tuple(found)

    def is_suppressed(self, code: str, line: int) -> bool:
        """Whether a directive disables ``code`` on ``line`` (or in the whole file)."""
        return any((code in directive.codes or "ALL" in directive.codes)
                   and (directive.whole_file or directive.line == line - 1) for directive in self.directives)


class Window:
    """The section of SKILL.md a probe exercises, with its 1-based inclusive
    line range (the heading's line through the section's last line). Read-only."""

    def __init__(self, document: MarkdownDocument, heading: Heading, start_line: int, end_line: int) -> None:
        self.document = document
        self.heading = heading
        self.start_line = start_line
        self.end_line = end_line
        self._mentioned: dict[tuple[str, bool], bool] = {}

    def __repr__(self) -> str:
        return f"Window({self.heading.text!r}, lines {self.start_line}-{self.end_line})"

    @property
    def text(self) -> str:
        """The window's lines."""
        return "\n".join(self.document.lines[self.start_line - 1 : self.end_line])

    @cached_property
    def blocks(self) -> list[ProseBlock]:
        """The document's blocks that start within the window."""
        return [b for b in self.document.blocks if self.start_line <= b.start_line <= self.end_line]

    @cached_property
    def prose(self) -> str:
        """All prose of the window (headings included; code and HTML excluded)."""
        return "\n".join(b.text for b in self.blocks if b.kind == "prose")

    def has_prose_besides_heading(self) -> bool:
        """Whether a prose block below the heading holds any text."""
        below = self.heading.end_line
        return any(b.kind == "prose" and b.start_line > below and b.text.strip() for b in self.blocks)

    def mentions(self, word: str, ignore_case: bool = False) -> bool:
        """Whether ``word`` occurs as a whole word in the window's prose
        (:func:`has_whole_word`), remembered per word."""
        key = (word, ignore_case)
        found = self._mentioned.get(key)
        if found is None:
            found = self._mentioned[key] = has_whole_word(self.prose, word, ignore_case)
        return found


def has_whole_word(text: str, word: str, ignore_case: bool = False) -> bool:
    """Whether ``word`` occurs in ``text`` not flanked by word characters
    (in any case when ``ignore_case``; whitespace inside ``word`` matches any
    run of whitespace, so a field `red flags` is found across a line break)."""
    if not word:
        return False
    pattern = r"\s+".join(map(re.escape, word.split())) or re.escape(word)
    return re.search(rf"(?<![\w]){pattern}(?![\w])", text, re.IGNORECASE if ignore_case else 0) is not None


def _directives_in(text: str, line: int) -> list[Directive]:
    """The directives in ``text``, a block that starts on ``line``."""
    found = []
    for match in _DIRECTIVE.finditer(text):
        codes = frozenset(_CODE.findall(match.group(2))) or frozenset({"ALL"})
        at = line + text.count("\n", 0, match.start())
        found.append(Directive(at, match.group(1).lower() == "disable-file", codes))
    return found


def markdown_of(document: "TextDocument") -> MarkdownDocument:
    """``document`` parsed, once per document (:meth:`~skill_eval.linter.textfile.TextDocument.derived`)."""
    return document.derived(_parse_document)


def _parse_document(document: "TextDocument") -> MarkdownDocument:
    """:func:`parse_markdown` of ``document``'s text (the key of its memo)."""
    return parse_markdown(document.text)


def parse_markdown(text: str) -> MarkdownDocument:
    """Parse ``text`` (:func:`markdown_of` parses a file's once). Line numbers
    count ``\\n``, ``\\r\\n`` and ``\\r`` alike."""
    if "\r" in text:
        from .textfile import normalize_newlines

        text = normalize_newlines(text)
    text = _encodable(text)
    front_matter, body = split_front_matter(text)
    tokens = block_tokens(body)
    lines = text.split("\n")
    headings: list[Heading] = []
    blocks: list[ProseBlock] = []
    directives: list[Directive] = []
    stack: list[Heading] = []
    for index, token in enumerate(tokens):
        if token.map is None:
            continue
        start, end = token.map[0] + 1, token.map[1]
        if token.type == "inline":
            opener = tokens[index - 1]  # heading_open, inline, heading_close
            if opener.type == "heading_open":
                level = int(opener.tag[1])
                while stack and stack[-1].level >= level:
                    stack.pop()
                first_line = lines[start - 1]
                first_content = token.content.split("\n", 1)[0].strip()
                column = first_line.find(first_content) + 1 if first_content else len(first_line) + 1
                if column <= 0:
                    column = len(first_line) - len(first_line.lstrip()) + 1
                heading = Heading(
                    level=level,
                    text=_plain_text(token.children or ()),
                    line=start,
                    end_line=opener.map[1],  # a setext heading's underline
                    column=column,
                    end_column=column + len(first_content),
                    index=len(headings),
                    parent=stack[-1].index if stack else None,
                    code_spans=tuple(c.content for c in token.children or () if c.type == "code_inline"),
                )
                headings.append(heading)
                stack.append(heading)
            if "<!--" in token.content:
                directives.extend(_directives_in(token.content, start))
            blocks.append(ProseBlock("prose", start, max(end, start), _prose_text(token.children or ())))
        elif token.type in ("fence", "code_block"):
            blocks.append(ProseBlock("code", start, end, token.content))
        elif token.type == "html_block":
            directives.extend(_directives_in(token.content, start))
            blocks.append(ProseBlock("html", start, end, token.content))
    return MarkdownDocument(text, front_matter, tuple(headings), tuple(blocks), tuple(directives))


def extract_skill_section(skill: "MarkdownDocument | Path | str", step_heading: str) -> Window:
    """The :meth:`~MarkdownDocument.window` of the one heading ``step_heading``
    names (case-sensitive: a heading's text, leading ``#`` marks ignored and
    inline markup normalized, or a ``"Parent > Child"`` path), in ``skill``: a
    parsed document, a SKILL.md :class:`~pathlib.Path`, or markdown text.

    Raises :class:`HeadingNotFound` (with close headings as ``suggestions``) or
    :class:`AmbiguousHeading` (with ``Parent > Child`` ``paths``).
    """
    if isinstance(skill, Path):
        from .textfile import decode_text

        skill = decode_text(skill.read_bytes())
    document = skill if isinstance(skill, MarkdownDocument) else parse_markdown(skill)
    matches = document.find_headings(step_heading)
    if not matches:
        raise HeadingNotFound(step_heading, document.suggest_headings(step_heading))
    if len(matches) > 1:
        raise AmbiguousHeading(step_heading, matches, [document.path_of(h) for h in matches])
    return document.window(matches[0])
