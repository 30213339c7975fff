"""markdown.py's parse (pyromark: pulldown-cmark) against markdown-it-py, the
reference parser it replaced: the same blocks with the same line ranges and
sources, the same headings (text, level, lines, columns), on this
repository's markdown and on generated documents; and line numbers that count
characters, not the UTF-8 bytes pyromark's ranges count.

Known differences, where the parsers disagree and markdown.py follows CommonMark
(or the difference is no semantic of CommonMark's), are spelled out in
:func:`_known`. Where a generated document finds another, CommonMark's reference
implementation (cmark-gfm) is the witness: the difference is markdown-it-py's
only when cmark-gfm renders the document as pulldown-cmark does
(:func:`commonmark_agrees`); nothing else may differ.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import cmarkgfm
import pyromark
from cmarkgfm.cmark import Options as CmarkOptions
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from skill_eval.linter.markdown import block_tokens, inline_code_spans, normalize_heading_text, parse_markdown, \
    split_front_matter

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = MarkdownIt("commonmark").enable("table")
CONTAINERS = ("bullet_list_open", "ordered_list_open", "list_item_open", "blockquote_open")


def _plain(children) -> str:
    parts = []
    for token in children or ():
        if token.type in ("text", "code_inline"):
            parts.append(token.content)
        elif token.type in ("softbreak", "hardbreak"):
            parts.append(" ")
        elif token.type == "image":
            parts.append(_plain(token.children))
    return " ".join("".join(parts).split())


def _blocks(tokens) -> list[tuple]:
    """What the rules read of each token with a line range (``tbody_open``'s
    lines are its first row's and its table's end: markdown.py has none)."""
    found = []
    for token in tokens:
        if token.map is None or token.type == "tbody_open":
            continue
        content = token.content if token.type in ("inline", "fence", "code_block", "html_block") else ""
        info = token.info.strip() if token.type == "fence" else ""
        start = token.attrGet("start") if token.type == "ordered_list_open" else None
        text = _plain(token.children) if token.type == "inline" else ""
        found.append((token.type, tuple(token.map), content, info, start, text))
    return found


def _known(text: str, reference: tuple, ours: tuple) -> bool:
    """Whether two differing blocks differ only as documented:

    - an ``inline`` token's later lines: markdown-it-py keeps the indentation
      past its container's, markdown.py drops it all (CommonMark drops it
      from the paragraph; every reader of ``content`` collapses whitespace);
    - an empty list item or block quote followed by blank lines: the two
      parsers' line ranges take different numbers of them (CommonMark
      defines no line ranges; a blank line is a block boundary either way);
    - a paragraph's text ending in a Unicode space that is no space or tab
      (U+00A0): markdown-it-py strips it, CommonMark and pyromark keep it.

    Two more are in no generated document: an autolink's text is its URI as
    written (CommonMark; markdown-it-py decodes its ``%`` escapes), and the
    cases of the tests below.
    """
    kind, span, content, info, start, plain = reference
    if kind != ours[0] or info != ours[3] or start != ours[4]:
        return False
    if kind in CONTAINERS and span != ours[1]:
        lines, (low, high) = text.split("\n"), sorted((span[1], ours[1][1]))
        return span[0] == ours[1][0] and not any(line.strip(" \t>") for line in lines[low:high])
    if kind == "inline" and span == ours[1]:
        return ([line.lstrip(" \t") for line in content.split("\n")] == ours[2].split("\n")
                and (plain == ours[5] or plain == " ".join(ours[5].split())))
    return False


def _same_blocks(text: str) -> tuple[bool, tuple]:
    """Whether markdown.py's blocks are markdown-it-py's, but for :func:`_known`
    differences; and the two lists, to show."""
    reference, ours = _blocks(REFERENCE.parse(text)), _blocks(block_tokens(text))
    same = len(reference) == len(ours) and all(
        expected == got or _known(text, expected, got) for expected, got in zip(reference, ours))
    return same, (reference, ours)


def assert_same_blocks(text: str) -> None:
    same, shown = _same_blocks(text)
    assert same, shown


_BETWEEN_TAGS = re.compile(r">\s+<")
_ALIGN = re.compile(r' style="text-align: (left|center|right)"')


def commonmark_agrees(text: str) -> bool:
    """Whether cmark-gfm (CommonMark's reference implementation, with GFM
    tables and raw HTML kept) renders ``text`` to the same HTML as
    pulldown-cmark, whitespace between tags, the two ways of writing a
    column's alignment and which characters are escaped as entities aside."""
    ours = pyromark.html(text, options=pyromark.Options.ENABLE_TABLES)
    reference = cmarkgfm.markdown_to_html_with_extensions(text, options=CmarkOptions.CMARK_OPT_UNSAFE,
                                                         extensions=["table"])
    return (html.unescape(_BETWEEN_TAGS.sub("><", _ALIGN.sub(r' align="\1"', ours)).strip())
            == html.unescape(_BETWEEN_TAGS.sub("><", reference).strip()))


