"""End-to-end tests of ``skill-eval-lint``: exit codes, formats, config, errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skill_eval.linter.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CASE = ROOT / "tests" / "fixtures" / "lint" / "se101-misanchored"


def run_cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", *args],
        capture_output=True, text=True, cwd=cwd or ROOT, timeout=60,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(CASE, target)
    (target / "expected.txt").unlink()
    return target


def test_findings_exit_1_and_text_format(workspace: Path, capsys) -> None:
    assert main([str(workspace)]) == 1
    out = capsys.readouterr().out
    assert "SE101 [error] step_heading 'Step 2: Check evidence' matches no heading" in out
    assert out.strip().endswith("file.") or "Found 1 problem" in out


def test_clean_exit_0(workspace: Path, capsys) -> None:
    probe = workspace / "skill/evals/probes/renamed/probe.json"
    probe.write_text(probe.read_text().replace("Step 2: Check evidence", "Step 2: Check the evidence lines"))
    assert main([str(workspace), "--select", "SE101,SE102"]) == 0
    assert "All checks passed" in capsys.readouterr().out


def test_exit_zero_and_ignore(workspace: Path) -> None:
    assert main([str(workspace), "--exit-zero"]) == 0
    assert main([str(workspace), "--ignore", "SE101"]) in (0, 1)
    assert main([str(workspace), "--select", "SE101", "--ignore", "SE1"]) == 0


def test_json_format_has_ruff_field_names(workspace: Path, capsys) -> None:
    main([str(workspace), "--output-format", "json", "--select", "SE101"])
    items = json.loads(capsys.readouterr().out)
    assert len(items) == 1
    item = items[0]
    assert set(item) >= {"code", "name", "message", "severity", "filename", "location", "end_location", "fix"}
    assert item["code"] == "SE101" and item["name"] == "misanchored-step"
    assert item["location"] == {"row": 5, "column": 19}
    assert item["end_location"] == {"row": 5, "column": 43}
    assert item["fix"]["edits"][0]["content"] == '"Step 2: Check the evidence lines"'


def test_github_format(workspace: Path, capsys) -> None:
    main([str(workspace), "--output-format", "github", "--select", "SE101"])
    line = capsys.readouterr().out.strip()
    assert line.startswith("::error file=")
    assert ",line=5,col=19," in line
    assert line.split("::", 2)[2].startswith("SE101 ")


def test_sarif_format(workspace: Path, capsys) -> None:
    main([str(workspace), "--output-format", "sarif", "--select", "SE101"])
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0"
    run = log["runs"][0]
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    assert "SE101" in rule_ids
    assert all(rule["helpUri"].endswith(f"{rule['id']}.md") for rule in run["tool"]["driver"]["rules"])
    result = run["results"][0]
    assert result["ruleId"] == "SE101" and result["level"] == "error"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (5, 19)
    assert run["tool"]["driver"]["rules"][result["ruleIndex"]]["id"] == "SE101"


def test_statistics(workspace: Path, capsys) -> None:
    main([str(workspace), "--statistics", "--select", "SE101"])
    assert capsys.readouterr().out.split() == ["1", "SE101", "misanchored-step"]


def test_config_error_is_one_line_exit_2(workspace: Path) -> None:
    (workspace / "skill-eval.toml").write_text("selct = ['SE1']\n")
    result = run_cli(str(workspace))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert "skill-eval.toml" in result.stderr and "did you mean 'select'" in result.stderr


def test_invalid_toml_is_reported(workspace: Path) -> None:
    (workspace / "skill-eval.toml").write_text("select = [\n")
    result = run_cli(str(workspace))
    assert result.returncode == 2 and "invalid TOML" in result.stderr and "Traceback" not in result.stderr


def test_config_from_pyproject(workspace: Path, capsys) -> None:
    (workspace / "skill-eval.toml").unlink()
    (workspace / "pyproject.toml").write_text('[tool.skill-eval]\nignore = ["SE101"]\n')
    assert main([str(workspace), "--select", "SE101"]) == 0


def test_missing_path_exit_2(tmp_path: Path) -> None:
    result = run_cli(str(tmp_path / "nope"))
    assert result.returncode == 2 and "no such file or folder" in result.stderr


def test_usage_error_exit_2() -> None:
    result = run_cli("--output-format", "xml")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_rule_and_rules_commands(capsys) -> None:
    assert main(["rule", "se101"]) == 0
    text = capsys.readouterr().out
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Fix"):
        assert section in text
    assert main(["rule", "SE999"]) == 2
    assert main(["rules"]) == 0
    assert "SE101  misanchored-step" in capsys.readouterr().out


def test_single_file_path_lints_its_probe(workspace: Path, capsys) -> None:
    question = workspace / "skill/evals/probes/renamed/question.md"
    assert main([str(question), "--select", "SE101"]) == 1
    assert "SE101" in capsys.readouterr().out


def test_skill_path_relints_dependent_probes(workspace: Path, capsys) -> None:
    assert main([str(workspace / "skill" / "SKILL.md"), "--select", "SE101"]) == 1
    assert "renamed/probe.json" in capsys.readouterr().out


def test_cli_does_not_import_the_lsp_stack(workspace: Path) -> None:
    code = (
        "import sys; from skill_eval.linter.cli import main; main([sys.argv[1], '--exit-zero', '-q']);"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('pygls', 'lsprotocol', 'rich')];"
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code, str(workspace)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_umbrella_lint_command(workspace: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "skill_eval", "lint", str(workspace), "--select", "SE101"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and "SE101" in result.stdout


def test_examples_are_linted(capsys) -> None:
    assert main([str(EXAMPLES)]) == 1
    out = capsys.readouterr().out
    assert "renamed-step/probe.json" in out and "SE101" in out


def test_fix_applies_every_edit_of_a_fix(tmp_path: Path) -> None:
    from skill_eval.linter.config import Config
    from skill_eval.linter.diagnostics import Diagnostic, Fix, Severity, TextEdit
    from skill_eval.linter.fixes import apply_fixes
    from skill_eval.linter.reader import FileSystemReader
    from skill_eval.linter.session import LintSession
    from skill_eval.linter.textfile import Span

    target = tmp_path / "f.txt"
    target.write_bytes(b"alpha beta\r\ngamma\r\n")
    edits = (TextEdit(Span.at(target, 1, 1, 1, 6), "ALPHA"), TextEdit(Span.at(target, 2, 1, 2, 6), "GAMMA"))
    diagnostic = Diagnostic("SE999", "x", Severity.ERROR, "m", Span.at(target, 1, 1, 1, 2), fixes=(Fix("t", edits, safe=True),))
    applied = apply_fixes([diagnostic], [LintSession(tmp_path, Config(), FileSystemReader())])
    assert applied.fixed == 1 and applied.files == [target]
    assert target.read_bytes() == b"ALPHA beta\r\nGAMMA\r\n"


def test_config_file_path_stands_for_its_workspace(workspace: Path, capsys) -> None:
    assert main([str(workspace / "skill-eval.toml"), "--select", "SE101"]) == 1
    assert "renamed/probe.json" in capsys.readouterr().out


def test_schema_command_prints_the_file_verbatim() -> None:
    result = subprocess.run([sys.executable, "-m", "skill_eval", "schema"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0
    assert result.stdout == (ROOT / "linter" / "data" / "probe.schema.json").read_text(encoding="utf-8")


def test_worker_processes_give_the_same_diagnostics(tmp_path: Path) -> None:
    """A workspace large enough for workers lints the same with -j 1 and -j 2."""
    from skill_eval.linter.engine import lint_paths
    from skill_eval.linter.execution import PARALLEL_MIN_WORK

    from _large_workspace import copy_examples_with_probes

    target = copy_examples_with_probes(tmp_path / "big", PARALLEL_MIN_WORK)
    serial = lint_paths([target], jobs=1).diagnostics
    parallel = lint_paths([target], jobs=2).diagnostics
    assert len(serial) > PARALLEL_MIN_WORK
    assert [(d.code, d.path, d.start, d.message) for d in parallel] == [(d.code, d.path, d.start, d.message) for d in serial]


def test_the_console_exit_keeps_the_whole_report(tmp_path: Path) -> None:
    """The CLI ends without tearing the interpreter down (``os._exit`` after
    flushing): a long report through a pipe still arrives whole, and so does
    the report file."""
    from skill_eval.linter.engine import lint_paths

    from _large_workspace import copy_examples_with_probes

    target = copy_examples_with_probes(tmp_path / "big", 60)
    expected = len(lint_paths([target]).diagnostics)
    piped = run_cli(str(target), "--output-format", "json", "-j", "1")
    assert piped.returncode == 1, piped.stderr
    assert len(json.loads(piped.stdout)) == expected > 60
    report = tmp_path / "report.json"
    written = run_cli(str(target), "--output-format", "json", "-o", str(report))
    assert written.returncode == 1, written.stderr
    assert len(json.loads(report.read_text(encoding="utf-8"))) == expected


CRASHING_RULE = '''
import sys
from skill_eval.linter import rules
from skill_eval.linter.diagnostics import Severity
from skill_eval.linter.rules.base import Rule, Scope

class Crashes(Rule):
    """## What it does\\nCrashes on one probe.\\n## Why is this bad?\\n-\\n## Example\\n-\\n## Fix\\n-"""
    code, name, severity, scope = "SE999", "crashes", Severity.ERROR, Scope.PROBE
    def check(self, context):
        if context.probe_id == "renamed":
            raise ZeroDivisionError("boom")
        return ()

