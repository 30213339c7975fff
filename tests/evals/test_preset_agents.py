"""Preset agents through the runner, with a stand-in harness (agents/fake_harness.py).

The fake prints what each harness prints and logs what it saw (its argv,
project, environment, and a hash of each skill it discovered, computed with
its own code). The real CLIs run through the runner in tests/agents_real.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from skill_eval.evals.cli import run_main
from skill_eval.evals.agents import agents_from_mapping
from skill_eval.evals.presets import PRESET_NAMES, get_preset
from skill_eval.linter.config import ConfigError

from evals_helpers import AGENTS, PYTHON

FAKE = AGENTS / "fake_harness.py"
SKILL_FILES = {"SKILL.md", "output-spec.md"}
EXPECTED_USAGE = {
    # (tokens_in, tokens_out, tokens_cached, cost_usd, turns) the fake prints for a caught / a missed answer
    "claude-code": {True: (1500, 70, 100, 0.0123, 3), False: (1000, 50, 100, 0.0123, 1)},
    "codex": {True: (1500, 70, 100, None, None), False: (1000, 50, 100, None, None)},
    "gemini-cli": {True: (1500, 70, 100, None, 2), False: (1000, 50, 100, None, 2)},
    "opencode": {True: (1500, 70, 100, 0.002, 1), False: (1000, 50, 100, 0.002, 1)},
}


def fake_agent(tmp_path: Path, preset: str, **extra) -> dict:
    os.chmod(FAKE, 0o755)
    env = {"FAKE_HARNESS": preset, "FAKE_HARNESS_LOG": str(tmp_path / "harness.jsonl")}
    env.update(extra.pop("env", {}))
    return {"preset": preset, "executable": str(FAKE), "model": "m1", "timeout": 30, "env": env, **extra}


def program_folder(tmp_path: Path, name: str) -> Path:
    """A folder holding an executable ``name`` (OpenCode's preset needs ``rg`` on PATH)."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("#!/bin/sh\nexit 0\n")
    os.chmod(folder / name, 0o755)
    return folder


def run(suite, *args) -> int:
    return run_main([str(suite.probe("euphemized-coverage")), "--no-progress", "--reps", "1", *args])


def harness_log(tmp_path: Path) -> list[dict]:
    path = tmp_path / "harness.jsonl"
    return [json.loads(line) for line in path.read_text("utf-8").splitlines()] if path.exists() else []


def start_records(suite) -> dict[str, dict]:
    return {line["start_id"]: line for line in suite.lines() if line["type"] == "start"}


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_treatment_finds_the_installed_skill_and_the_control_none(preset, suite, tmp_path, monkeypatch):
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "users-claude"))
    monkeypatch.setenv("GIT_DIR", str(tmp_path / "users-repo"))
    monkeypatch.setenv("FAKE_SECRET", "sk-passes-through")
    if preset == "opencode":
        monkeypatch.setenv("PATH", f"{program_folder(tmp_path, 'rg')}{os.pathsep}{os.environ['PATH']}")
    suite.configure({"fake": fake_agent(tmp_path, preset)})
    assert run(suite) == 0

    seen = {entry["env"]["SKILL_EVAL_START_ID"]: entry for entry in harness_log(tmp_path)}
    records = {record["arm"]: record for record in suite.all_records()}
    starts = start_records(suite)
    assert set(records) == {"control", "treatment"} and len(seen) == 2
    for arm, record in records.items():
        entry = seen[record["start_id"]]
        caught = arm == "treatment"
        # The harness discovered the skill in the treatment only, from the preset's skills folder.
        if caught:
            assert list(entry["skills"]) == ["verify-closeout"] and entry["skills"]["verify-closeout"]["needle"]
            skill_files = {f"{get_preset(preset).skills_folder}/verify-closeout/{name}" for name in SKILL_FILES}
            assert set(entry["files"]) == {"question.md"} | skill_files
            # The record names the installed copy's hash, as the harness itself hashed what it found.
            assert starts[record["start_id"]]["installed_skill_sha256"] == entry["skills"]["verify-closeout"]["hash"]
            assert starts[record["start_id"]]["installed_skill"] == f"{get_preset(preset).skills_folder}/verify-closeout"
        else:
            assert entry["skills"] == {} and entry["files"] == ["question.md"]
            assert "installed_skill_sha256" not in starts[record["start_id"]]
        assert starts[record["start_id"]]["preset"] == preset
        # Isolation: a fresh home and temporary folder, the user's config and repository variables dropped,
        # the rest of the runner's environment passed through, stdin from /dev/null.
        assert entry["home"] != os.environ.get("HOME") and Path(entry["home"]).name == "home"
        assert Path(entry["home"]).parent == Path(entry["cwd"]).parent == Path(entry["tmpdir"]).parent
        assert entry["env"]["CLAUDE_CONFIG_DIR"] is None and entry["env"]["GIT_DIR"] is None
        assert entry["env"]["FAKE_SECRET"] == "sk-passes-through"
        assert entry["stdin_is_devnull"]
        assert ("--model" in entry["argv"]) and entry["argv"][entry["argv"].index("--model") + 1] == "m1"
        # Graded from the harness's final answer; its usage is on the record.
        assert record["status"] == "ok" and record["passed"] is caught
        assert record["caught"] == (["D1"] if caught else [])
        tokens_in, tokens_out, cached, cost, turns = EXPECTED_USAGE[preset][caught]
        assert (record["tokens_in"], record["tokens_out"], record["tokens_cached"]) == (tokens_in, tokens_out, cached)
        assert record.get("cost_usd") == cost and record.get("turns") == turns
        runs = suite.runs
        answer = (runs / record["answer_file"]).read_text("utf-8")
        assert answer.strip().endswith("verdict: NOT_PROVEN\ncriteria: 3" if caught else "verdict: PASS")
        # The harness's own output is kept beside it, as printed.
        assert json.dumps(answer)[1:-1] in (runs / record["output_file"]).read_text("utf-8")
    # Every start's scratch folder was removed.
    assert not any(Path(entry["cwd"]).parent.exists() for entry in seen.values())