def reference_headings(text: str) -> list[tuple]:
    """``(level, text, line, end_line, column)`` of each heading, from markdown-it-py's tokens."""
    tokens, lines, found = REFERENCE.parse(split_front_matter(text)[1]), text.split("\n"), []
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[index + 1]
            first = inline.content.split("\n", 1)[0].strip()
            column = lines[token.map[0]].find(first) + 1 if first else len(lines[token.map[0]]) + 1
            found.append((int(token.tag[1]), _plain(inline.children), token.map[0] + 1, token.map[1], column))
    return found


def our_headings(text: str) -> list[tuple]:
    return [(h.level, h.text, h.line, h.end_line, h.column) for h in parse_markdown(text).headings]


def _repository_markdown() -> list[Path]:
    return sorted(path for folder in ("docs", "examples", "tests/fixtures") for path in (ROOT / folder).rglob("*.md"))


def test_the_repositorys_markdown_parses_as_markdown_it_py_parses_it() -> None:
    paths = _repository_markdown()
    assert len(paths) > 100
    for path in paths:
        try:
            text = path.read_text(encoding="utf-8").replace("\r\n", "\n")
        except UnicodeDecodeError:  # a fixture of unreadable files
            continue
        assert_same_blocks(text)
        assert our_headings(text) == reference_headings(text), path


_WORDS = st.sampled_from(["word", "Step 2", "é", "漢字", "😀", "`code`", "``a ` b``", "*em*", "**strong**", "_u_",
                          "[link](http://x.y \"title\")", "![alt *t*](i.png)", "\\#", "\\*", "&amp;", "&#35;", "<b>",
                          "<!-- skill-eval: disable SE101 -->", "#", "##", "|", "a|b", "\\|", "x  ", "C#", "a\tb", "1.",
                          "-", ">", "~~s~~", "<http://a.b>", "foo\\"])
_TEXT = st.lists(_WORDS, min_size=1, max_size=5).map(" ".join)
"""A tab lies between words, never right after a container's mark: see
test_a_tab_after_nested_marks_counts_to_its_tab_stop."""
_NO_PIPE = _TEXT.map(lambda text: text.replace("|", "/"))  # see test_a_pipe_line_over_dashes_is_a_setext_heading
_BLOCK = st.one_of(
    st.builds("# {}".format, _TEXT), st.builds("### {} ###".format, _TEXT), st.builds("{}\n===".format, _TEXT),
    st.builds("{}\n{}\n---".format, _TEXT, _NO_PIPE), st.builds("- {}".format, _TEXT), st.builds("  - {}".format, _TEXT),
    st.builds("3. {}\n   {}".format, _TEXT, _TEXT), st.builds("> {}".format, _TEXT), st.builds("> ## {}".format, _TEXT),
    st.builds("- > {}".format, _TEXT), st.builds("```py\n{}\n```".format, _TEXT), st.builds("~~~\n{}".format, _TEXT),
    st.builds("    {}".format, _TEXT), st.builds("| a | b |\n|---|:-:|\n| {} | x |\n".format, _TEXT),
    st.builds("<div>\n{}\n</div>".format, _TEXT), st.builds("<!-- {} -->".format, _TEXT), _TEXT,
    st.builds("  {}".format, _TEXT), st.builds("\t{}".format, _TEXT), st.just(""), st.just("***"),
)


@settings(max_examples=500, deadline=None)
@given(st.lists(_BLOCK, min_size=1, max_size=8), st.sampled_from(["\n", "\n\n"]))
def test_generated_documents_parse_as_markdown_it_py_parses_them(blocks: list[str], joiner: str) -> None:
    text = joiner.join(blocks) + "\n"
    same, shown = _same_blocks(text)
    if not same or our_headings(text) != reference_headings(text):
        assert commonmark_agrees(text), shown


@pytest.mark.parametrize("text", ["> word\n    >\n", "> <b>\n    >\n"])
def test_where_markdown_it_py_leaves_commonmark_cmark_gfm_decides(text: str) -> None:
    """A line indented four spaces after a block quote: a lazy continuation of
    its paragraph (CommonMark), where markdown-it-py ends the paragraph; after
    an HTML block in a quote (no lazy continuation) indented code, where
    markdown-it-py keeps the line in the quote. Hypothesis found both."""
    assert not _same_blocks(text)[0]
    assert commonmark_agrees(text)


@pytest.mark.parametrize("text", ["Step `2` *now*", "a ``b`` c", "![alt](x.png) and [link](y)", "C#", "Issue #",
                                  "`x` #", "# Title", "- item", "1. one", "> quote", "===", "| a | b |", "&amp; \\*",
                                  "<b>bold</b> text", "tab\there"])
def test_inline_parses_match_markdown_it_pys(text: str) -> None:
    children = REFERENCE.parseInline(text)[0].children
    assert inline_code_spans(text) == [c.content for c in children if c.type == "code_inline"]
    expected = " ".join(text.strip().lstrip("#").strip().split()) if not any(c in text for c in "*_`[]<>&\\!") \
        else _plain(REFERENCE.parseInline(text.strip().lstrip("#").strip())[0].children)
    assert normalize_heading_text(text) == expected


