"""The lint CLI as ruff users expect it (issue 16): unknown codes, exit
status by severity, broken pipes, colour and the ``full`` format, ``--diff``,
SARIF without its extra. Each test runs the real entry point."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
CASE = ROOT / "tests" / "fixtures" / "lint" / "se101-misanchored"


def run_lint(*args: str, cwd: Path | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "skill_eval.linter.cli", *args],
        capture_output=True, text=True, cwd=cwd or ROOT, timeout=120, env=env,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    target = tmp_path / "ws"
    shutil.copytree(CASE, target)
    (target / "expected.txt").unlink()
    return target


# -- unknown codes ----------------------------------------------------------


@pytest.mark.parametrize("flag", ["--select", "--ignore", "--extend-ignore"])
def test_an_unknown_code_on_the_command_line_exits_2_with_a_suggestion(workspace: Path, flag: str) -> None:
    result = run_lint(str(workspace), flag, "SE101,SE2O1")
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert flag in result.stderr and "'SE2O1'" in result.stderr and "did you mean 'SE201'?" in result.stderr


def test_code_prefixes_select_families(workspace: Path) -> None:
    """``SE1`` (a family) and ``SE`` (every rule) stay valid."""
    assert run_lint(str(workspace), "--select", "SE1").returncode == 1
    assert run_lint(str(workspace), "--select", "SE", "--ignore", "SE10").returncode == 0


@pytest.mark.parametrize("config_name, text", [
    ("skill-eval.toml", 'ignore = ["SE3O1"]\n'),
    ("skill-eval.toml", '[per-file-ignores]\n"*.md" = ["SE3O1"]\n'),
    ("pyproject.toml", '[tool.skill-eval]\nselect = ["SE3O1"]\n'),
])
def test_an_unknown_code_in_the_config_names_the_file(workspace: Path, config_name: str, text: str) -> None:
    (workspace / "skill-eval.toml").unlink()
    config = workspace / config_name
    config.write_text(text)
    result = run_lint(str(workspace))
    assert result.returncode == 2, result.stdout + result.stderr
    assert str(config) in result.stderr and "did you mean 'SE301'?" in result.stderr
    assert "Traceback" not in result.stderr


# -- exit status by severity ------------------------------------------------

INFO_ONLY = ROOT / "tests" / "fixtures" / "lint" / "se107-unused-field-rules"
WITH_WARNINGS = ROOT / "tests" / "fixtures" / "lint" / "frontmatter-spec"


def test_info_findings_never_fail_by_default() -> None:
    result = run_lint(".", cwd=INFO_ONLY)
    assert "SE107 [info]" in result.stdout
    assert result.returncode == 0, result.stdout + result.stderr


def test_fail_level_chooses_the_lowest_failing_severity() -> None:
    assert run_lint(".", "--fail-level", "info", cwd=INFO_ONLY).returncode == 1
    warnings = ["--select", "SE713"]
    default = run_lint(".", *warnings, cwd=WITH_WARNINGS)
    assert "SE713 [warning]" in default.stdout and "[error]" not in default.stdout
    assert default.returncode == 1
    assert run_lint(".", *warnings, "--fail-level", "error", cwd=WITH_WARNINGS).returncode == 0
    assert run_lint(".", "--fail-level", "error", cwd=WITH_WARNINGS).returncode == 1  # it has errors too
    assert run_lint(".", *warnings, "--fail-level", "errors", cwd=WITH_WARNINGS).returncode == 2


# -- a reader that goes away ------------------------------------------------


def run_into_closed_pipe(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """Run ``argv`` with stdout a real pipe whose reader has already closed
    it (``| head -1`` once head has its line): the first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=cwd, timeout=120)
    finally:
        os.close(write_end)


LINT = [sys.executable, "-m", "skill_eval.linter.cli"]
UMBRELLA = [sys.executable, "-m", "skill_eval"]


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    return target