def test_a_harness_error_is_an_error_start_with_its_message(suite, tmp_path):
    suite.configure({"fake": fake_agent(tmp_path, "claude-code", env={"FAKE_HARNESS_MODE": "fail"})})
    assert run(suite, "--arms", "control") == 1
    (record,) = suite.all_records()
    assert record["status"] == "error" and record["exit_code"] == 1
    assert "Unable to connect to API" in record["error"] and record["turns"] == 1
    assert "answer_file" not in record and record["output_file"]


@pytest.mark.parametrize("preset", ["claude-code", "codex"])
def test_no_answer_from_the_harness_is_an_error_start(preset, suite, tmp_path):
    suite.configure({"fake": fake_agent(tmp_path, preset, env={"FAKE_HARNESS_MODE": "silent"})})
    assert run(suite, "--arms", "control") == 1
    (record,) = suite.all_records()
    assert record["status"] == "error" and record["exit_code"] == 0
    assert record["error"].startswith(f"{preset} gave no answer")


def test_a_harness_that_outlives_its_timeout_is_killed(suite, tmp_path):
    suite.configure({"fake": fake_agent(tmp_path, "codex", timeout=1.5, env={"FAKE_HARNESS_MODE": "sleep"})})
    assert run(suite, "--arms", "control") == 1
    (record,) = suite.all_records()
    assert record["status"] == "timeout" and record["duration_s"] < 30


def test_prepend_treatment_puts_the_skill_in_the_prompt_and_installs_nothing(suite, tmp_path):
    suite.configure({"fake": fake_agent(tmp_path, "gemini-cli", treatment="prepend")})
    assert run(suite) == 0
    entries = {entry["env"]["SKILL_EVAL_START_ID"]: entry for entry in harness_log(tmp_path)}
    skill_text = (suite.skill / "SKILL.md").read_text("utf-8").rstrip("\n")
    for record in suite.all_records():
        entry = entries[record["start_id"]]
        assert entry["skills"] == {} and entry["files"] == ["question.md"]
        assert entry["prompt"].startswith(skill_text) is (record["arm"] == "treatment")
        assert "installed_skill" not in start_records(suite)[record["start_id"]]


def test_args_come_after_the_preset_flags_with_placeholders(suite, tmp_path):
    suite.configure({"fake": fake_agent(tmp_path, "claude-code", args=["--max-turns", "4", "--x={model}@{workspace}"])})
    assert run(suite, "--arms", "control") == 0
    (entry,) = harness_log(tmp_path)
    argv = entry["argv"]
    assert argv[argv.index("--max-turns"):argv.index("--max-turns") + 3] == ["--max-turns", "4", f"--x=m1@{suite.root}"]
    assert argv.index("--output-format") < argv.index("--max-turns") < argv.index("--")


