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
