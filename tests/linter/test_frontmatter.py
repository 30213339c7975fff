"""SE7xx front-matter rules: positions from PyYAML marks, and no crash on odd input."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.rules.frontmatter.se706_invalid_skill_name import name_problem, slug


def lint_skill(tmp_path: Path, text: str | bytes, folder: str = "my-skill", toml: str = "") -> list[tuple]:
    (tmp_path / "skill-eval.toml").write_text(toml or "# root\n")
    skill = tmp_path / folder / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
    result = lint_paths([tmp_path], overrides={"select": ("SE0", "SE7")})
    return [(d.code, d.start.line, d.start.column, d.end.line, d.end.column) for d in result.diagnostics]


def test_valid_front_matter_is_clean(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: >\n  Folded text\n  on two lines.\nmetadata:\n  a: b\nallowed-tools: Read Bash\n---\n# T\n"
    assert lint_skill(tmp_path, text) == []


def test_positions_are_offset_by_the_front_matter_start(tmp_path: Path) -> None:
    text = "---\n# comment\nname:   wrong-name\ndescription: ok\n---\n"
    assert lint_skill(tmp_path, text) == [("SE707", 3, 9, 3, 19)]


def test_crlf_and_bom_keep_positions(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: ok\nextra_key: 1\n---\n# T\n"
    raw = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    assert lint_skill(tmp_path, raw) == [("SE710", 4, 1, 4, 10)]


def test_yaml_error_position(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: [unclosed\n---\n"
    (code, line, column, *_), = lint_skill(tmp_path, text)
    assert code == "SE703" and line >= 3


def test_multiline_value_span_ends_on_its_last_line(tmp_path: Path) -> None:
    long = "\n".join("  " + "w" * 100 for _ in range(11))
    text = f"---\nname: my-skill\ndescription: |\n{long}\n---\n"
    assert lint_skill(tmp_path, text) == [("SE708", 3, 14, 14, 103)]


def test_allowed_keys_from_config(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: ok\nargument-hint: x\n---\n"
    assert lint_skill(tmp_path, text) == [("SE710", 4, 1, 4, 14)]
    assert lint_skill(tmp_path, text, toml='[frontmatter]\nallowed-keys = ["argument-hint"]\n') == []


@pytest.mark.parametrize(
    "text",
    [
        "",
        "---",
        "---\n---",
        "---\n...\n",
        "---\n!!binary |\n  aGVsbG8=\n---\n",
        "---\n&a [*a]\n---\n",
        "---\n? [complex, key]\n: value\nname: my-skill\ndescription: d\n---\n",
        "---\nname: [a, b]\ndescription: {x: 1}\ncompatibility: 3\n---\n",
        "---\nname: !!python/object:os.system ls\ndescription: d\n---\n",
        "---\nname: my-skill\nname: my-skill\ndescription: d\n---\n",
        "---\n\tname: tab\n---\n",
        "---\nname: \"\\x00\"\ndescription: d\n---\n",
        "---\n" + "[" * 2000 + "\n---\n",
        "---\nname: my-skill\ndescription: d\n---\n---\nsecond: doc\n---\n",
        "\ufeff---\nname: my-skill\ndescription: d\n---\n",
    ],
)
def test_rules_never_crash(tmp_path: Path, text: str) -> None:
    found = lint_skill(tmp_path, text)
    assert all(code != "SE000" for code, *_ in found), found


def test_name_rules() -> None:
    assert name_problem("pdf-processing") is None
    assert name_problem("a") is None and name_problem("a" * 64) is None
    assert "65 characters" in name_problem("a" * 65)
    assert name_problem("") == "is empty"
    assert "hyphen" in name_problem("-pdf") and "hyphen" in name_problem("pdf-")
    assert "--" in name_problem("pdf--processing")
    assert "'P'" in name_problem("PDF-processing")
    assert "'_'" in name_problem("pdf_processing") and "' '" in name_problem("pdf processing")
    assert name_problem("caf\u00e9") is None  # Unicode lowercase letters are letters
    assert slug("PDF_Processing  Tool") == "pdf-processing-tool"


def _lint_full(tmp_path: Path, text: str, folder: str = "my-skill"):
    (tmp_path / "skill-eval.toml").write_text("# root\n")
    skill = tmp_path / folder / "SKILL.md"
    skill.parent.mkdir(parents=True, exist_ok=True)
    skill.write_text(text, encoding="utf-8")
    return lint_paths([tmp_path], overrides={"select": ("SE0", "SE7")}).diagnostics


@pytest.mark.parametrize("value", ['""', '"   "', "''", "\"\\t\""])
def test_an_empty_compatibility_string_is_reported(tmp_path: Path, value: str) -> None:
    text = f"---\nname: my-skill\ndescription: d\ncompatibility: {value}\n---\n"
    assert [code for code, *_ in lint_skill(tmp_path, text)] == ["SE709"]


@pytest.mark.parametrize("text, expected", [
    ("---\nname: my-skill\ndescription: d\nname: my-skill\n---\n", [("SE711", 4, 1, 2)]),
    ("---\nname: my-skill\ndescription: d\ndescription: e\nlicense: MIT\n---\n", [("SE711", 4, 1, 3)]),
    ("---\nname: my-skill\ndescription: d\nmetadata:\n  a: b\n  c: d\n  a: e\n---\n", [("SE711", 7, 3, 5)]),
    ("---\nname: my-skill\ndescription: d\nmetadata: {a: b, a: c}\n---\n", [("SE711", 4, 18, 4)]),
    ("---\nname: my-skill\ndescription: d\nmetadata:\n  a: b\nother:\n  a: b\n---\n", [("SE710", 6, 1, None)]),
])
def test_duplicate_keys_are_reported_at_the_repeat_with_the_first_related(tmp_path: Path, text: str, expected) -> None:
    """PyYAML's loader keeps the last of two equal keys silently; the composed
    nodes keep both, and the repeat is reported with the first as related."""
    found = [(d.code, d.start.line, d.start.column, d.related[0].span.start.line if d.related else None)
             for d in _lint_full(tmp_path, text)]
    assert found == expected


def test_equal_keys_in_different_mappings_are_not_duplicates(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: d\nmetadata:\n  name: x\n  description: y\n---\n"
    assert lint_skill(tmp_path, text) == []


@pytest.mark.parametrize("entries, kinds", [
    ("  version: 1.10\n", ["number"]),
    ("  reviewed: 2025-01-31\n  stable: yes\n", ["date", "boolean"]),
    ("  tags: [a, b]\n  owner:\n", ["list", "empty"]),
    ("  1: one\n", ["number"]),
])
def test_metadata_maps_strings_to_strings(tmp_path: Path, entries: str, kinds: list[str]) -> None:
    text = f"---\nname: my-skill\ndescription: d\nmetadata:\n{entries}---\n"
    found = [d for d in _lint_full(tmp_path, text) if d.code == "SE712"]
    assert [next(k for k in ("number", "date", "boolean", "list", "empty") if k in d.message) for d in found] == kinds


def test_metadata_quote_fix_keeps_the_value_as_written(tmp_path: Path) -> None:
    """The quick fix quotes `1.10` as written: a loader then reads the string
    "1.10", not the float 1.1, and the finding is gone."""
    import yaml

    from skill_eval.linter.fixes import apply_edits

    text = "---\nname: my-skill\ndescription: d\nmetadata:\n  version: 1.10\n  date: 2025-01-31\n---\n# T\n"
    found = [d for d in _lint_full(tmp_path, text) if d.code == "SE712"]
    assert len(found) == 2 and all(d.fixes and d.fixes[0].safe for d in found)
    fixed = apply_edits(text, [edit for d in found for edit in d.fixes[0].edits])
    assert yaml.safe_load(fixed.split("---\n")[1])["metadata"] == {"version": "1.10", "date": "2025-01-31"}
    assert [d for d in _lint_full(tmp_path, fixed) if d.code == "SE712"] == []


@pytest.mark.parametrize("value", ["\n  - Bash\n  - Read\n  - Grep", " [Bash, Read, Grep]"])
def test_allowed_tools_list_is_reported_and_joined_by_the_fix(tmp_path: Path, value: str) -> None:
    import yaml

    from skill_eval.linter.fixes import apply_edits

    text = f"---\nname: my-skill\ndescription: d\nallowed-tools:{value}\nlicense: MIT\n---\n# T\n"
    found = [d for d in _lint_full(tmp_path, text) if d.code == "SE713"]
    assert len(found) == 1 and "space-separated string" in found[0].message
    fixed = apply_edits(text, found[0].fixes[0].edits)
    assert yaml.safe_load(fixed.split("---\n")[1]) == {
        "name": "my-skill", "description": "d", "allowed-tools": "Bash Read Grep", "license": "MIT"}
    assert _lint_full(tmp_path, fixed) == []


def test_allowed_tools_items_with_spaces_get_no_join_fix(tmp_path: Path) -> None:
    text = "---\nname: my-skill\ndescription: d\nallowed-tools:\n  - Bash(git add:*)\n  - Read\n---\n"
    (found,) = [d for d in _lint_full(tmp_path, text) if d.code == "SE713"]
    assert found.fixes == ()


def test_spec_examples_are_clean(tmp_path: Path) -> None:
    """The Agent Skills specification's own example front matter."""
    text = ("---\nname: my-skill\ndescription: Extract PDF text, fill forms, merge files. Use when handling PDFs.\n"
            "license: Apache-2.0\nmetadata:\n  author: example-org\n  version: \"1.0\"\n"
            "allowed-tools: Bash(git:*) Bash(jq:*) Read\ncompatibility: Requires Python 3.14+ and uv\n---\n")
    assert lint_skill(tmp_path, text) == []
