"""output-spec.md: the fields an agent's answer carries, with values and aliases (fixture-format.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

import msgspec

from .markdown import Heading, MarkdownDocument, inline_code_spans, parse_markdown

if TYPE_CHECKING:  # pragma: no cover
    from .textfile import TextDocument

_LABELS = ("Values:", "Aliases:")
"""The labels of the lines that list a field's values and its aliases."""

class OutputField(NamedTuple):
    """One field of the output spec, with the lines that define it."""

    name: str
    heading: Heading
    values: tuple[str, ...]
    aliases: tuple[str, ...]
    start_line: int
    end_line: int
    values_line: int | None = None
    aliases_line: int | None = None

    @property
    def names(self) -> tuple[str, ...]:
        """The name and its aliases."""
        return (self.name, *self.aliases)


class UncodedList(NamedTuple):
    """A ``Values:`` or ``Aliases:`` line of ``field`` that lists no code span (so nothing)."""

    field: OutputField
    line: int
    label: str
    """``Values:`` or ``Aliases:``."""


class OutputSpec(msgspec.Struct, frozen=True, eq=False):
    """The parsed output spec. ``duplicates`` are later fields reusing a name;
    ``uncoded_lists`` the ``Values:``/``Aliases:`` lines without code spans."""

    document: MarkdownDocument
    fields: dict[str, OutputField]
    duplicates: tuple[OutputField, ...]
    uncoded_lists: tuple[UncodedList, ...]

    def lookup(self, name: str) -> OutputField | None:
        """The field called ``name`` or having it as an alias (case-sensitive)."""
        by_alias = (field for field in self.fields.values() if name in field.aliases)
        return self.fields.get(name) or next(by_alias, None)

    def lookup_answer_key(self, key: str) -> OutputField | None:
        """The field an answer's ``key`` names (case-insensitive, aliases too)."""
        wanted = key.strip().casefold()
        return next((f for f in self.fields.values() if any(n.casefold() == wanted for n in f.names)), None)


def output_spec_of(document: "TextDocument") -> OutputSpec:
    """``document`` parsed as an output spec, once per document."""
    return document.derived(_parse_document)


def _parse_document(document: "TextDocument") -> OutputSpec:
    return parse_output_spec(document.text)


def parse_output_spec(text: str) -> OutputSpec:
    """Parse an output spec's text (:func:`output_spec_of` parses a file's once)."""
    document = parse_markdown(text)
    level_two = [h for h in document.headings if h.level == 2]
    in_blocks = {n for b in document.blocks if b.kind != "prose" for n in range(b.start_line, b.end_line + 1)}
    fields: dict[str, OutputField] = {}
    duplicates: list[OutputField] = []
    uncoded: list[UncodedList] = []
    end_lines = [*(h.line - 1 for h in level_two[1:]), document.line_count]
    for heading, end_line in zip(level_two, end_lines):
        listed: dict[str, tuple[tuple[str, ...], int | None]] = {label: ((), None) for label in _LABELS}
        unlisted: list[tuple[int, str]] = []
        for number in range(heading.end_line + 1, end_line + 1):
            line = document.lines[number - 1].strip()
            label = next((label for label in listed if line.startswith(label)), None)
            if label is None or number in in_blocks:
                continue
            spans = tuple(span.strip() for span in inline_code_spans(line[len(label):]) if span.strip())
            if not spans:
                unlisted.append((number, label))
            listed[label] = (listed[label][0] + spans, number)
        (values, values_line), (aliases, aliases_line) = listed.values()
        name = heading.code_spans[0].strip() if heading.code_spans else heading.text
        field = OutputField(name, heading, values, aliases, heading.line, end_line, values_line, aliases_line)
        uncoded.extend(UncodedList(field, number, label) for number, label in unlisted)
        if name in fields:
            duplicates.append(field)
        else:
            fields[name] = field
    return OutputSpec(document, fields, tuple(duplicates), tuple(uncoded))
