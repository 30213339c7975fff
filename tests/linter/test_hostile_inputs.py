"""Hostile contents: huge integers, deep nesting, odd characters in paths,
output that must stay valid UTF-8. Each gives a diagnostic (SE001-SE005),
never SE000, an exit status of 2 or a lost probe: the probe beside it is
still linted (its own SE201 finding is there)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _workspaces import floor_probe, make_workspace, probe_folder

from skill_eval.linter.engine import lint_paths
from skill_eval.linter.probejson import MAX_DEPTH, MAX_SCHEMA_PROBLEMS, _first_too_deep


def _workspace(tmp_path: Path, hostile: str | bytes | dict) -> Path:
    """Probe ``h`` holds ``hostile``; probe ``ok`` beside it has one finding (SE201)."""
    return make_workspace(tmp_path / "ws", {"h": hostile, "ok": floor_probe("ok", seeded_defects=2)})


def _codes(root: Path, folder: str) -> list[str]:
    diagnostics = lint_paths([root], jobs=1).diagnostics
    assert "SE201" in [d.code for d in diagnostics if d.path.parent.name == "ok"], "the other probe was not linted"
    assert not [d for d in diagnostics if d.code == "SE000"], [d.message for d in diagnostics if d.code == "SE000"]
    return sorted({d.code for d in diagnostics if d.path.parent.name == folder and d.code != "SE501"})  # shared artifact


def test_an_integer_past_pythons_int_to_str_limit(tmp_path: Path) -> None:
    root = _workspace(tmp_path, '{"id": "h", "tier": 2,\n "seeded_defects": ' + "9" * 5000 + "}")
    diagnostics = lint_paths([root], jobs=1).diagnostics
    found = [d for d in diagnostics if d.path.parent.name == "h" and d.code != "SE501"]
    assert [(d.code, d.start.line, d.start.column) for d in found] == [("SE001", 2, 20)]
    assert "5,000 digits" in found[0].message
    assert "SE201" in [d.code for d in diagnostics if d.path.parent.name == "ok"]


def test_a_mebibyte_of_digits(tmp_path: Path) -> None:
    root = _workspace(tmp_path, "-" + "1" * ((1 << 20) - 10))
    assert _codes(root, "h") == ["SE001"]


def test_the_cli_lints_on_past_a_huge_integer(tmp_path: Path) -> None:
    root = _workspace(tmp_path, '{"id": "h", "tier": 2, "seeded_defects": ' + "9" * 5000 + "}")
    completed = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", "-j", "1", str(root)],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 1, completed.stderr
    assert "SE001" in completed.stdout and "SE201" in completed.stdout


def _not_chain(depth: int) -> dict:
    expectation: object = "NOT_PROVEN"
    for _ in range(depth):
        expectation = {"not": expectation}
    probe = floor_probe("h")
    probe["defects"][0]["caught_when"] = {"verdict": expectation}
    return probe


def test_not_nested_162_deep_is_a_schema_violation(tmp_path: Path) -> None:
    root = _workspace(tmp_path, _not_chain(162))
    diagnostics = [d for d in lint_paths([root], jobs=1).diagnostics if d.path.parent.name == "h" and d.code != "SE501"]
    assert [d.code for d in diagnostics] == ["SE002"]
    assert f"more than {MAX_DEPTH} levels" in diagnostics[0].message
    assert _codes(root, "h") == ["SE002"]


def test_not_nested_within_the_limit_is_validated(tmp_path: Path) -> None:
    root = _workspace(tmp_path, _not_chain(MAX_DEPTH - 8))
    assert _codes(root, "h") == []


@pytest.mark.parametrize("shape", ["arrays", "objects", "one-deep-path"])
def test_deep_nesting_in_a_large_file(tmp_path: Path, shape: str) -> None:
    """200 KB nested 100 deep (65 s of json-source-map before): SE002."""
    if shape == "arrays":
        deep = "[" * 100 + "1" + "]" * 100
        text = '{"id": "h", "tier": 2, "x-data": [' + ",".join([deep] * (200_000 // len(deep))) + "]}"
    elif shape == "objects":
        deep = '{"a":' * 100 + "1" + "}" * 100
        text = '{"id": "h", "tier": 2, "x-data": [' + ",".join([deep] * (200_000 // len(deep))) + "]}"
    else:
        text = '{"id": "h", "tier": 2, "x-data": ' + "[" * 100 + '"' + "x" * 200_000 + '"' + "]" * 100 + "}"
    root = _workspace(tmp_path, text)
    assert _codes(root, "h") == ["SE002"]
    messages = [d.message for d in lint_paths([root], jobs=1).diagnostics if d.path.parent.name == "h" and d.code == "SE002"]
    assert messages == [f"probe.json nests more than {MAX_DEPTH} levels of arrays and objects; flatten it"]


def test_nesting_past_what_the_parser_can_recurse(tmp_path: Path) -> None:
    root = _workspace(tmp_path, "[" * 200_000 + "]" * 200_000)
    diagnostics = [d for d in lint_paths([root], jobs=1).diagnostics if d.path.parent.name == "h" and d.code != "SE501"]
    assert [d.code for d in diagnostics] == ["SE001"]
    assert (diagnostics[0].start.line, diagnostics[0].start.column) == (1, MAX_DEPTH + 1)


def test_a_large_flat_probe_gets_its_first_findings_and_a_count(tmp_path: Path) -> None:
    """A ~1 MiB probe.json with 45,000 unknown keys: the first
    MAX_SCHEMA_PROBLEMS are reported, each at its key, then how many more at
    the root object's brace (json-source-map took seconds for such a file,
    and its findings stood at the first line; tree-sitter-json's tree is
    parsed once for all of them)."""
    probe = floor_probe("h")
    probe.update({f"k{index:05d}": index for index in range(45_000)})
    root = _workspace(tmp_path, probe)
    diagnostics = [d for d in lint_paths([root], jobs=1).diagnostics if d.path.parent.name == "h" and d.code != "SE501"]
    assert len(diagnostics) == MAX_SCHEMA_PROBLEMS + 1 and {d.code for d in diagnostics} == {"SE002"}
    lines = (probe_folder(root, "h") / "probe.json").read_text().split("\n")
    for diagnostic in diagnostics:
        written = lines[diagnostic.start.line - 1][diagnostic.start.column - 1:diagnostic.end.column - 1]
        if diagnostic.message.startswith("unknown key"):
            assert f"`{json.loads(written)}`" in diagnostic.message
        else:
            assert diagnostic.message.startswith(f"{45_000 - MAX_SCHEMA_PROBLEMS:,} more schema violations")
            assert written == "{" and diagnostic.start.line == 1
    assert any("`k00000`" in d.message for d in diagnostics)


@pytest.mark.parametrize("text, limit, expected", [
    ("[]", 0, True), ("[]", 1, False), ('["[[[", {"a": [1]}]', 2, True), ('["[[[", {"a": [1]}]', 3, False),
    ('{"a\\"[[": [[["é€😀"]]]}', 3, True), ('{"a\\"[[": [[["é€😀"]]]}', 4, False), ("1", 0, False),
])
def test_first_too_deep(text: str, limit: int, expected: bool) -> None:
    assert (_first_too_deep(text, limit) is not None) is expected


@pytest.mark.parametrize("key", ["question", "skill", "output_spec"])
@pytest.mark.parametrize("value", ["a\u0000b.md", "\ud800.md", "x" * 5000, "\udc80"])
def test_odd_paths_are_missing_files_not_crashes(tmp_path: Path, key: str, value: str) -> None:
    probe = floor_probe("h")
    probe[key] = value
    root = _workspace(tmp_path, json.dumps(probe))
    assert _codes(root, "h") == ["SE003"]


@pytest.mark.parametrize("output_format", ["json", "sarif", "github", "text"])
def test_reports_are_valid_utf8_whatever_the_paths_hold(tmp_path: Path, output_format: str) -> None:
    probe = floor_probe("h", skill="\udc80", question="caf\udce9.md")
    root = _workspace(tmp_path, json.dumps(probe))
    (probe_folder(root, "h") / "bad\udcff.md").write_text("x", encoding="utf-8", errors="surrogateescape")
    completed = subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", "-j", "1", "--output-format", output_format, str(root)],
        capture_output=True, timeout=120, env={**__import__("os").environ, "PYTHONIOENCODING": "utf-8:strict"},
    )
    assert completed.returncode == 1, completed.stderr
    report = completed.stdout.decode("utf-8")  # raises if not valid UTF-8
    if output_format in ("json", "sarif"):
        document = json.loads(report)
        if output_format == "json":
            messages = [finding["message"] for finding in document]
            # a lone surrogate is written out (the byte it stands for, ``\x80``): no message carries one
            assert any("\\x80" in message for message in messages), messages
            assert not any("\ud800" <= character <= "\udfff" for message in messages for character in message)
    assert "SE003" in report and "SE201" in report