rules.REGISTRY = rules.REGISTRY + (Crashes,)
from skill_eval.linter.cli import main
sys.exit(main(sys.argv[1:]))
'''


def test_a_crashing_rule_becomes_se000_and_the_rest_is_still_linted(workspace: Path) -> None:
    """A rule that raises: SE000 for that file, every other rule still reports,
    exit status 1 (findings), never 2, and no traceback."""
    result = subprocess.run([sys.executable, "-c", CRASHING_RULE, str(workspace), "--output-format", "json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    items = json.loads(result.stdout)
    codes = {item["code"] for item in items}
    assert "SE000" in codes and "SE101" in codes
    crash = next(item for item in items if item["code"] == "SE000")
    assert crash["filename"].endswith("renamed/probe.json")
    assert "SE999 (crashes) crashed on this file: ZeroDivisionError: boom" in crash["message"]


def test_nothing_to_lint_warns(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("hello\n")
    result = run_cli(str(tmp_path / "README.md"))
    assert result.returncode == 0
    assert "warning: no probe.json, SKILL.md or output-spec.md found" in result.stderr


@settings(max_examples=2000, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", "main", "..", ".", "x.md"]), max_size=5),
       st.lists(st.sampled_from(["a", "b", "main", "..", "."]), max_size=5))
def test_display_path_is_relpath(path_parts: list[str], base_parts: list[str]) -> None:
    """Reports name files relative to the current folder: exactly what
    ``os.path.relpath`` gives, ancestors of the base and unnormalized paths included."""
    import os

    from skill_eval.linter.output import display_path

    path, base = "/" + "/".join(path_parts), "/" + "/".join(base_parts)
    assert display_path(Path(path), Path(base)) == os.path.relpath(path, base)