def test_preflight_names_a_missing_harness_and_spends_nothing(suite, tmp_path, capsys):
    suite.configure({"fake": {"preset": "codex", "executable": str(tmp_path / "no-codex")}})
    assert run(suite) == 2
    error = capsys.readouterr().err
    assert "no-codex" in error and "@openai/codex" in error and "docs/harnesses/codex.md" in error
    assert suite.files() == []


def test_preflight_names_what_opencode_needs_on_path(suite, tmp_path, capsys):
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    suite.configure({"fake": fake_agent(tmp_path, "opencode", env={"PATH": str(bare)})})
    assert run(suite) == 2
    assert "'rg' not found" in capsys.readouterr().err
    assert suite.files() == []


def test_an_agent_env_that_sets_an_isolation_variable_is_refused_before_any_start(suite, tmp_path, capsys):
    suite.configure({"fake": fake_agent(tmp_path, "claude-code", env={"HOME": "/root"})})
    assert run(suite) == 2
    assert "agents.fake.env sets HOME" in capsys.readouterr().err
    assert suite.files() == [] and harness_log(tmp_path) == []


def test_a_scratch_folder_inside_a_repository_is_refused_before_any_start(suite, tmp_path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    monkeypatch.setenv("SKILL_EVAL_SCRATCH", str(repo))
    suite.configure({"fake": fake_agent(tmp_path, "claude-code")})
    assert run(suite) == 2
    assert "SKILL_EVAL_SCRATCH" in capsys.readouterr().err
    assert suite.files() == [] and harness_log(tmp_path) == []


def test_a_prompt_too_long_for_one_argument_is_refused_before_any_start(suite, tmp_path, capsys):
    artifact = suite.probe("euphemized-coverage") / "question.md"
    artifact.write_text(artifact.read_text("utf-8") + "filler line\n" * 12000, "utf-8")
    suite.configure({"fake": fake_agent(tmp_path, "claude-code")})
    assert run(suite, "--allow-lint-errors") == 2
    assert "command-line argument" in capsys.readouterr().err
    assert suite.files() == [] and harness_log(tmp_path) == []


# -- the config ------------------------------------------------------------------------


def test_config_reads_a_preset_agent_with_its_overrides():
    agents = agents_from_mapping({"agents": {"claude": {
        "preset": "claude-code", "model": "claude-sonnet-4-5", "args": ["--max-turns", "8"],
        "env": {"CLAUDE_CODE_MAX_RETRIES": "3"}, "executable": "bin/claude", "timeout": 300}}})
    agent = agents["claude"]
    assert (agent.preset, agent.command, agent.treatment) == ("claude-code", (), "install")
    assert agent.args == ("--max-turns", "8") and agent.executable == "bin/claude" and agent.timeout == 300
    assert agents_from_mapping({"agents": {"c": {"command": ["x"]}}})["c"].treatment == "prepend"


@pytest.mark.parametrize("table, message", [
    ({"preset": "claude"}, "did you mean 'claude-code'?"),
    ({"preset": "codex", "command": ["codex"]}, "both `preset` and `command`"),
    ({"preset": "codex", "treatment": "args"}, "\"install\" or \"prepend\""),
    ({"preset": "codex", "treatment-args": ["x"]}, "treatment-args` is for command agents"),
    ({"command": ["x"], "treatment": "install"}, "\"prepend\" or \"args\""),
    ({"command": ["x"], "args": ["y"]}, "`agents.a.args` is for presets"),
    ({"command": ["x"], "executable": "y"}, "`agents.a.executable` is for presets"),
    ({"preset": "codex", "args": "x"}, "`agents.a.args` must be a list of strings"),
    ({"preset": "codex", "executable": ""}, "must be a program's path or name"),
    ({}, "or set `agents.a.preset`"),
])
def test_config_refuses_a_preset_agent_that_cannot_be_meant(table, message):
    with pytest.raises(ConfigError) as error:
        agents_from_mapping({"agents": {"a": table}}, "skill-eval.toml")
    assert message in str(error.value) and str(error.value).startswith("skill-eval.toml: ")


def test_an_agent_table_is_the_runners_to_refuse(tmp_path, capsys):
    """The ``[agents.NAME]`` tables are read by the runner, not into the
    linter's config: one that cannot be meant is refused by ``skill-eval
    run`` with the file and the key (no traceback, nothing started), and a
    lint of the same workspace is not stopped by it."""
    from skill_eval.linter.engine import lint_paths

    config = tmp_path / "skill-eval.toml"
    config.write_text('max-artifact-lines = 40\n\n[agents.a]\npreset = "claude"\n', encoding="utf-8")
    assert lint_paths([tmp_path]).diagnostics == []
    assert run_main([str(tmp_path)]) != 0
    err = capsys.readouterr().err
    assert f"{config}: " in err and "did you mean 'claude-code'?" in err and "Traceback" not in err
    assert not (tmp_path / "evals").exists()


def test_the_report_model_shows_each_starts_usage(suite, tmp_path):
    """The HTML viewer's model reads usage from the records: a preset run's
    tokens, cost and turns reach it per start."""
    from skill_eval.evals.probes import Workspace
    from skill_eval.evals.viewer_build import build_model

    suite.configure({"fake": fake_agent(tmp_path, "claude-code")})
    assert run(suite) == 0
    model = build_model(Workspace.open([suite.root]), lint=False)
    starts = {start["arm"]: start for group in model["groups"] for start in group["starts"]}
    for arm, caught in (("treatment", True), ("control", False)):
        tokens_in, tokens_out, _cached, cost, turns = EXPECTED_USAGE["claude-code"][caught]
        assert (starts[arm]["tokens_in"], starts[arm]["tokens_out"]) == (tokens_in, tokens_out)
        assert (starts[arm]["cost_usd"], starts[arm]["turns"]) == (cost, turns)


def test_report_sums_usage_per_agent_model_and_arm_in_text_and_json(suite, tmp_path, capsys):
    from skill_eval.evals.cli import report_main

    suite.configure({
        "fake": fake_agent(tmp_path, "claude-code"),
        "other": fake_agent(tmp_path, "codex", env={"FAKE_HARNESS": "codex"}),
        "failing": fake_agent(tmp_path, "claude-code", env={"FAKE_HARNESS_MODE": "fail"}),
        "plain": {"command": [PYTHON, str(AGENTS / "rule_agent.py")], "model": "m1"},
    })
    assert run(suite, "--agent", "fake", "--reps", "2") == 0
    assert run(suite, "--agent", "other", "--model", "m2") == 0
    assert run(suite, "--agent", "failing", "--arms", "control") == 1
    assert run(suite, "--agent", "plain") == 0
    capsys.readouterr()
    # Ground truth: the sums of what the runs files hold, per agent, model and arm.
    expected = {}
    for record in suite.all_records():
        key = (record["agent"], record["model"], record["arm"])
        entry = expected.setdefault(key, {"starts": 0, "reporting": 0, "tokens_in": None, "tokens_out": None,
                                          "cost_usd": None, "turns": None})
        entry["starts"] += 1
        entry["reporting"] += any(name in record for name in ("tokens_in", "tokens_out", "cost_usd", "turns"))
        for name in ("tokens_in", "tokens_out", "cost_usd", "turns"):
            if record.get(name) is not None:
                entry[name] = (entry[name] or 0) + record[name]
    assert report_main([str(suite.root), "--format", "json"]) == 0
    usage = json.loads(capsys.readouterr().out)["usage"]
    assert {(u["agent"], u["model"], u["arm"]): {k: v for k, v in u.items() if k not in ("agent", "model", "arm")}
            for u in usage} == expected
    assert expected[("fake", "m1", "treatment")]["tokens_in"] == 2 * 1500
    assert expected[("failing", "m1", "control")]["turns"] == 1 and expected[("plain", "m1", "control")]["reporting"] == 0

    assert report_main([str(suite.root)]) == 0
    text = capsys.readouterr().out
    assert "usage: control 2 start(s): 2,000 tokens in, 100 out, $0.0246, 2 turn(s); " \
           "treatment 2 start(s): 3,000 tokens in, 140 out, $0.0246, 6 turn(s)" in text
    assert "usage: control 1 start(s): 1,000 tokens in, 50 out; treatment 1 start(s): 1,500 tokens in, 70 out" in text
    plain_table = text.split("agent plain")[1].split("agent ")[0]
    assert "usage:" not in plain_table