@pytest.mark.parametrize("argv", [
    LINT + ["rule", "SE101"],
    LINT + ["rules"],
    LINT + ["."],
    LINT + [".", "--output-format", "json"],
    LINT + ["--help"],
    UMBRELLA + ["lint", "."],
    UMBRELLA + ["run", "--dry-run"],
    UMBRELLA + ["report"],
    UMBRELLA + ["check"],
    UMBRELLA + ["--help"],
], ids=lambda argv: " ".join(argv[2:]))
def test_a_reader_that_went_away_ends_the_run_quietly(examples: Path, argv: list[str]) -> None:
    result = run_into_closed_pipe(argv, examples)
    assert "Traceback" not in result.stderr and "Broken pipe" not in result.stderr, result.stderr
    assert "internal error" not in result.stderr
    # argparse's help exits 0 before the buffered text is flushed; the rest fail on a write
    assert result.returncode in ((0, 141) if "--help" in argv else (141,)), result.stderr


def test_head_reads_one_line_and_closes(examples: Path) -> None:
    """A real ``| head -1``: the reader takes one line and closes its end
    while the linter may still be writing (whichever comes first, no
    traceback)."""
    from _large_workspace import copy_examples_with_probes

    target = copy_examples_with_probes(examples.parent / "big", 60)
    with subprocess.Popen(LINT + [str(target), "-j", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=target) as process:
        first = process.stdout.readline()
        process.stdout.close()
        stderr = process.stderr.read().decode()
        status = process.wait(timeout=120)
    assert b": SE" in first
    assert "Traceback" not in stderr and "Broken pipe" not in stderr, stderr
    assert status in (1, 141)


# -- SARIF ------------------------------------------------------------------

WITHOUT_MODULE = """
import sys
sys.modules[{module!r}] = None  # as if the package were not installed: importing it raises ImportError
from skill_eval.linter.cli import entry
sys.argv[0] = "skill-eval-lint"
entry()
"""


@pytest.mark.parametrize("module", ["sarif_om", "jschema_to_python"])
def test_sarif_without_its_libraries_exits_2_with_the_install_line(workspace: Path, module: str) -> None:
    report = workspace / "results.sarif"
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_MODULE.format(module=module), str(workspace), "--output-format", "sarif",
         "-o", str(report)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "pip install 'sarif-om>=1.0.4' 'jschema-to-python>=1.2.3'" in result.stderr
    assert not report.exists()


def test_the_base_install_requires_what_sarif_imports() -> None:
    """The installed distribution's own metadata (what ``pip install
    skill-eval`` resolves) lists the SARIF libraries without an extra."""
    from importlib.metadata import requires

    base = {requirement.split(";")[0].split(">")[0].split("=")[0].strip().lower()
            for requirement in requires("skill-eval") or () if "extra ==" not in requirement}
    assert {"sarif-om", "jschema-to-python"} <= base


# -- --diff -----------------------------------------------------------------


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` but the lint cache's (which any lint writes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".skill-eval-cache" not in p.relative_to(root).parts}


@pytest.mark.skipif(shutil.which("patch") is None, reason="needs patch(1) (apt-get install patch)")
@pytest.mark.parametrize("flags", [["--diff"], ["--fix", "--diff"]])
def test_diff_prints_the_patch_fix_would_write_and_writes_nothing(tmp_path: Path, flags: list[str]) -> None:
    from _large_workspace import copy_examples_with_probes

    shown = copy_examples_with_probes(tmp_path / "shown", 8)  # drifted-count twice: SE201's safe fix in two files
    fixed = copy_examples_with_probes(tmp_path / "fixed", 8)
    before = snapshot(shown)
    result = run_lint(".", *flags, cwd=shown)
    assert result.returncode == 1, result.stderr
    assert snapshot(shown) == before  # nothing written
    files = result.stdout.count("\n+++ ")
    assert files >= 2 and result.stdout.startswith("--- ")
    assert f"problems in {files} files" in result.stderr
    assert run_lint(".", "--fix", cwd=fixed).returncode == 1  # other findings remain
    assert snapshot(fixed) != before
    subprocess.run(["patch", "-p0", "--quiet"], input=result.stdout, text=True, cwd=shown, check=True, timeout=60)
    assert snapshot(shown) == snapshot(fixed)
    again = run_lint(".", *flags, cwd=shown)
    assert again.returncode == 0 and again.stdout == "", again.stderr


# -- colour and the full format on a terminal --------------------------------

ESC = "\x1b["


def run_on_terminal(args: list[str], cwd: Path, **env: str) -> tuple[int, str]:
    """Run the linter with stdout on a real pseudo-terminal; its exit status and output."""
    import pty

    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(TERM="xterm-256color", COLUMNS="200", **env)
    master, slave = pty.openpty()
    try:
        process = subprocess.Popen(LINT + args, stdout=slave, stderr=subprocess.PIPE, cwd=cwd, env=environment)
        os.close(slave)
        chunks = []
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the terminal's last writer has gone
                break
            if not chunk:
                break
            chunks.append(chunk)
        status = process.wait(timeout=120)
        process.stderr.close()
    finally:
        os.close(master)
    return status, b"".join(chunks).decode().replace("\r\n", "\n")


def plain_env(**env: str) -> dict:
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    environment.update(env)
    return environment


def test_a_terminal_gets_colour_source_lines_and_a_caret_under_the_span(workspace: Path) -> None:
    status, out = run_on_terminal([".", "--select", "SE101"], workspace)
    assert status == 1
    assert ESC in out
    plain = out.replace(ESC + "0m", "").replace(ESC + "1;31m", "").replace(ESC + "1;34m", "").replace(ESC + "1m", "")
    plain = plain.replace(ESC + "31m", "")
    assert ESC not in plain, plain
    lines = plain.splitlines()
    assert lines[0].startswith("skill/evals/probes/renamed/probe.json:5:19: SE101 [error] ")
    source = next(line for line in lines if line.startswith("5 | "))
    caret = lines[lines.index(source) + 1]
    start = source.index('"Step 2: Check evidence"')
    assert caret.index("^") == start and caret[start:].split(" ")[0] == "^" * len('"Step 2: Check evidence"')
    assert caret.endswith(" SE101")
    assert "= help: Change step_heading to 'Step 2: Check the evidence lines'" in plain


def test_no_color_keeps_the_full_format_without_colour(workspace: Path) -> None:
    status, out = run_on_terminal([".", "--select", "SE101"], workspace, NO_COLOR="1")
    assert status == 1 and ESC not in out
    assert "5 |   \"step_heading\"" in out and "^^^ SE101" in out
    _status, both = run_on_terminal([".", "--select", "SE101"], workspace, NO_COLOR="1", FORCE_COLOR="1")
    assert ESC not in both


def test_piped_output_is_the_plain_text_format_unless_asked(workspace: Path) -> None:
    piped = run_lint(".", cwd=workspace, env=plain_env())
    explicit = run_lint(".", "--output-format", "text", cwd=workspace, env=plain_env())
    assert piped.stdout == explicit.stdout and ESC not in piped.stdout
    assert piped.stdout.splitlines()[0].startswith("skill/evals/probes/renamed/probe.json:5:19: SE101 [error] ")
    assert " | " not in piped.stdout
    forced = run_lint(".", cwd=workspace, env=plain_env(FORCE_COLOR="1"))
    assert ESC in forced.stdout and " | " not in forced.stdout  # colour asked, format unchanged
    full = run_lint(".", "--output-format", "full", cwd=workspace, env=plain_env())
    assert ESC not in full.stdout and "^^^ SE101" in full.stdout


def test_a_report_file_is_plain_text_even_from_a_terminal(workspace: Path, tmp_path: Path) -> None:
    report = tmp_path / "report.txt"
    status, _out = run_on_terminal([".", "-o", str(report)], workspace, FORCE_COLOR="1")
    assert status == 1
    text = report.read_text()
    assert ESC not in text and " | " not in text and ": SE101 [error] " in text


def test_the_caret_counts_display_columns(tmp_path: Path) -> None:
    """Tabs and wide characters before the span move the caret as a terminal would."""
    from skill_eval.linter.diagnostics import Diagnostic, Severity
    from skill_eval.linter.output.full import render
    from skill_eval.linter.textfile import Span

    source = tmp_path / "question.md"
    source.write_text("\t表 x Please note this\n", encoding="utf-8")
    diagnostic = Diagnostic("SE301", "signposting", Severity.ERROR, "m", Span.at(source, 1, 6, 1, 17))
    lines = render([diagnostic], 1, roots=[tmp_path]).splitlines()
    shown, caret = lines[2], lines[3]
    assert shown == "1 |     表 x Please note this"
    assert caret == "  |          ^^^^^^^^^^^ SE301"


def test_diff_leaves_out_what_extend_ignore_drops(tmp_path: Path) -> None:
    target = tmp_path / "examples"
    shutil.copytree(EXAMPLES, target)
    assert "+++ " in run_lint(".", "--diff", cwd=target).stdout
    ignored = run_lint(".", "--diff", "--extend-ignore", "SE201", cwd=target)
    assert ignored.returncode == 0 and ignored.stdout == "", ignored.stderr


def test_a_long_source_line_is_cut_around_the_span(tmp_path: Path) -> None:
    from skill_eval.linter.diagnostics import Diagnostic, Severity
    from skill_eval.linter.output.full import MAX_SHOWN, render
    from skill_eval.linter.textfile import Span

    source = tmp_path / "probe.json"
    line = "x" * 1000 + '"Step 2"' + "y" * 1000
    source.write_text(line + "\n", encoding="utf-8")
    diagnostic = Diagnostic("SE101", "misanchored-step", Severity.ERROR, "m", Span.at(source, 1, 1001, 1, 1009))
    lines = render([diagnostic], 1, roots=[tmp_path]).splitlines()
    shown, caret = lines[2], lines[3]
    assert len(shown) <= len("1 | ") + MAX_SHOWN + 2 and shown.startswith("1 | …") and shown.endswith("…")
    assert shown[caret.index("^"):].startswith('"Step 2"') and '^^^^^^^^ SE101' in caret


# -- --quiet, --statistics, empty code lists ----------------------------------


@pytest.mark.parametrize("flags", [[], ["--fix"], ["--output-format", "full"], ["--output-format", "full", "--fix"]],
                         ids=["text", "text-fix", "full", "full-fix"])
def test_quiet_prints_the_findings_and_no_summary_line(tmp_path: Path, flags: list[str]) -> None:
    """``-q``: the findings as the run without it prints them, and none of
    the summary's lines (``Found``/``All checks passed``, and with ``--fix``
    ``Fixed``, which ``-q`` used to keep)."""
    copies = []
    for name in ("loud", "quiet"):
        copies.append(tmp_path / name)
        shutil.copytree(EXAMPLES, copies[-1])
    loud = run_lint(".", "--no-cache", *flags, cwd=copies[0])
    quiet = run_lint(".", "--no-cache", "-q", *flags, cwd=copies[1])
    summary = ("Found ", "All checks passed", "Fixed ")
    assert any(line.startswith(summary) for line in loud.stdout.splitlines())
    assert not [line for line in quiet.stdout.splitlines() if line.startswith(summary)], quiet.stdout
    assert quiet.stdout.strip() == "\n".join(line for line in loud.stdout.splitlines()
                                             if not line.startswith(summary)).strip()
    assert quiet.returncode == loud.returncode


def test_statistics_in_json_counts_what_the_json_report_lists() -> None:
    """``--statistics --output-format json`` is JSON (it was the text
    table), one entry per code with as many findings as the JSON report of
    the same run has of it; a format that cannot carry counts is refused."""
    import json
    from collections import Counter

    counted = json.loads(run_lint("examples", "--no-cache", "--statistics", "--output-format", "json").stdout)
    listed = Counter(finding["code"] for finding in json.loads(run_lint("examples", "--no-cache", "--output-format", "json").stdout))
    assert {entry["code"]: entry["count"] for entry in counted} == dict(listed)
    assert [entry["count"] for entry in counted] == sorted((entry["count"] for entry in counted), reverse=True)
    refused = run_lint("examples", "--no-cache", "--statistics", "--output-format", "sarif")
    assert refused.returncode == 2 and "--statistics" in refused.stderr and "Traceback" not in refused.stderr


@pytest.mark.parametrize("flag", ["--select", "--extend-select", "--ignore", "--extend-ignore"])
@pytest.mark.parametrize("value", ["", ",", " , "])
def test_a_code_list_with_no_code_is_refused(flag: str, value: str) -> None:
    """``--select ''`` read as no selection and linted with every rule;
    a list without a code is now a usage error (exit 2) naming the option."""
    result = run_lint("examples", "--no-cache", flag, value)
    assert result.returncode == 2 and flag in result.stderr and "at least one code" in result.stderr, result.stderr
