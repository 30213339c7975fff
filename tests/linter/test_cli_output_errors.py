"""Where the report goes, when it cannot go there: ``--output-file`` a
folder, or in a folder that does not exist, refused before any lint or fix;
a report file that cannot be written; stdout closed; stdout's reader gone
before or while the report is written, buffered or not (``python -u``,
``PYTHONUNBUFFERED``). Each test runs the real entry point."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
LINT = [sys.executable, "-m", "skill_eval.linter.cli"]

BUFFERING = ("buffered", "unbuffered")
"""How the child's stdout is set up: Python's default (a buffered writer
under the text layer), or ``PYTHONUNBUFFERED=1`` (the text layer writes to
the descriptor itself), as in many container images."""


def child_env(buffering: str = "buffered") -> dict[str, str]:
    """The environment of a run: no colour asked either way, and stdout
    buffered or not as ``buffering`` says."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("NO_COLOR", "FORCE_COLOR", "PYTHONUNBUFFERED")}
    if buffering == "unbuffered":
        env["PYTHONUNBUFFERED"] = "1"
    return env


def run_lint(*args: str, cwd: Path, buffering: str = "buffered") -> subprocess.CompletedProcess:
    return subprocess.run(LINT + list(args), capture_output=True, text=True, cwd=cwd, timeout=120,
                          env=child_env(buffering))


