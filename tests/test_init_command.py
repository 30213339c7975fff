"""``skill-eval init``: a scaffold that lints clean, and never an overwrite."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert set(files_under(skill)) == {"SKILL.md", "output-spec.md", "evals/probes/unbacked-claim/probe.json",
                                       "evals/probes/unbacked-claim/question.md"}
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
