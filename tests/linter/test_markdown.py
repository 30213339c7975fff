"""Unit tests of markdown.py: headings, their normalization, windows and prose."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.markdown import (
    AmbiguousHeading,
    HeadingNotFound,
    extract_skill_section,
    normalize_heading_text,
    parse_markdown,
    split_front_matter,
)
from skill_eval.linter.textfile import decode_text

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"


def texts(markdown: str) -> list[str]:
    return [h.text for h in parse_markdown(markdown).headings]


# -- headings ---------------------------------------------------------------------


def test_atx_and_setext_headings_with_levels_and_lines() -> None:
    doc = parse_markdown("# One\n\nTwo\n===\n\nThree\n---\n\n### Four ###\n")
    assert [(h.text, h.level, h.line, h.end_line) for h in doc.headings] == [
        ("One", 1, 1, 1),
        ("Two", 1, 3, 4),
        ("Three", 2, 6, 7),
        ("Four", 3, 9, 9),
    ]


def test_closing_hashes_are_not_text_but_escaped_ones_are() -> None:
    assert texts("## Step 2 ##\n## Step 3 #####   \n## C\\#\n## Issue #5\n") == ["Step 2", "Step 3", "C#", "Issue #5"]


def test_heading_columns_delimit_the_text() -> None:
    heading = parse_markdown("###   Step 1: Read  \n").headings[0]
    assert (heading.column, heading.end_column) == (7, 19)


@pytest.mark.parametrize(
    "line, expected",
    [
        ("## Step *one*: the **evidence**", "Step one: the evidence"),
        ("## _Check_ __who__ verified", "Check who verified"),
        ("## See [the guide](https://example.com/x) now", "See the guide now"),
        ("## Return `NOT_PROVEN`", "Return NOT_PROVEN"),
        ("## Tom &amp; Jerry &#35;1 &copy;", "Tom & Jerry #1 \u00a9"),
        ("##   Lots    of\tspace   ", "Lots of space"),
        ("## ![logo](x.png) Brand", "logo Brand"),
    ],
)
def test_inline_markup_is_normalized(line: str, expected: str) -> None:
    assert texts(line + "\n") == [expected]


def test_step_heading_is_normalized_like_a_heading() -> None:
    assert normalize_heading_text("## Step *one*: the `evidence`") == "Step one: the evidence"
    assert normalize_heading_text("   ###Step 1  ") == "Step 1"
    assert normalize_heading_text("Tom &amp; Jerry") == "Tom & Jerry"


def test_code_html_and_front_matter_never_yield_headings() -> None:
    text = (
        "---\n"
        "title: x\n"
        "# not a heading: front matter\n"
        "---\n"
        "\n"
        "# Real\n"
        "\n"
        "```markdown\n"
        "## Fenced\n"
        "```\n"
        "\n"
        "~~~\n"
        "# Tilde fenced\n"
        "~~~\n"
        "\n"
        "    # Indented code\n"
        "\n"
        "<div>\n"
        "# Inside an HTML block\n"
        "</div>\n"
        "\n"
        "<!--\n"
        "## Inside a comment\n"
        "-->\n"
        "\n"
        "## Also real\n"
    )
    doc = parse_markdown(text)
    assert [(h.text, h.line) for h in doc.headings] == [("Real", 6), ("Also real", 26)]
    kinds = [(b.kind, b.start_line) for b in doc.blocks if b.kind != "prose"]
    assert kinds == [("code", 8), ("code", 12), ("code", 16), ("html", 18), ("html", 22)]


def test_front_matter_lines_keep_their_numbers() -> None:
    doc = parse_markdown("---\nname: a\n---\n# Title\n")
    assert doc.headings[0].line == 4
    assert doc.front_matter is not None and doc.front_matter.text == "name: a"


def test_a_dash_line_inside_a_yaml_value_does_not_close_the_front_matter() -> None:
    # skills-ref splits on the first "---" it meets; the front matter closes only
    # at a line that is exactly --- or ... at column 0.
    text = (
        "---\n"
        "name: dashes\n"
        "description: |\n"
        "  Sections are separated like this:\n"
        "  ---\n"
        "  and a --- inside a line is fine.\n"
        "  ...\n"
        "license: \"MIT --- see LICENSE\"\n"
        "---\n"
        "# Body\n"
    )
    front, body = split_front_matter(text)
    assert front is not None and front.end_line == 9
    assert "  ---\n" in front.text and front.text.endswith('license: "MIT --- see LICENSE"')
    import yaml

    data = yaml.safe_load(front.text)
    assert data["description"].splitlines()[1] == "---"
    assert data["license"] == "MIT --- see LICENSE"
    doc = parse_markdown(text)
    assert [(h.text, h.line) for h in doc.headings] == [("Body", 10)]
    # the naive split of skills-ref would end the front matter inside the description
    assert text.split("---", 2)[1] != front.text + "\n"


def test_unclosed_front_matter_has_no_end() -> None:
    front, body = split_front_matter("---\nname: a\n  ---\n# T\n")
    assert front is not None and front.end_line is None
    assert body.startswith("---")


def test_only_a_first_line_dash_opens_front_matter() -> None:
    assert split_front_matter("\n---\nname: a\n---\n")[0] is None
    assert split_front_matter("--- x\nname: a\n---\n")[0] is None
    assert split_front_matter("---  \nname: a\n...\n")[0].end_line == 3


# -- paths and matching --------------------------------------------------------------

SKILL = """\
# Verify closeout

