"""The umbrella command ``skill-eval``: its subcommands' help names them as
called, passes their arguments through, and an unknown command exits 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def umbrella(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args], capture_output=True, text=True, cwd=ROOT,
                          timeout=120)


@pytest.mark.parametrize("command, standalone", [("lint", "skill-eval-lint"), ("serve", "skill-eval-ls")])
def test_help_names_the_command_as_called_and_its_standalone_name(command: str, standalone: str) -> None:
    result = umbrella(command, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: skill-eval {command} ")
    assert f"`{standalone}` and `skill-eval {command}` are the same command" in " ".join(result.stdout.split())
    direct = subprocess.run([sys.executable, "-c", f"import sys; from skill_eval.cli import SUBCOMMANDS; "
                             f"import importlib; m, f, _ = SUBCOMMANDS[{command!r}]; "
                             f"sys.exit(getattr(importlib.import_module(m), f)(['--help']))"],
                            capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert direct.stdout.startswith(f"usage: {standalone} ")


@pytest.mark.parametrize("command", ["lint", "serve"])
def test_arguments_pass_through_and_errors_name_the_command(command: str) -> None:
    result = umbrella(command, "--no-such-flag")
    assert result.returncode == 2
    assert result.stderr.startswith(f"skill-eval {command}: unrecognized arguments: --no-such-flag")
    version = umbrella(command, "--version")
    assert version.returncode == 0 and version.stdout.strip().endswith("0.1.0")


def test_top_level_help_lists_the_standalone_names() -> None:
    result = umbrella("--help")
    assert result.returncode == 0
    assert "(also: skill-eval-lint)" in result.stdout and "(also: skill-eval-ls)" in result.stdout


def test_schema_help_describes_it_and_other_arguments_exit_2() -> None:
    result = umbrella("schema", "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: skill-eval schema") and "{" not in result.stdout
    wrong = umbrella("schema", "--pretty")
    assert wrong.returncode == 2 and "'--pretty'" in wrong.stderr and "--help" in wrong.stderr


def test_an_unknown_command_exits_2_with_a_suggestion() -> None:
    result = umbrella("lnt", "--help")
    assert result.returncode == 2
    assert "unknown command 'lnt'; did you mean 'lint'?" in result.stderr
    assert "usage: skill-eval COMMAND" in result.stderr and result.stdout == ""
