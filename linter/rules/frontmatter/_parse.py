"""The YAML front matter of a SKILL.md, composed once per text, with positions.

The front matter's text is :attr:`MarkdownDocument.front_matter` (markdown.py
closes it only at a column-0 ``---``/``...`` line). It is composed with PyYAML's
``yaml.compose`` so that every key and value keeps its marks; marks are 0-based
within the front matter's text, which begins on the line after the opening
``---``, and are shifted to 1-based lines and columns of SKILL.md here.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ...markdown import FrontMatter, split_front_matter
from ...textfile import Span, normalize_newlines

if TYPE_CHECKING:  # pragma: no cover
    import yaml

# PyYAML is imported when a front matter is composed (a slow import that a run
# linting no SKILL.md, e.g. pre-commit over a few probe files, never needs:
# docs/performance.md); nodes are told apart by their ``id`` ("scalar",
# "sequence", "mapping") meanwhile.

STR_TAG = "tag:yaml.org,2002:str"
NULL_TAG = "tag:yaml.org,2002:null"

SPEC_KEYS = ("name", "description", "license", "allowed-tools", "metadata", "compatibility")
"""The keys the Agent Skills specification defines for SKILL.md front matter."""


class Entry(NamedTuple):
    """One ``key: value`` pair of the front matter's top-level mapping."""

    key: str
    key_node: yaml.Node
    value_node: yaml.Node

    @property
    def string(self) -> str | None:
        """The value when it is a YAML string (plain, quoted or block scalar)."""
        node = self.value_node
        if node.id == "scalar" and node.tag == STR_TAG:
            return node.value
        return None

    @property
    def is_null(self) -> bool:
        node = self.value_node
        return node.id == "scalar" and node.tag == NULL_TAG

    @property
    def kind(self) -> str:
        """What the value is, for messages (``a string``, ``a number``, ``a list``...)."""
        node = self.value_node
        if node.id == "mapping":
            return "a mapping"
        if node.id == "sequence":
            return "a list"
        tag = node.tag.rsplit(":", 1)[-1]
        return {"str": "a string", "null": "empty", "int": "a number", "float": "a number",
                "bool": "a boolean", "timestamp": "a date"}.get(tag, f"a YAML {tag}")


def content_end(node: yaml.Node) -> yaml.Mark:
    """Where ``node``'s text ends. A block mapping or list ends, for PyYAML,
    where the next token starts (the next key of the enclosing mapping, maybe
    lines later); its text ends with its last value's."""
    while node.id in ("mapping", "sequence") and not node.flow_style and node.value:
        last = node.value[-1]
        node = last[1] if node.id == "mapping" else last
    return node.end_mark


class DuplicateKey(NamedTuple):
    """A key that a mapping of the front matter repeats: ``first`` is its
    first occurrence, ``again`` a later one; ``within`` names the enclosing
    keys (``()`` at the top level, ``("metadata",)`` inside ``metadata``)."""

    key: str
    first: yaml.Node
    again: yaml.Node
    within: tuple[str, ...]


def duplicate_keys(root: yaml.Node | None) -> list[DuplicateKey]:
    """Every repeated scalar key of every mapping under ``root``, in document
    order. YAML requires a mapping's keys to be unique; PyYAML's loader keeps
    the last value silently, so the repeats are found on the composed nodes,
    which keep every key with its position. Keys are compared as the loader
    would (``1`` and ``"1"`` differ: their tags differ)."""
    found: list[DuplicateKey] = []
    if root is None:
        return found
    stack: list[tuple[yaml.Node, tuple[str, ...]]] = [(root, ())]
    seen_nodes: set[int] = set()
    while stack:
        node, within = stack.pop()
        if id(node) in seen_nodes:  # an alias shares its anchor's node
            continue
        seen_nodes.add(id(node))
        if node.id == "mapping":
            first_of: dict[tuple[str, str], yaml.Node] = {}
            children = []
            for key_node, value_node in node.value:
                if key_node.id == "scalar" and key_node.tag != "tag:yaml.org,2002:merge":
                    identity = (key_node.tag, key_node.value)
                    if identity in first_of:
                        found.append(DuplicateKey(str(key_node.value), first_of[identity], key_node, within))
                    else:
                        first_of[identity] = key_node
                    children.append((value_node, (*within, str(key_node.value))))
                else:
                    children.append((value_node, within))
            stack.extend(reversed(children))
        elif node.id == "sequence":
            stack.extend((item, within) for item in reversed(node.value))
    found.sort(key=lambda duplicate: duplicate.again.start_mark.index)
    return found