def run_with_stdout_closed(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run with descriptor 1 closed (a shell's ``>&-``): Python starts with
    ``sys.stdout`` None."""
    return subprocess.run(LINT + list(args), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          cwd=cwd, timeout=120, env=child_env(), preexec_fn=lambda: os.close(1))


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` but the lint cache's (which any lint writes)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".skill-eval-cache" not in p.relative_to(root).parts}


def assert_one_line_naming(stderr: str, *names: str) -> None:
    assert stderr.count("\n") == 1, stderr
    assert "Traceback" not in stderr and "internal error" not in stderr, stderr
    for name in names:
        assert name in stderr, stderr


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A copy of ``examples/``: findings, and one safe fix (SE201's count)."""
    target = tmp_path / "ws"
    shutil.copytree(EXAMPLES, target)
    assert run_lint(".", "--diff", cwd=target).stdout.startswith("--- ")  # there is something --fix would write
    return target


# -- --output-file a folder, or in no folder ---------------------------------

WRITERS = {"report": [], "fix": ["--fix"], "diff": ["--diff"], "fix-diff": ["--fix", "--diff"]}
"""The runs that write ``--output-file``: the report (after fixing, with
``--fix``) and ``--diff``'s patch."""


@pytest.mark.parametrize("flags", WRITERS.values(), ids=WRITERS.keys())
def test_an_output_file_that_is_a_folder_is_refused_before_anything_is_written(
        workspace: Path, tmp_path: Path, flags: list[str]) -> None:
    folder = tmp_path / "reports"
    folder.mkdir()
    before = snapshot(workspace)
    result = run_lint(".", *flags, "-o", str(folder), cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert_one_line_naming(result.stderr, "--output-file", str(folder))
    assert snapshot(workspace) == before
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("flags", WRITERS.values(), ids=WRITERS.keys())
def test_an_output_file_in_a_missing_folder_is_refused_before_anything_is_written(
        workspace: Path, tmp_path: Path, flags: list[str]) -> None:
    report = tmp_path / "no-such-folder" / "report.txt"
    before = snapshot(workspace)
    result = run_lint(".", *flags, "--output-file", str(report), cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert_one_line_naming(result.stderr, "--output-file", str(report))
    assert snapshot(workspace) == before
    assert not report.parent.exists()


needs_dev_full = pytest.mark.skipif(not Path("/dev/full").exists(),
                                    reason="needs /dev/full (a file whose every write fails: disk full)")


@needs_dev_full
@pytest.mark.parametrize("flags", WRITERS.values(), ids=WRITERS.keys())
def test_an_output_file_that_cannot_be_written_is_one_line_naming_it(workspace: Path, flags: list[str]) -> None:
    result = run_lint(".", *flags, "-o", "/dev/full", cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert_one_line_naming(result.stderr, "--output-file", "/dev/full", "No space left on device")


@needs_dev_full
def test_a_fix_whose_report_cannot_be_written_keeps_the_fixes(workspace: Path, tmp_path: Path) -> None:
    """The fixes are written before the report: a report file that fails
    at the end (here /dev/full) leaves them in place, as a run with a good
    report file does."""
    reference = tmp_path / "reference"
    shutil.copytree(workspace, reference)
    assert run_lint(".", "--fix", "-o", str(tmp_path / "report.txt"), cwd=reference).returncode == 1
    result = run_lint(".", "--fix", "-o", "/dev/full", cwd=workspace)
    assert result.returncode == 2 and "/dev/full" in result.stderr
    assert snapshot(workspace) == snapshot(reference)


# -- stdout closed -------------------------------------------------------------


@pytest.mark.parametrize("flags", WRITERS.values(), ids=WRITERS.keys())
def test_a_closed_stdout_without_an_output_file_is_refused_before_linting(workspace: Path, flags: list[str]) -> None:
    before = snapshot(workspace)
    result = run_with_stdout_closed(".", *flags, cwd=workspace)
    assert result.returncode == 2, result.stderr
    assert_one_line_naming(result.stderr, "stdout", "closed", "--output-file")
    assert snapshot(workspace) == before


@pytest.mark.parametrize("output_format", [None, "text", "json", "full"])
def test_a_closed_stdout_with_an_output_file_writes_the_usual_report(
        workspace: Path, tmp_path: Path, output_format: str | None) -> None:
    format_flags = ["--output-format", output_format] if output_format else []
    normal = run_lint(".", *format_flags, cwd=workspace)
    assert normal.returncode == 1 and normal.stdout, normal.stderr
    report = tmp_path / "report.txt"
    result = run_with_stdout_closed(".", *format_flags, "-o", str(report), cwd=workspace)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert report.read_text(encoding="utf-8") == normal.stdout


# -- stdout's reader gone --------------------------------------------------------


def run_into_closed_pipe(args: list[str], cwd: Path, buffering: str) -> subprocess.CompletedProcess:
    """Run with stdout a pipe whose reader has already closed it: the
    first write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(LINT + args, stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=cwd,
                              timeout=120, env=child_env(buffering))
    finally:
        os.close(write_end)


def read_one_line_and_close(args: list[str], cwd: Path, buffering: str) -> tuple[bytes, str, int]:
    """``| head -1``: read the first line of stdout, close the pipe while
    the linter is still writing, and return that line, stderr and the exit
    status."""
    with subprocess.Popen(LINT + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                          env=child_env(buffering)) as process:
        first = process.stdout.readline()
        process.stdout.close()
        stderr = process.stderr.read().decode()
        status = process.wait(timeout=120)
    return first, stderr, status


LARGE_REPORT = 200_000
"""Bytes of a report well past a pipe's buffer (64 KiB on Linux), so the
reader goes away while the report is being written."""


@pytest.fixture(scope="module")
def large_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _large_workspace import copy_examples_with_probes

    return copy_examples_with_probes(tmp_path_factory.mktemp("large") / "ws", 120)


@pytest.mark.parametrize("buffering", BUFFERING)
@pytest.mark.parametrize("output_format", ["text", "json", "sarif"])
def test_a_reader_that_stops_mid_report_ends_the_run_with_141(
        large_workspace: Path, tmp_path: Path, output_format: str, buffering: str) -> None:
    args = [".", "--output-format", output_format]
    whole = tmp_path / "report"
    assert run_lint(*args, "-o", str(whole), cwd=large_workspace).returncode == 1
    assert whole.stat().st_size > LARGE_REPORT
    for _ in range(3):
        first, stderr, status = read_one_line_and_close(args, large_workspace, buffering)
        assert first and whole.read_bytes().startswith(first)
        assert (status, stderr) == (141, "")


@pytest.mark.parametrize("buffering", BUFFERING)
@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_reader_gone_before_a_small_report_ends_the_run_with_141(
        workspace: Path, output_format: str, buffering: str) -> None:
    """A report smaller than stdout's buffer is written only when it is
    flushed: the reader's absence shows there, and still ends the run with 141."""
    args = [".", "--output-format", output_format]
    assert len(run_lint(*args, cwd=workspace).stdout) < 8192
    for _ in range(3):
        result = run_into_closed_pipe(args, workspace, buffering)
        assert (result.returncode, result.stderr) == (141, "")


@needs_dev_full
@pytest.mark.parametrize("buffering", BUFFERING)
@pytest.mark.parametrize("args", [["rules"], ["rules", "--output-format", "json"], ["rule", "SE101"]],
                         ids=["rules", "rules-json", "rule"])
def test_documentation_to_a_full_disk_is_one_line(tmp_path: Path, args: list[str], buffering: str) -> None:
    """``rule`` and ``rules`` write through the same path as a report: a
    stdout that cannot be written (here /dev/full) is one line, exit 2."""
    with open("/dev/full", "w") as full:
        result = subprocess.run(LINT + args, stdout=full, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                                timeout=120, env=child_env(buffering))
    assert result.returncode == 2
    assert_one_line_naming(result.stderr, "No space left on device")