def test_a_pipe_line_over_dashes_is_a_setext_heading() -> None:
    """Known difference: a line holding a pipe over a ``---`` line without
    one (and no other) is a one-column table to markdown-it-py; CommonMark reads a setext
    heading, and so do pulldown-cmark and markdown.py (a table's delimiter
    row with pipes is a table to both)."""
    assert [t.type for t in REFERENCE.parse("Notes |\n---\n")][0] == "table_open"
    assert our_headings("Notes |\n---\n") == [(2, "Notes |", 1, 2, 1)]
    assert [t.type for t in block_tokens("| Notes |\n|---|\n")][0] == "table_open"


def test_an_indented_line_after_a_table_row_is_a_row() -> None:
    """Known difference: a line indented 4 spaces right after a table row is
    indented code to markdown-it-py (as to cmark-gfm), another row to
    pulldown-cmark (GFM's specification says neither; the generated
    documents leave a blank line after a table)."""
    text = "| a | b |\n|---|---|\n| c | d |\n    e\n"
    assert [t.type for t in REFERENCE.parse(text) if t.map][-1] == "code_block"
    assert [t.content for t in block_tokens(text) if t.type == "inline"][-2:] == ["e", ""]


def test_a_cell_holding_a_collapsed_reference_keeps_it() -> None:
    text = "| a | b |\n|---|---|\n| [x][] | y \\| z |\n\n[x]: https://example.com\n"
    assert_same_blocks(text)
    assert [t.content for t in block_tokens(text) if t.type == "inline"] == ["a", "b", "[x][]", "y | z"]


def test_empty_items_apart_are_one_list() -> None:
    """Known difference: two empty items with blank lines between them are
    one list (CommonMark since 0.26: blank lines no longer end a list;
    pulldown-cmark); markdown-it-py's empty item skips a line and opens a
    second list. The generated documents hold no empty item."""
    text = "-\n\n\n\n-\n"
    assert [t.type for t in REFERENCE.parse(text)].count("bullet_list_open") == 2
    assert [t.type for t in block_tokens(text)].count("bullet_list_open") == 1


def test_a_tab_after_nested_marks_counts_to_its_tab_stop() -> None:
    """Known difference: after ``> > `` (column 4) a tab runs to column 8,
    so ``\\t word`` is indented code holding `` word`` (CommonMark's tab
    stops of 4, as pulldown-cmark counts them); markdown-it-py counts the tab
    from the inner quote's content and drops the space. Both agree on the
    specification's own examples of tabs."""
    assert [(t.type, t.content) for t in REFERENCE.parse("> > \t word\n") if t.type == "code_block"] == [
        ("code_block", "word\n")]
    assert [(t.type, t.content) for t in block_tokens("> > \t word\n") if t.type == "code_block"] == [
        ("code_block", " word\n")]
    for text, code in ((">\t\tfoo\n", "  foo\n"), ("-\t\tfoo\n", "  foo\n")):  # CommonMark examples 6 and 7
        assert [t.content for t in block_tokens(text) if t.type == "code_block"] == [code]


# -- offsets: pyromark's ranges count UTF-8 bytes, lines and columns count characters


def test_lines_and_columns_after_multibyte_characters() -> None:
    text = "Ünïcödé 漢字 😀 text\n\n## Étape 2 — 😀\n\n> 漢字\n> ### Deep 😀\n\n| é | 😀 |\n|---|---|\n| 漢 | x |\n"
    doc = parse_markdown(text)
    assert [(h.text, h.line, h.column, h.end_column) for h in doc.headings] == [
        ("Étape 2 — 😀", 3, 4, 15), ("Deep 😀", 6, 7, 13)]
    assert [(b.start_line, b.text) for b in doc.blocks] == [
        (1, "Ünïcödé 漢字 😀 text"), (3, "Étape 2 — 😀"), (5, "漢字"), (6, "Deep 😀"), (8, "é"), (8, "😀"), (10, "漢"),
        (10, "x")]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_count_as_one_line_break(newline: str) -> None:
    text = newline.join(["# One", "", "Two", "===", "", "```", "# not", "```", "", "### Three é", ""])
    assert our_headings(text) == [(1, "One", 1, 1, 3), (1, "Two", 3, 4, 1), (3, "Three é", 10, 10, 5)]
    assert [(t.type, t.map) for t in block_tokens(text) if t.type == "fence"] == [("fence", (5, 8))]


def test_tabs_and_a_byte_order_mark() -> None:
    assert our_headings("#\tTab\theading\n\n\t# indented code\n") == [(1, "Tab heading", 1, 1, 3)]
    assert [t.type for t in block_tokens("\t# indented code\n")] == ["code_block"]
    # a BOM is text to both parsers (decode_text drops it from files before)
    assert our_headings("\ufeff# Title\n") == reference_headings("\ufeff# Title\n") == []


def test_a_lone_surrogate_does_not_stop_the_parse() -> None:
    assert our_headings("# A \udc80 b\n") == [(1, "A ? b", 1, 1, 3)]
