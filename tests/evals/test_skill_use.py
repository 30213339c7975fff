"""detect_skill_use on what the real pinned CLIs printed.

The fixtures in tests/fixtures/skill_use/ were captured by
tests/agents_real/capture_skill_use.py (``gemini-cli-json-*`` with the
Gemini preset's earlier ``--output-format json``): each CLI, with its preset, in a
loopback-only network namespace against the stand-in model, in three cases
(the skill installed and called, installed and not called, not installed).
Beside each output, the ground truth the stand-in logged: whether any
request it received held the SKILL.md body. detect_skill_use never sees it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skill_eval.evals.presets import PRESET_NAMES, get_preset
from skill_eval.evals.skill_use import SkillUse, detect_skill_use

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "skill_use"
CASES = ("treatment", "treatment-unused", "control")
NAME = "closeout-review"


def captured(preset: str, case: str) -> tuple[str, dict]:
    return ((FIXTURES / f"{preset}-{case}.out").read_text("utf-8"),
            json.loads((FIXTURES / f"{preset}-{case}.json").read_text("utf-8")))


def installed_folder(preset: str, installed: bool) -> str | None:
    return f"{get_preset(preset).skills_folder}/{NAME}" if installed else None


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_verdict_agrees_with_what_the_standin_received(preset: str, case: str) -> None:
    transcript, truth = captured(preset, case)
    use = detect_skill_use(preset, transcript, NAME, installed_folder(preset, truth["skill_installed"]))
    assert isinstance(use, SkillUse) and use.evidence
    assert use.loaded is truth["skill_body_sent_to_model"], (use, truth)
    if use.loaded:
        assert NAME in use.evidence  # the tool call itself, naming the skill


@pytest.mark.parametrize("case", CASES)
def test_gemini_clis_json_output_never_claims_a_load(case: str) -> None:
    """Gemini CLI's ``--output-format json`` (the preset's output before
    stream-json; records of that time keep it) counts tool calls without their
    arguments: a load is unknown, never claimed; no successful call is no load."""
    transcript, truth = captured("gemini-cli-json", case)
    use = detect_skill_use("gemini-cli", transcript, NAME, installed_folder("gemini-cli", truth["skill_installed"]))
    if truth["skill_body_sent_to_model"]:
        assert use.loaded is None and "activate_skill" in use.evidence, use
    else:
        assert use.loaded is False and "no tool call succeeded" in use.evidence, use


def test_the_evidence_is_the_harnesses_own_call() -> None:
    assert detect_skill_use("claude-code", captured("claude-code", "treatment")[0], NAME, None).evidence == \
        'Skill tool call {"skill": "closeout-review"}'
    assert "cat " in detect_skill_use("codex", captured("codex", "treatment")[0], NAME, None).evidence
    assert detect_skill_use("opencode", captured("opencode", "treatment")[0], NAME, None).evidence == \
        'skill tool call {"name": "closeout-review"}'
    assert detect_skill_use("gemini-cli", captured("gemini-cli", "treatment")[0], NAME, None).evidence == \
        'activate_skill tool call {"name": "closeout-review"}'
    listed = detect_skill_use("claude-code", captured("claude-code", "treatment-unused")[0], NAME, ".claude/skills/x")
    assert listed.loaded is False and "listed it to the model" in listed.evidence


def test_another_skill_is_not_this_one() -> None:
    for preset in PRESET_NAMES:
        transcript = captured(preset, "treatment")[0]
        use = detect_skill_use(preset, transcript, "release-signoff", None)
        assert use.loaded is False, (preset, use)


def _claude_stream(*events: dict) -> str:
    return "\n".join(json.dumps(event) for event in (
        {"type": "system", "subtype": "init", "skills": []}, *events,
        {"type": "result", "subtype": "success", "result": "verdict: PASS"}))


def test_a_skill_call_the_harness_refused_is_no_load() -> None:
    transcript = _claude_stream(
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Skill", "input": {"skill": NAME}}]}},
        {"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": "t1", "is_error": True, "content": "Unknown skill: closeout-review"}]}})
    use = detect_skill_use("claude-code", transcript, NAME, None)
    assert use.loaded is False and "Unknown skill" in use.evidence


def test_a_read_of_the_skill_file_is_a_load() -> None:
    transcript = _claude_stream(
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "id": "t1", "name": "Read",
             "input": {"file_path": "/home/u/.claude/skills/closeout-review/SKILL.md"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": "t1", "content": "# ..."}]}})
    use = detect_skill_use("claude-code", transcript, NAME, None)
    assert use.loaded is True and "Read tool call" in use.evidence and "SKILL.md" in use.evidence


def test_what_cannot_tell_is_unknown_never_false() -> None:
    # A command agent's plain answer, Claude Code's single result object, nothing, garbage.
    assert detect_skill_use("mine", "verdict: PASS\n", NAME, "/tmp/skill/closeout-review").loaded is None
    single = json.dumps({"type": "result", "subtype": "success", "result": "verdict: PASS", "num_turns": 1})
    assert detect_skill_use("claude-code", single, NAME, None).loaded is None
    for harness in PRESET_NAMES:
        for text in ("", "not json at all", "{\"type\": ", "[1, 2]"):
            use = detect_skill_use(harness, text, NAME, None)
            assert use.loaded is None and use.evidence, (harness, text, use)


def test_a_command_agent_that_prints_a_known_transcript_is_read() -> None:
    use = detect_skill_use("my-wrapper", captured("opencode", "treatment")[0], NAME, None)
    assert use.loaded is True and "opencode transcript" in use.evidence


def test_hostile_transcripts_never_raise() -> None:
    deep = "{" + '"a": {' * 5000 + "}" * 5001
    odd = [json.dumps({"type": "assistant", "message": {"content": "text"}}),
           json.dumps({"type": "assistant", "message": {"content": [1, None, {"type": "tool_use", "input": [1]}]}}),
           json.dumps({"type": "item.completed", "item": {"type": "command_execution", "command": ["cat", 3]}}),
           json.dumps({"type": "tool_use", "part": {"tool": "skill", "state": "done"}}),
           json.dumps({"stats": {"tools": {"byName": {"activate_skill": {"success": "1"}}}}}),
           deep]
    for harness in (*PRESET_NAMES, "mine"):
        for text in odd:
            use = detect_skill_use(harness, text, NAME, None)
            assert use.loaded in (True, False, None) and isinstance(use.evidence, str)


CAPTURED_ANSWER = "Reviewed the closeout report.\n\nverdict: NOT_PROVEN\nunproven: 2\nconfidence: medium\n"
"""What the stand-in answered in every captured run (capture_skill_use.py)."""


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_captured_outputs_parse_as_the_runner_reads_them(preset: str, case: str) -> None:
    """The presets' outputs (Claude Code's and Gemini CLI's stream-json
    included) give the stand-in's answer, and a turn per model request."""
    from skill_eval.evals.presets import parse_output

    transcript, truth = captured(preset, case)
    parsed = parse_output(preset, transcript)
    assert parsed.error is None and parsed.answer == CAPTURED_ANSWER, parsed
    if preset != "codex":  # Codex reports no count of model requests
        assert parsed.turns >= truth["model_requests"], (parsed, truth)
    assert parsed.tokens_in and parsed.tokens_out