class Parsed(NamedTuple):
    """The front matter of one SKILL.md text.

    ``front`` is ``None`` when the file has none. ``error`` is the YAML error
    when it does not compose; ``root`` the composed top node (``None`` when the
    front matter is empty). ``entries`` are the top-level mapping's pairs with
    a scalar key, in order (later duplicates kept: a loader keeps the last).
    """

    text: str
    front: FrontMatter | None
    root: yaml.Node | None
    error: yaml.YAMLError | None
    entries: tuple[Entry, ...]

    @property
    def lines(self) -> list[str]:
        return self.text.split("\n")

    @property
    def is_mapping(self) -> bool:
        return self.root is not None and self.root.id == "mapping"

    def get(self, key: str) -> Entry | None:
        """The last entry for ``key`` (what a YAML loader would keep)."""
        found = None
        for entry in self.entries:
            if entry.key == key:
                found = entry
        return found

    # -- positions ---------------------------------------------------------------

    @property
    def offset(self) -> int:
        """The 1-based SKILL.md line of the front matter's first text line, minus one."""
        return self.front.start_line if self.front else 0

    def opening_span(self, path: Path) -> Span:
        """The opening ``---`` line."""
        first = self.lines[0] if self.lines else ""
        return Span.at(path, 1, 1, 1, len(first.rstrip()) + 1)

    def mark_span(self, path: Path, start: yaml.Mark, end: yaml.Mark | None = None) -> Span:
        """The span between two marks of the front matter's text (one character
        when ``end`` is missing or equal to ``start``; an end at column 0 of a
        later line is pulled back to the end of the previous line)."""
        line = start.line + self.offset + 1
        column = start.column + 1
        if end is None or (end.line, end.column) <= (start.line, start.column):
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            return Span.at(path, line, column, line, min(column + 1, len(text) + 1) if column <= len(text) else column)
        end_line = end.line + self.offset + 1
        end_column = end.column + 1
        if end.column == 0 and end.line > start.line:
            end_line -= 1
            previous = self.lines[end_line - 1] if 0 < end_line <= len(self.lines) else ""
            end_column = len(previous) + 1
        return Span.at(path, line, column, end_line, end_column)

    def node_span(self, path: Path, node: yaml.Node) -> Span:
        return self.mark_span(path, node.start_mark, content_end(node))

    def key_span(self, path: Path, entry: Entry) -> Span:
        return self.node_span(path, entry.key_node)

    def value_span(self, path: Path, entry: Entry) -> Span:
        """The value's span; an empty value is reported at its key."""
        node = entry.value_node
        if entry.is_null and node.start_mark.index == node.end_mark.index:
            return self.key_span(path, entry)
        return self.node_span(path, node)


def parse_front_matter(text: str) -> Parsed:
    """Compose the front matter of a SKILL.md ``text`` (normalized, as decoded).

    The front matter is split off by lines, as :func:`parse_markdown` splits
    it, without parsing the markdown: a process that only checks front
    matter (the parallel CLI gives every SKILL.md's checks to one helper)
    need not parse the document."""
    if "\r" in text:
        text = normalize_newlines(text)
    front, _body = split_front_matter(text)
    if front is None or front.end_line is None:
        return Parsed(text, front, None, None, ())
    import yaml

    try:
        root = yaml.compose(front.text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        return Parsed(text, front, None, error, ())
    except (RecursionError, ValueError) as error:  # pathological nesting or input
        return Parsed(text, front, None, yaml.YAMLError(str(error)), ())
    entries: list[Entry] = []
    if isinstance(root, yaml.MappingNode):
        for key_node, value_node in root.value:
            if isinstance(key_node, yaml.ScalarNode):
                entries.append(Entry(str(key_node.value), key_node, value_node))
    return Parsed(text, front, root, None, tuple(entries))


def front_matter_of(context) -> Parsed | None:
    """The parsed front matter of a :class:`SkillContext`'s SKILL.md (``None``
    when the file cannot be read: SE005 reports that)."""
    from ...textfile import TextDocument

    document = context.document
    if not isinstance(document, TextDocument):
        return None
    return document.derived(parsed_front_matter)


def parsed_front_matter(document) -> Parsed:
    """A SKILL.md document's front matter, composed once per document
    (:meth:`~skill_eval.linter.textfile.TextDocument.derived`)."""
    return parse_front_matter(document.text)


def key_of(context, key: str):
    """``(parsed front matter, entry of key)`` when the front matter is usable and
    has ``key``; ``(None, None)`` otherwise (other rules report why)."""
    parsed = front_matter_of(context)
    if not usable(parsed):
        return None, None
    entry = parsed.get(key)
    return (parsed, entry) if entry is not None else (None, None)


def usable(parsed: Parsed | None) -> bool:
    """Whether the front matter exists, closes, composes and is a mapping (or empty)."""
    return (
        parsed is not None
        and parsed.front is not None
        and parsed.front.end_line is not None
        and parsed.error is None
        and (parsed.root is None or parsed.is_mapping)
    )
