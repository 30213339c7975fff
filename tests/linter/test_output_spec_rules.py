"""output-spec.md rules SE108 (duplicate-field) and SE109 (values-without-code-spans)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.fixes import apply_edits
from skill_eval.linter.outputspec import parse_output_spec


def lint_spec(tmp_path: Path, spec: str, skill: str = "# S\n\nverdict risk notes flags\n") -> list:
    (tmp_path / "skill-eval.toml").write_text("# root\n")
    folder = tmp_path / "s"
    folder.mkdir(exist_ok=True)
    (folder / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n" + skill)
    (folder / "output-spec.md").write_text(spec)
    return [d for d in lint_paths([tmp_path]).diagnostics if d.code in ("SE108", "SE109")]


@pytest.mark.parametrize("line, values", [
    ("Values: PASS, NOT_PROVEN", ("PASS", "NOT_PROVEN")),
    ("Values: PASS or FAIL.", ("PASS", "FAIL")),
    ("Values: low | medium | high", ("low", "medium", "high")),
])
def test_plain_values_are_reported_and_the_fix_makes_them_values(tmp_path: Path, line: str, values) -> None:
    spec = f"# A\n\n## `verdict`\n{line}\n"
    (found,) = lint_spec(tmp_path, spec)
    assert found.code == "SE109" and found.start.line == 4
    fixed = apply_edits(spec, found.fixes[0].edits)
    assert parse_output_spec(fixed).fields["verdict"].values == values
    assert lint_spec(tmp_path, fixed) == []


def test_values_on_the_lines_below_are_reported_without_a_fix(tmp_path: Path) -> None:
    (found,) = lint_spec(tmp_path, "## `verdict`\nValues:\n- `PASS`\n- `FAIL`\n")
    assert found.code == "SE109" and found.fixes == () and "on the Values: line itself" in found.message


def test_a_values_line_in_a_code_block_is_not_read(tmp_path: Path) -> None:
    assert lint_spec(tmp_path, "## `verdict`\nValues: `PASS`\n\n```\nValues: PASS\n```\n") == []


@pytest.mark.parametrize("spec, expected", [
    ("## `verdict`\nValues: `A`\n\n## `verdict`\nValues: `B`\n", [("SE108", 4, "defined twice")]),
    ("## `verdict`\n\n## `Verdict`\n", [("SE108", 3, "only in case")]),
    ("## `verdict`\n\n## `notes`\nAliases: `verdict`\n", [("SE108", 4, "equals field 'verdict'")]),
    ("## `risk`\nAliases: `flags`\n\n## `notes`\nAliases: `FLAGS`\n", [("SE108", 5, "alias 'flags' of field 'risk'")]),
    ("## `verdict`\nAliases: `Verdict`\n\n## `risk`\n", []),
])
def test_duplicate_names_and_aliases(tmp_path: Path, spec: str, expected) -> None:
    found = lint_spec(tmp_path, spec)
    assert [(d.code, d.start.line) for d in found] == [(code, line) for code, line, _ in expected]
    for diagnostic, (_code, _line, words) in zip(found, expected):
        assert words in diagnostic.message and diagnostic.related


def test_grading_lookups_keep_working() -> None:
    """evals/grading.py reads the spec through lookup/lookup_answer_key."""
    spec = parse_output_spec("## `verdict`\nValues: `PASS`\nAliases: `call`\n\n## `verdict`\nValues: PASS\n")
    assert spec.lookup("call").values == ("PASS",)
    assert spec.lookup_answer_key("VERDICT").name == "verdict"
    assert [u.line for u in spec.uncoded_lists] == [6] and spec.duplicates[0].heading.line == 5
