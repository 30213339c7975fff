"""The presets' scratch projects, argv, environment and parsers, without the CLIs.

(What the real harnesses do with them is tested in test_agents_real.py.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skill_eval.evals.presets import (
    ISOLATION_VARIABLES, PRESET_NAMES, PRESETS, PresetError, build_argv, get_preset, missing_programs,
    parse_output, prepare_project, skill_tree_hash,
)

REPO = Path(__file__).resolve().parent.parent.parent
SKILL = REPO / "examples" / "skills" / "closeout-review"

RUNNER_ENV = {
    "PATH": "/usr/bin:/bin", "ANTHROPIC_API_KEY": "sk-user", "OPENAI_BASE_URL": "https://gateway.example/v1",
    "HOME": "/home/user", "CLAUDE_CONFIG_DIR": "/home/user/.claude-work", "CODEX_HOME": "/home/user/.codex",
    "XDG_CONFIG_HOME": "/home/user/.config", "GIT_DIR": "/work/repo/.git", "OPENCODE_CONFIG_DIR": "/home/user/oc",
}


def prepare(preset: str, tmp_path: Path, skill: Path | None = SKILL, **kwargs):
    values = {"prompt": "Review this.", "artifact_name": "question.md", "artifact": b"# Report\n",
              "model": "some-model", "base_env": RUNNER_ENV}
    values.update(kwargs)
    return prepare_project(preset, tmp_path / "scratch", skill=skill, **values)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_arms_differ_only_by_the_installed_skill(preset: str, tmp_path: Path) -> None:
    control = prepare(preset, tmp_path / "c", skill=None)
    treatment = prepare(preset, tmp_path / "t")

    def tree(folder: Path) -> set[str]:
        return {path.relative_to(folder).as_posix() for path in folder.rglob("*")}

    skills = PRESETS[preset].skills_folder
    assert tree(control.cwd) == {"question.md"}
    assert (control.cwd / "question.md").read_bytes() == b"# Report\n"
    installed = tree(treatment.cwd) - tree(control.cwd)
    assert treatment.skill_dir == treatment.cwd / skills / "closeout-review"
    assert {"SKILL.md", "output-spec.md"} <= {Path(p).name for p in installed}
    assert not any("evals" in Path(p).parts or p.endswith("probe.json") for p in installed)
    assert (treatment.skill_dir / "SKILL.md").read_bytes() == (SKILL / "SKILL.md").read_bytes()
    assert tree(control.home) == tree(treatment.home)
    assert control.skill_dir is None and control.skill_hash is None
    assert treatment.skill_hash == skill_tree_hash(treatment.skill_dir)
    assert control.stdin == treatment.stdin == os.devnull


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_environment_passes_through_minus_what_isolation_replaces(preset: str, tmp_path: Path) -> None:
    launch = prepare(preset, tmp_path, env={"EXTRA": "1"})
    env = launch.env
    assert env["ANTHROPIC_API_KEY"] == "sk-user" and env["OPENAI_BASE_URL"] == "https://gateway.example/v1"
    assert env["EXTRA"] == "1"
    assert env["HOME"] == str(launch.home) and env["TMPDIR"] == str(launch.tmp)
    assert env["XDG_CONFIG_HOME"].startswith(str(launch.home))
    for name in ("CLAUDE_CONFIG_DIR", "GIT_DIR", "OPENCODE_CONFIG_DIR"):
        assert name not in env
    assert env.get("CODEX_HOME") in (None, str(launch.home / ".codex"))
    assert all(not value.startswith("/home/user") for key, value in env.items() if key in ISOLATION_VARIABLES)
    for key, value in PRESETS[preset].env.items():
        assert env[key] == value


def test_an_agent_env_overrides_the_preset_but_not_the_isolation(tmp_path: Path) -> None:
    launch = prepare("claude-code", tmp_path / "a", env={"CLAUDE_CODE_MAX_RETRIES": "4"})
    assert launch.env["CLAUDE_CODE_MAX_RETRIES"] == "4"
    with pytest.raises(PresetError, match="HOME"):
        prepare("claude-code", tmp_path / "b", env={"HOME": "/root"})


def test_harness_config_lands_in_the_fresh_home(tmp_path: Path) -> None:
    codex = prepare("codex", tmp_path / "codex")
    assert "[analytics]\nenabled = false" in (codex.home / ".codex" / "config.toml").read_text()
    gemini = prepare("gemini-cli", tmp_path / "gemini")
    settings = json.loads((gemini.home / ".gemini" / "settings.json").read_text())
    assert settings["general"]["maxAttempts"] == 1 and settings["model"]["name"] == "some-model"
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    vertex = prepare("gemini-cli", tmp_path / "vertex", base_env={**RUNNER_ENV, "GOOGLE_GENAI_USE_VERTEXAI": "true"})
    assert json.loads((vertex.home / ".gemini" / "settings.json").read_text())["security"]["auth"]["selectedType"] \
        == "vertex-ai"
    opencode = prepare("opencode", tmp_path / "opencode")
    assert json.loads((opencode.home / ".config" / "opencode" / "opencode.json").read_text())["autoupdate"] is False


def test_a_scratch_folder_inside_a_repository_or_below_skills_is_refused(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    with pytest.raises(PresetError, match="git repository"):
        prepare_project("codex", tmp_path / "repo" / "deep" / "scratch", prompt="p", artifact_name="q.md",
                        artifact=b"", base_env=RUNNER_ENV)
    (tmp_path / "up" / ".claude" / "skills").mkdir(parents=True)
    with pytest.raises(PresetError, match="holds skills"):
        prepare_project("opencode", tmp_path / "up" / "scratch", prompt="p", artifact_name="q.md",
                        artifact=b"", base_env=RUNNER_ENV)
    (tmp_path / "used" / "scratch").mkdir(parents=True)
    (tmp_path / "used" / "scratch" / "left.txt").write_text("x")
    with pytest.raises(PresetError, match="not empty"):
        prepare_project("claude-code", tmp_path / "used" / "scratch", prompt="p", artifact_name="q.md",
                        artifact=b"", base_env=RUNNER_ENV)
    for name in ("../q.md", "a/b.md", ".claude", ""):
        with pytest.raises(PresetError, match="plain file name"):
            prepare("claude-code", tmp_path / f"bad{len(name)}", artifact_name=name)
    with pytest.raises(PresetError, match="no SKILL.md"):
        prepare("claude-code", tmp_path / "noskill", skill=tmp_path)
    with pytest.raises(PresetError, match="unknown preset"):
        get_preset("claude")


def test_the_installed_copy_leaves_out_the_answer_key(tmp_path: Path) -> None:
    skill = tmp_path / "folder-name"
    (skill / "evals" / "probes" / "p1").mkdir(parents=True)
    (skill / "evals" / "probes" / "p1" / "probe.json").write_text("{}")
    (skill / "references" / "cases").mkdir(parents=True)
    (skill / "references" / "cases" / "probe.json").write_text('{"quote": "the key"}')
    (skill / "references" / "guide.md").write_text("guide")
    (tmp_path / "secret.txt").write_text("outside")
    (skill / "outside-link.txt").symlink_to(tmp_path / "secret.txt")
    (skill / "inside-link.md").symlink_to(skill / "references" / "guide.md")
    (skill / "SKILL.md").write_text("---\nname: real-name\ndescription: d\n---\n# Body\n")
    launch = prepare("opencode", tmp_path / "run", skill=skill)
    installed = {p.relative_to(launch.skill_dir).as_posix() for p in launch.skill_dir.rglob("*")}
    assert launch.skill_dir.name == "real-name"
    assert installed == {"SKILL.md", "references", "references/guide.md", "inside-link.md"}
    assert not (launch.skill_dir / "inside-link.md").is_symlink()


def test_the_skill_hash_follows_the_files_and_their_bytes(tmp_path: Path) -> None:
    first = tmp_path / "a"
    first.mkdir()
    (first / "SKILL.md").write_text("x")
    (first / "ref.md").write_text("y")
    second = tmp_path / "b"
    second.mkdir()
    (second / "ref.md").write_text("y")
    (second / "SKILL.md").write_text("x")
    assert skill_tree_hash(first) == skill_tree_hash(second)
    (second / "ref.md").write_text("y!")
    assert skill_tree_hash(first) != skill_tree_hash(second)
    (second / "ref.md").rename(second / "other.md")
    (second / "other.md").write_text("y")
    assert skill_tree_hash(first) != skill_tree_hash(second)


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_argv_places_model_args_and_prompt(preset: str) -> None:
    argv = build_argv(get_preset(preset), "--help {model}", "m-1", ["-c", "x={model}"], executable="/opt/bin/h")
    assert argv[0] == "/opt/bin/h"
    assert "m-1" in argv and argv[argv.index("-c") + 1] == "x=m-1"
    assert argv[-1] in ("--help {model}", "--prompt=--help {model}")
    assert argv[-2] == "--" or argv[-1].startswith("--prompt=")
    without_model = build_argv(get_preset(preset), "p")
    assert "--model" not in without_model and without_model[0] == PRESETS[preset].executable


def test_missing_programs_are_named(tmp_path: Path) -> None:
    (tmp_path / "opencode").write_text("#!/bin/sh\n")
    (tmp_path / "opencode").chmod(0o755)
    assert missing_programs(PRESETS["opencode"], {"PATH": str(tmp_path)}) == ["rg"]
    assert missing_programs(PRESETS["claude-code"], {"PATH": str(tmp_path)}) == ["claude"]
    assert missing_programs(PRESETS["claude-code"], {"PATH": ""}, executable=str(tmp_path / "opencode")) == []


GARBAGE = ["", "not json", "{", '{"type": "result"}', "[1, 2]", '{"response": 5, "stats": {"models": []}}',
           '{"type": "step_finish", "part": "x"}\n{"type": "text", "part": {"text": 3}}', "{" * 5000 + "}" * 5000,
           '{"type":"item.completed","item":null}\n{"type":"turn.completed","usage":"x"}']


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_parser_never_raises_and_says_when_there_is_no_answer(preset: str) -> None:
    for stdout in GARBAGE:
        parsed = parse_output(preset, stdout.encode(), b"some stderr line\n")
        assert parsed.answer is None or isinstance(parsed.answer, str)
        if parsed.answer is None:
            assert parsed.error, (preset, stdout[:40])


def test_parsers_read_each_harness_shape() -> None:
    """The shapes the real CLIs print (test_agents_real.py checks the values
    against the stand-in's log); here the error paths seen there."""
    claude_error = json.dumps({"type": "result", "subtype": "success", "is_error": True, "num_turns": 1,
                               "result": "API Error: Unable to connect to API (ConnectionRefused)",
                               "usage": {"input_tokens": 0, "output_tokens": 0}, "total_cost_usd": 0})
    parsed = parse_output("claude-code", claude_error)
    assert parsed.answer is None and "Unable to connect" in parsed.error
    codex_failed = "\n".join(json.dumps(event) for event in (
        {"type": "thread.started", "thread_id": "t"}, {"type": "turn.started"},
        {"type": "error", "message": "Reconnecting... 2/5"},
        {"type": "turn.failed", "error": {"message": "Connection failed: error sending request"}}))
    parsed = parse_output("codex", codex_failed)
    assert parsed.answer is None and parsed.error == "Connection failed: error sending request"
    codex_ok = "\n".join(json.dumps(event) for event in (
        {"type": "error", "message": "Reconnecting... 2/5"},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "first"}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "verdict: PASS"}},
        {"type": "turn.completed", "usage": {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 2}}))
    parsed = parse_output("codex", codex_ok)
    assert (parsed.answer, parsed.tokens_in, parsed.tokens_cached, parsed.tokens_out, parsed.error) == \
        ("verdict: PASS", 10, 4, 2, None)
    gemini_stderr = json.dumps({"session_id": "s", "error": {"type": "Error", "message": "Invalid auth method selected.",
                                                             "code": 41}}, indent=2)
    parsed = parse_output("gemini-cli", "", "YOLO mode is enabled.\n" + gemini_stderr)
    assert parsed.answer is None and parsed.error == "Invalid auth method selected."
    opencode_error = json.dumps({"type": "error", "timestamp": 1, "error": {
        "name": "APIError", "data": {"message": "Cannot connect to API", "isRetryable": True}}})
    parsed = parse_output("opencode", opencode_error)
    assert parsed.answer is None and parsed.error == "Cannot connect to API"