Intro.

## Closeout

### Step 1

Closeout rule.

#### Detail

Deep text.

### Step 2

Second.

## Review

### Step 1

Review rule.
"""


def test_parents_and_paths() -> None:
    doc = parse_markdown(SKILL)
    step1, review_step1 = [h for h in doc.headings if h.text == "Step 1"]
    assert [a.text for a in doc.ancestors(step1)] == ["Closeout", "Verify closeout"]
    assert doc.path_of(step1) == "Closeout > Step 1"
    assert doc.path_of(review_step1) == "Review > Step 1"
    assert doc.path_of(doc.headings[0]) == "Verify closeout"


def test_parent_child_path_and_leading_hashes() -> None:
    doc = parse_markdown(SKILL)
    assert [h.line for h in doc.find_headings("Review > Step 1")] == [21]
    assert [h.line for h in doc.find_headings("## Review > ### Step 1")] == [21]
    assert [h.line for h in doc.find_headings("Verify closeout > Step 1")] == [7, 21]
    assert [h.line for h in doc.find_headings("Verify closeout > Closeout > Step 1")] == [7]
    assert [h.line for h in doc.find_headings("#### Detail")] == [11]
    assert doc.find_headings("step 1") == []  # case-sensitive


def test_extract_skill_section_window_ends_at_same_or_higher_level() -> None:
    window = extract_skill_section(SKILL, "Closeout > Step 1")
    assert (window.start_line, window.end_line) == (7, 13)  # includes #### Detail, stops before ### Step 2
    assert "Deep text." in window.text and "Second." not in window.text
    window = extract_skill_section(SKILL, "Step 2")
    assert (window.start_line, window.end_line) == (15, 17)  # stops before ## Review
    window = extract_skill_section(SKILL, "Closeout")
    assert (window.start_line, window.end_line) == (5, 17)
    window = extract_skill_section(SKILL, "Review > Step 1")
    assert (window.start_line, window.end_line) == (21, 23)  # end of file, trailing blank trimmed
    window = extract_skill_section(SKILL, "# Verify closeout")
    assert (window.start_line, window.end_line) == (1, 23)


def test_extract_skill_section_from_a_path_and_a_document(tmp_path: Path) -> None:
    path = tmp_path / "SKILL.md"
    path.write_bytes(b"\xef\xbb\xbf" + SKILL.replace("\n", "\r\n").encode())
    window = extract_skill_section(path, "Step 2")
    assert (window.start_line, window.end_line) == (15, 17)
    assert window.text.splitlines()[-1] == "Second."
    doc = parse_markdown(SKILL)
    assert extract_skill_section(doc, "Step 2").heading is doc.headings[4]


def test_extract_skill_section_errors() -> None:
    with pytest.raises(AmbiguousHeading) as ambiguous:
        extract_skill_section(SKILL, "Step 1")
    assert ambiguous.value.paths == ("Closeout > Step 1", "Review > Step 1")
    with pytest.raises(HeadingNotFound) as missing:
        extract_skill_section(SKILL, "step 2")
    assert missing.value.suggestions[0] == "Step 2"


def test_setext_window() -> None:
    text = "Top\n===\n\nStep A\n------\n\nRule A.\n\nStep B\n------\n\nRule B.\n"
    window = extract_skill_section(text, "Step A")
    assert (window.start_line, window.end_line) == (4, 7)
    assert window.heading.end_line == 5


# -- prose --------------------------------------------------------------------------


def test_window_prose_counts_text_not_code_or_comments() -> None:
    text = (
        "## Step\n"
        "\n"
        "Mark it _NOT_PROVEN_, see [the guide](https://example.com/unproven).\n"
        "The `verdict` is set <!-- confidence: high --> once.\n"
        "\n"
        "| field | note |\n"
        "|---|---|\n"
        "| risk | table cells count |\n"
        "\n"
        "> quoted reviewer rule\n"
        "\n"
        "- listed severity\n"
        "\n"
        "```\n"
        "fenced_word\n"
        "```\n"
        "\n"
        "    indented_word\n"
        "\n"
        "<!-- commented_word -->\n"
    )
    window = extract_skill_section(text, "Step")
    for word in ("NOT_PROVEN", "verdict", "risk", "reviewer", "severity", "guide", "Step"):
        assert window.mentions(word), word
    for word in ("unproven", "confidence", "fenced_word", "indented_word", "commented_word", "PROVEN"):
        assert not window.mentions(word), word
    assert window.has_prose_besides_heading()


def test_window_without_prose() -> None:
    window = extract_skill_section("## Empty\n\n```\ncode\n```\n\n<!-- note -->\n\n## Next\n\nText.\n", "Empty")
    assert not window.has_prose_besides_heading()


def test_directives_disable_and_disable_file() -> None:
    doc = parse_markdown("<!-- skill-eval: disable-file SE107 -->\n# T\n\n<!-- skill-eval: disable SE104, SE103 -->\n## A\n")
    assert [(d.line, d.whole_file, sorted(d.codes)) for d in doc.directives] == [
        (1, True, ["SE107"]),
        (4, False, ["SE103", "SE104"]),
    ]
    assert doc.is_suppressed("SE107", 99)
    assert doc.is_suppressed("SE104", 5) and not doc.is_suppressed("SE104", 6)


# -- a real-world SKILL.md ---------------------------------------------------------


@pytest.fixture(scope="module")
def skill_creator():
    return parse_markdown(decode_text((REAL / "skill-creator" / "SKILL.md").read_bytes()))


def test_real_skill_creator_fenced_report_structure_is_not_a_heading(skill_creator) -> None:
    lines = skill_creator.lines
    fenced = lines.index("## Report structure") + 1
    assert lines[fenced - 2] == "```markdown"
    assert all(h.text != "Report structure" for h in skill_creator.headings)
    assert all(h.line != fenced for h in skill_creator.headings)
    assert any(b.kind == "code" and b.start_line < fenced <= b.end_line for b in skill_creator.blocks)
    for fake in ("[Title]", "Executive summary", "Commit message format"):
        assert skill_creator.find_headings(fake) == []
    window = extract_skill_section(skill_creator, "Writing Patterns")
    assert window.start_line < fenced <= window.end_line  # the fenced ## does not end the window
    assert window.mentions("imperative") and not window.mentions("Recommendations")


def test_real_skill_creator_has_two_step_1_headings(skill_creator) -> None:
    steps = [h for h in skill_creator.headings if h.text.startswith("Step 1")]
    assert [(h.level, h.text) for h in steps] == [
        (3, "Step 1: Spawn all runs (with-skill AND baseline) in the same turn"),
        (3, "Step 1: Generate trigger eval queries"),
    ]
    parents = [skill_creator.headings[h.parent].text for h in steps]
    assert parents == ["Running and evaluating test cases", "Description Optimization"]
    with pytest.raises(HeadingNotFound) as missing:
        extract_skill_section(skill_creator, "Step 1")
    assert missing.value.suggestions[0].startswith("Step 1")
    window = extract_skill_section(skill_creator, "Description Optimization > Step 1: Generate trigger eval queries")
    assert window.heading is steps[1]
    assert (window.start_line, window.end_line) == (337, 358)
    assert skill_creator.lines[360 - 1] == "### Step 2: Review with user"


def test_real_skill_creator_heading_count_matches_atx_lines_outside_fences(skill_creator) -> None:
    code_lines = set()
    for block in skill_creator.blocks:
        if block.kind == "code":
            code_lines.update(range(block.start_line, block.end_line + 1))
    atx = [n for n, line in enumerate(skill_creator.lines, start=1) if line.startswith("#") and n not in code_lines]
    assert [h.line for h in skill_creator.headings] == atx
    assert skill_creator.front_matter is not None and skill_creator.front_matter.end_line == 4


def test_step_heading_and_headings_compare_in_nfc() -> None:
    """A heading written decomposed (NFD) in SKILL.md is found by a
    step_heading written composed (NFC), and the other way round."""
    import unicodedata

    from skill_eval.linter.markdown import parse_markdown

    composed = "Step 2: Vérifier le résumé"
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    for heading, query in ((decomposed, composed), (composed, decomposed), (decomposed, decomposed)):
        document = parse_markdown(f"# Skill\n\n## {heading}\n\nBody.\n")
        found = document.find_headings(query)
        assert [h.text for h in found] == [composed], (heading, query)
    nested = parse_markdown(f"# Parent é\n\n## {decomposed}\n")
    assert len(nested.find_headings(unicodedata.normalize("NFD", "Parent é") + " > " + composed)) == 1
