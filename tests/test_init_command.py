"""``skill-eval init``: a scaffold that lints and checks clean, a config whose
commented agents each lead to a first run, and never an overwrite."""

from __future__ import annotations

import json
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def skill_eval(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "skill_eval", *args], capture_output=True, text=True, cwd=cwd,
                          timeout=120)


def files_under(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_scaffolds_a_skill_an_output_spec_and_a_probe_that_lint_clean(tmp_path: Path) -> None:
    result = skill_eval("init", "release-signoff", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    skill = tmp_path / "release-signoff"
    assert set(files_under(skill)) == {"SKILL.md", "output-spec.md", "skill-eval.toml",
                                       "evals/probes/unbacked-claim/probe.json",
                                       "evals/probes/unbacked-claim/question.md",
                                       "evals/probes/unbacked-claim/transcripts/catches-unbacked-claim.md",
                                       "evals/probes/unbacked-claim/transcripts/misses-unbacked-claim.md"}
    probe = json.loads((skill / "evals/probes/unbacked-claim/probe.json").read_text())
    assert probe["tier"] == 2 and probe["seeded_defects"] == len(probe["defects"]) == 1
    assert (skill / "SKILL.md").read_text().startswith("---\nname: release-signoff\n")

    from skill_eval.linter.engine import lint_paths

    for target in (skill, tmp_path):  # (one probe alone: issue 16, "Discovery and the workspace")
        linted = lint_paths([target])
        assert linted.checked and linted.diagnostics == [], [d.message for d in linted.diagnostics]
    cli = subprocess.run([sys.executable, "-m", "skill_eval.linter.cli", str(skill), "--fail-level", "info"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert cli.returncode == 0 and "All checks passed (4 files)" in cli.stdout, cli.stdout + cli.stderr


def test_init_defaults_to_the_current_folder(tmp_path: Path) -> None:
    folder = tmp_path / "closeout"
    folder.mkdir()
    assert skill_eval("init", cwd=folder).returncode == 0
    assert "name: closeout\n" in (folder / "SKILL.md").read_text()


def test_init_refuses_to_overwrite_and_writes_nothing(tmp_path: Path) -> None:
    skill = tmp_path / "my-skill"
    skill.mkdir()
    (skill / "output-spec.md").write_text("# mine\n")
    result = skill_eval("init", str(skill), cwd=tmp_path)
    assert result.returncode == 2
    assert "not overwriting" in result.stderr and str(skill / "output-spec.md") in result.stderr
    assert "Traceback" not in result.stderr
    assert files_under(skill) == {"output-spec.md": b"# mine\n"}


def test_init_refuses_a_folder_name_that_is_no_skill_name(tmp_path: Path) -> None:
    result = skill_eval("init", "My Skill", cwd=tmp_path)
    assert result.returncode == 2 and "'my-skill'" in result.stderr
    assert not (tmp_path / "My Skill").exists()


def uncomment(text: str, section: str) -> str:
    """``text`` with the commented-out ``[agents.SECTION]`` table made live:
    its header and the commented ``key = value`` lines under it, up to the
    next blank line (as a person would uncomment it)."""
    lines = text.splitlines()
    start = lines.index(f"# [agents.{section}]")
    end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
    lines[start:end] = [line[2:] for line in lines[start:end]]
    return "\n".join(lines) + "\n"


def test_init_then_check_passes_on_the_scaffold_and_both_transcripts_are_graded(tmp_path: Path) -> None:
    assert skill_eval("init", "release-signoff", cwd=tmp_path).returncode == 0
    result = skill_eval("check", "release-signoff", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 transcript(s) checked, 0 mismatched" in result.stdout
    # one transcript catches the defect and one misses it: each is graded as labelled
    assert re.search(r"catches-unbacked-claim\.md\n\s+D1: expected caught, graded caught \[ok\]", result.stdout)
    assert re.search(r"misses-unbacked-claim\.md\n\s+D1: expected missed, graded missed \[ok\]", result.stdout)
    # paths as the linter prints them: relative to where the command ran
    assert "ok    release-signoff/evals/probes/unbacked-claim/transcripts/" in result.stdout
    assert str(tmp_path) not in result.stdout


def test_run_on_the_scaffold_names_the_config_to_edit_and_a_missing_config_to_create(tmp_path: Path) -> None:
    assert skill_eval("init", "release-signoff", cwd=tmp_path).returncode == 0
    skill = tmp_path / "release-signoff"
    result = skill_eval("run", "--dry-run", cwd=skill)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"{skill / 'skill-eval.toml'}: no agents configured; add or uncomment an agent section" in result.stderr

    (skill / "skill-eval.toml").unlink()  # a workspace with no config at all: the file to create is named
    (skill / ".git").mkdir()  # the workspace root, as in a repository
    result = skill_eval("run", "--dry-run", cwd=skill / "evals")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert f"create {skill / 'skill-eval.toml'} with an agent section" in result.stderr


def test_an_uncommented_command_agent_plans_starts(tmp_path: Path) -> None:
    assert skill_eval("init", "release-signoff", cwd=tmp_path).returncode == 0
    skill = tmp_path / "release-signoff"
    config = skill / "skill-eval.toml"
    config.write_text(uncomment(config.read_text(encoding="utf-8"), "mine"), encoding="utf-8")
    bin_folder = tmp_path / "bin"  # the user's agent, installed: a program called my-agent on PATH
    bin_folder.mkdir()
    agent = bin_folder / "my-agent"
    agent.write_text("#!/bin/sh\ncat >/dev/null\necho 'verdict: FAIL'\n", encoding="utf-8")
    agent.chmod(agent.stat().st_mode | stat.S_IXUSR)
    env = {**os.environ, "PATH": f"{bin_folder}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run([sys.executable, "-m", "skill_eval", "run", "--dry-run"], capture_output=True, text=True,
                            cwd=skill, timeout=120, env=env)
    assert result.returncode == 0, result.stderr
    assert "agent mine, model my-model, arms control,treatment, reps 1..2: 4 start(s) to make" in result.stdout
    assert len(re.findall(r"^  unbacked-claim v1  (control|treatment)\s+rep [12]$", result.stdout, re.M)) == 4
    assert "no known transcripts" not in result.stderr


@pytest.mark.parametrize("section,preset", [("claude", "claude-code"), ("codex", "codex"), ("gemini", "gemini-cli"),
                                            ("opencode", "opencode")])
def test_each_commented_preset_is_a_valid_agent_once_uncommented(tmp_path: Path, section: str, preset: str) -> None:
    from skill_eval.evals.agents import load_agents
    from skill_eval.linter.config import load_config

    assert skill_eval("init", "release-signoff", cwd=tmp_path).returncode == 0
    skill = tmp_path / "release-signoff"
    config = skill / "skill-eval.toml"
    text = uncomment(config.read_text(encoding="utf-8"), section)
    assert tomllib.loads(text)["agents"][section]["preset"] == preset
    config.write_text(text, encoding="utf-8")
    loaded = load_agents(load_config(skill), skill)
    assert list(loaded) == [section] and loaded[section].preset == preset


def test_init_inside_a_configured_workspace_writes_no_second_config(tmp_path: Path) -> None:
    (tmp_path / "skill-eval.toml").write_text("[calibration]\nmax-starts = 50\n", encoding="utf-8")
    result = skill_eval("init", "skills/release-signoff", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "skills" / "release-signoff" / "skill-eval.toml").exists()
    assert f"uncomment an agent in {tmp_path / 'skill-eval.toml'}" in result.stdout or \
        "uncomment an agent in skill-eval.toml" in result.stdout
    assert skill_eval("check", cwd=tmp_path).returncode == 0


def test_run_says_when_probes_have_no_known_transcripts(tmp_path: Path) -> None:
    assert skill_eval("init", "release-signoff", cwd=tmp_path).returncode == 0
    skill = tmp_path / "release-signoff"
    for transcript in (skill / "evals/probes/unbacked-claim/transcripts").iterdir():
        transcript.unlink()
    config = skill / "skill-eval.toml"
    text = uncomment(config.read_text(encoding="utf-8"), "mine").replace('"my-agent"', json.dumps(sys.executable))
    config.write_text(text, encoding="utf-8")
    result = skill_eval("run", "--dry-run", cwd=skill)
    assert result.returncode == 0, result.stderr
    assert "warning: no known transcripts for 1 probe(s): unbacked-claim v1" in result.stderr


def test_init_in_a_folder_that_has_its_config_already_keeps_it(tmp_path: Path) -> None:
    """A user who wrote skill-eval.toml first, then runs `skill-eval init` there."""
    folder = tmp_path / "release-signoff"
    folder.mkdir()
    config = b"[calibration]\nmax-starts = 20\n"
    (folder / "skill-eval.toml").write_bytes(config)
    result = skill_eval("init", cwd=folder)
    assert result.returncode == 0, result.stderr
    assert (folder / "skill-eval.toml").read_bytes() == config
    assert (folder / "SKILL.md").is_file() and skill_eval("check", cwd=folder).returncode == 0
