"""output-spec.md: the fields an agent's answer carries.

fixture-format.md, "output-spec.md": every level-2 heading defines one field,
named by the heading's first code span or else its whole text. In the field's
section a line beginning ``Values:`` lists the allowed values as code spans and
a line beginning ``Aliases:`` lists other names. Everything else is prose.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from .markdown import Heading, MarkdownDocument, inline_code_spans, parse_markdown

if TYPE_CHECKING:  # pragma: no cover
    from .textfile import TextDocument


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
    """A ``Values:`` or ``Aliases:`` line of ``field`` that lists no code span
    (``Values: PASS, FAIL``): it lists nothing."""

    field: OutputField
    line: int
    label: str
    """``Values:`` or ``Aliases:``."""


class OutputSpec:
    """The parsed output spec. ``duplicates`` are later fields reusing a name;
    ``uncoded_lists`` the ``Values:``/``Aliases:`` lines without code spans. Read-only."""

    def __init__(
        self,
        document: MarkdownDocument,
        fields: dict[str, OutputField],
        duplicates: tuple[OutputField, ...],
        uncoded_lists: tuple[UncodedList, ...] = (),
    ) -> None:
        self.document = document
        self.fields = fields
        self.duplicates = duplicates
        self.uncoded_lists = uncoded_lists

    def __repr__(self) -> str:
        return f"OutputSpec({list(self.fields)!r})"

    def lookup(self, name: str) -> OutputField | None:
        """The field called ``name`` or having it as an alias (case-sensitive)."""
        found = self.fields.get(name)
        if found is not None:
            return found
        for candidate in self.fields.values():
            if name in candidate.aliases:
                return candidate
        return None

    def lookup_answer_key(self, key: str) -> OutputField | None:
        """The field an answer's ``key`` names (case-insensitive, aliases too)."""
        wanted = key.strip().casefold()
        for candidate in self.fields.values():
            if any(n.casefold() == wanted for n in candidate.names):
                return candidate
        return None


def _listed(line: str, label: str) -> tuple[str, ...]:
    return tuple(span.strip() for span in inline_code_spans(line[len(label):]) if span.strip())


def output_spec_of(document: "TextDocument") -> OutputSpec:
    """``document`` parsed as an output spec, once per document
    (:meth:`~skill_eval.linter.textfile.TextDocument.derived`)."""
    return document.derived(_parse_document)


def _parse_document(document: "TextDocument") -> OutputSpec:
    return parse_output_spec(document.text)


def parse_output_spec(text: str) -> OutputSpec:
    """Parse an output spec's text (:func:`output_spec_of` parses a file's once)."""
    document = parse_markdown(text)
    level_two = [h for h in document.headings if h.level == 2]
    code_lines: set[int] = set()
    for block in document.blocks:
        if block.kind != "prose":
            code_lines.update(range(block.start_line, block.end_line + 1))
    fields: dict[str, OutputField] = {}
    duplicates: list[OutputField] = []
    uncoded: list[tuple[int, int, str]] = []
    by_position: list[OutputField] = []
    for position, heading in enumerate(level_two):
        next_line = level_two[position + 1].line if position + 1 < len(level_two) else document.line_count + 1
        name = heading.code_spans[0].strip() if heading.code_spans else heading.text
        values: tuple[str, ...] = ()
        aliases: tuple[str, ...] = ()
        values_line = aliases_line = None
        for line_number in range(heading.end_line + 1, next_line):
            if line_number in code_lines:
                continue
            line = document.lines[line_number - 1].strip()
            for label in ("Values:", "Aliases:"):
                if line.startswith(label):
                    listed = _listed(line, label)
                    if not listed:
                        uncoded.append((position, line_number, label))
                    if label == "Values:":
                        values, values_line = values + listed, line_number
                    else:
                        aliases, aliases_line = aliases + listed, line_number
                    break
        field = OutputField(name, heading, values, aliases, heading.line, next_line - 1, values_line, aliases_line)
        by_position.append(field)
        if name in fields:
            duplicates.append(field)
        else:
            fields[name] = field
    uncoded_lists = tuple(UncodedList(by_position[position], line, label) for position, line, label in uncoded)
    return OutputSpec(document, fields, tuple(duplicates), uncoded_lists)
