"""The pre-commit hook end to end: real git commits, real pre-commit, real hook venv.

A session fixture snapshots this repository's working tree (committed or not)
into a temporary git repo, so the hook under test is the one being edited.
Each test makes a user repo whose .pre-commit-config.yaml points at that
snapshot, installs the git hook, and commits: a clean commit passes; a commit
that breaks a probe — directly, or through a file it depends on while the
probe itself is not staged — is blocked with the diagnostic shown.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ._workspace import BAD_HEADING, GOOD_HEADING, PROBE_RELATIVE, probe_text, write_workspace

REPO = Path(__file__).resolve().parents[2]
INSTALL_TIMEOUT = 600  # first commit builds the hook's virtualenv (pip install of the snapshot)
COMMIT_TIMEOUT = 120

GIT = shutil.which("git")
PRE_COMMIT = shutil.which("pre-commit") or shutil.which("pre-commit", path=str(Path(sys.executable).parent))
pytestmark = [
    pytest.mark.skipif(GIT is None, reason="git is not installed (apt-get install git)"),
    pytest.mark.skipif(PRE_COMMIT is None, reason="pre-commit is not installed (pip install -e '.[test]')"),
]


def _git_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    gitconfig = home / ".gitconfig"
    if not gitconfig.exists():
        home.mkdir(parents=True, exist_ok=True)
        gitconfig.write_text(
            "[user]\n\tname = skill-eval tests\n\temail = tests@skill-eval.invalid\n"
            "[init]\n\tdefaultBranch = main\n[commit]\n\tgpgsign = false\n[safe]\n\tdirectory = *\n",
            encoding="utf-8",
        )
    env.update({"GIT_CONFIG_GLOBAL": str(gitconfig), "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home)})
    return env


def git(cwd: Path, env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run([GIT, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=COMMIT_TIMEOUT, check=check)


@pytest.fixture(scope="session")
def hook_env(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A snapshot repo of the working tree, a PRE_COMMIT_HOME, and a git env."""
    base = tmp_path_factory.mktemp("precommit")
    env = _git_env(base / "home")
    env["PRE_COMMIT_HOME"] = str(base / "pre-commit-home")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    env.pop("VIRTUAL_ENV", None)
    snapshot = base / "hook-repo"
    snapshot.mkdir()
    # Tracked and untracked-but-not-ignored files, as they are on disk now.
    listed = subprocess.run(
        [GIT, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True, timeout=60,
    ).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = REPO / relative
        if source.is_file() and not source.is_symlink():
            target = snapshot / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git(snapshot, env, "init", "-q")
    git(snapshot, env, "add", "-A")
    git(snapshot, env, "commit", "-q", "-m", "snapshot of the working tree", "--no-verify")
    rev = git(snapshot, env, "rev-parse", "HEAD").stdout.strip()
    return {"env": env, "repo": snapshot, "rev": rev}


@pytest.fixture
def user_repo(hook_env: dict, tmp_path: Path) -> Path:
    """A user's repo: a clean skill workspace, committed, with the hook installed."""
    env = hook_env["env"]
    repo = tmp_path / "user"
    repo.mkdir()
    git(repo, env, "init", "-q")
    (repo / ".pre-commit-config.yaml").write_text(
        "repos:\n"
        f"  - repo: {hook_env['repo']}\n"
        f"    rev: {hook_env['rev']}\n"
        "    hooks:\n"
        "      - id: skill-eval-lint\n",
        encoding="utf-8",
    )
    installed = subprocess.run(
        [PRE_COMMIT, "install", "--install-hooks"], cwd=repo, env=env,
        capture_output=True, text=True, timeout=INSTALL_TIMEOUT,
    )
    assert installed.returncode == 0, installed.stdout + installed.stderr
    write_workspace(repo)
    return repo


def commit(repo: Path, env: dict, *paths: str, message: str = "change") -> subprocess.CompletedProcess:
    git(repo, env, "add", *paths)
    return git(repo, env, "commit", "-m", message, check=False)


def head(repo: Path, env: dict) -> str:
    return git(repo, env, "rev-parse", "--verify", "-q", "HEAD", check=False).stdout.strip()


def test_clean_commit_passes(hook_env: dict, user_repo: Path) -> None:
    env = hook_env["env"]
    result = commit(user_repo, env, ".", message="add a clean probe")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "skill-eval-lint" in output and "Passed" in output, output
    assert head(user_repo, env)


def test_drifted_seeded_defects_is_blocked_with_se201(hook_env: dict, user_repo: Path) -> None:
    env = hook_env["env"]
    assert commit(user_repo, env, ".", message="clean").returncode == 0
    before = head(user_repo, env)
    (user_repo / PROBE_RELATIVE).write_text(probe_text(seeded_defects=2), encoding="utf-8")
    result = commit(user_repo, env, str(PROBE_RELATIVE), message="drift the count")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "Failed" in output and "SE201" in output, output
    assert f"{PROBE_RELATIVE.as_posix()}:" in output, output
    assert head(user_repo, env) == before


def test_staged_version_is_linted_not_the_working_tree(hook_env: dict, user_repo: Path) -> None:
    """A bad staged probe.json is blocked even when the working tree already has the fix."""
    env = hook_env["env"]
    assert commit(user_repo, env, ".", message="clean").returncode == 0
    probe = user_repo / PROBE_RELATIVE
    probe.write_text(probe_text(step_heading=BAD_HEADING), encoding="utf-8")
    git(user_repo, env, "add", str(PROBE_RELATIVE))
    probe.write_text(probe_text(step_heading=GOOD_HEADING), encoding="utf-8")  # fixed, unstaged
    result = git(user_repo, env, "commit", "-m", "bad staged heading", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "SE101" in output and BAD_HEADING in output, output
    # pre-commit put the unstaged fix back.
    assert json.loads(probe.read_text(encoding="utf-8"))["step_heading"] == GOOD_HEADING


def test_renamed_skill_heading_blocks_through_the_unstaged_probe(hook_env: dict, user_repo: Path) -> None:
    """Only SKILL.md is staged; the probe that anchors on the renamed heading is re-checked."""
    env = hook_env["env"]
    assert commit(user_repo, env, ".", message="clean").returncode == 0
    skill = user_repo / "skills" / "verify-closeout" / "SKILL.md"
    skill.write_text(skill.read_text(encoding="utf-8").replace(GOOD_HEADING, "Step 2: Weigh the evidence"), encoding="utf-8")
    result = commit(user_repo, env, str(skill.relative_to(user_repo)), message="rename a step")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "SE101" in output and f"{PROBE_RELATIVE.as_posix()}:" in output, output


def test_edited_question_blocks_through_the_unstaged_probe(hook_env: dict, user_repo: Path) -> None:
    """Only question.md is staged; its probe's quote no longer occurs, so the count drifts."""
    env = hook_env["env"]
    assert commit(user_repo, env, ".", message="clean").returncode == 0
    question = PROBE_RELATIVE.parent / "question.md"
    path = user_repo / question
    path.write_text(path.read_text(encoding="utf-8").replace("existing coverage applies", "it is covered"), encoding="utf-8")
    result = commit(user_repo, env, str(question), message="reword the artifact")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert f"{PROBE_RELATIVE.as_posix()}:" in output, output
    assert "SE201" in output, output


def test_unrelated_files_skip_the_hook(hook_env: dict, user_repo: Path) -> None:
    env = hook_env["env"]
    assert commit(user_repo, env, ".", message="clean").returncode == 0
    (user_repo / "README.md").write_text("# notes\n", encoding="utf-8")
    (user_repo / "package.json").write_text("{}\n", encoding="utf-8")
    result = commit(user_repo, env, "README.md", "package.json", message="docs")
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "(no files to check)Skipped" in output, output


def test_config_change_relints_the_workspace(hook_env: dict, user_repo: Path) -> None:
    """A staged skill-eval.toml that stops ignoring a rule re-checks every probe."""
    env = hook_env["env"]
    (user_repo / "skill-eval.toml").write_text('ignore = ["SE201"]\n', encoding="utf-8")
    (user_repo / PROBE_RELATIVE).write_text(probe_text(seeded_defects=2), encoding="utf-8")
    assert commit(user_repo, env, ".", message="drift, ignored").returncode == 0
    (user_repo / "skill-eval.toml").write_text("# nothing ignored\n", encoding="utf-8")
    result = commit(user_repo, env, "skill-eval.toml", message="stop ignoring SE201")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "SE201" in output, output


def test_the_hooks_regular_install_runs_from_the_root_of_a_checkout(hook_env: dict, user_repo: Path) -> None:
    """``python -m skill_eval`` of a regular install (the hook's: ``pip
    install`` of the snapshot, no editable finder), run at the root of a
    checkout of this repository, imports the installed package and lints
    as the development install does: no ``skill_eval`` folder of the
    checkout stands in the way (a traceback, ``No module named
    'skill_eval.linter'``, when the package's own modules lay at the root)."""
    pythons = sorted(Path(hook_env["env"]["PRE_COMMIT_HOME"]).glob("repo*/py_env-*/bin/python"))
    assert pythons, "pre-commit built no hook environment"
    argv = ["-m", "skill_eval", "lint", "examples"]
    installed = subprocess.run([str(pythons[0]), *argv], cwd=hook_env["repo"], capture_output=True, text=True,
                               timeout=COMMIT_TIMEOUT)
    developed = subprocess.run([sys.executable, *argv], cwd=hook_env["repo"], capture_output=True, text=True,
                               timeout=COMMIT_TIMEOUT)
    assert "Traceback" not in installed.stderr, installed.stderr
    assert (installed.returncode, installed.stdout) == (developed.returncode, developed.stdout)
    assert developed.returncode == 1 and "Found 5 problems" in developed.stdout, developed.stdout
