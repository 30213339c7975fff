"""The four real agent CLIs, run with their presets against the stand-in model.

Every CLI runs inside a network namespace holding nothing but loopback, with
the stand-in on 127.0.0.1 in the same namespace (agents_real_helpers.py,
netns_driver.py). Ground truth is what the stand-in logged: the requests the
real harness sent and the usage the stand-in reported back, never what the
code under test says about itself.

Skipped when a CLI is not installed; failed instead under
``SKILL_EVAL_REQUIRE_AGENT_CLIS=1`` (CI runs ``.ci/install-agent-clis`` first).

These run each CLI directly (a preset's Launch, no runner), to see what the
harness does to its project; test_agents_real_runner.py runs them through
``skill-eval run``, and there the failing endpoints (refusing, unreachable,
hanging).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agents_real_helpers import (
    OPENCODE_COST_PER_MILLION, PROBE, SKILL, SKILL_BODY_LINE, SKILL_DESCRIPTION, run_harness,
)
from skill_eval.evals.grading import grade_answer
from skill_eval.evals.presets import PRESET_NAMES, parse_output
from skill_eval.evals.prompt import build_prompt
from skill_eval.linter.outputspec import parse_output_spec

ANSWER = "I read the whole closeout report.\n\nverdict: NOT_PROVEN\nunproven: 2\nconfidence: medium\n"
CACHED = 100


def probe_prompt() -> tuple[str, bytes, list, object]:
    """The example probe's real prompt: its artifact, then the answer format."""
    artifact = (PROBE / "question.md").read_bytes()
    spec = parse_output_spec((SKILL / "output-spec.md").read_text("utf-8"))
    defects = json.loads((PROBE / "probe.json").read_text("utf-8"))["defects"]
    return build_prompt(artifact, spec).decode("utf-8"), artifact, defects, spec


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_the_treatment_gets_the_skill_and_the_control_does_not(preset: str, tmp_path: Path) -> None:
    """Both arms get the same probe; only the treatment's project holds the skill.

    The scripted model calls the harness's own skill tool when a request lists
    the skill, so the SKILL.md body comes back in the treatment's next request.
    """
    prompt, artifact, defects, spec = probe_prompt()
    script = {"answer": ANSWER, "skill_name": "closeout-review", "cached_tokens": CACHED}
    runs = {}
    for arm, skill in (("control", None), ("treatment", SKILL)):
        (tmp_path / arm).mkdir()
        runs[arm] = run_harness(preset, tmp_path / arm, prompt=prompt, skill=skill, script=script,
                                artifact=artifact)
        assert runs[arm].status == "ok", runs[arm].describe()
    control, treatment = runs["control"], runs["treatment"]

    assert control.launch.skill_dir is None
    assert treatment.launch.skill_dir is not None and (treatment.launch.skill_dir / "SKILL.md").is_file()
    assert not (treatment.launch.skill_dir / "evals").exists()
    assert treatment.launch.skill_hash

    # What the real harness sent: the skill's own description in the treatment only.
    assert control.model_requests() and treatment.model_requests()
    assert not any(SKILL_DESCRIPTION in text for text in control.texts()), control.describe()
    assert SKILL_DESCRIPTION in treatment.texts()[-1], treatment.describe()
    assert any(request["reply"].startswith("tool:") for request in treatment.requests), treatment.describe()
    assert SKILL_BODY_LINE in treatment.texts()[-1], "the harness did not load the skill's body"
    assert not any(SKILL_BODY_LINE in text for text in control.texts())
    # The prompt reached the model verbatim (the artifact's first line, at least).
    first_line = artifact.decode("utf-8").splitlines()[0]
    assert all(first_line in run.texts()[-1] for run in (control, treatment))

    for arm, run in runs.items():
        parsed = parse_output(preset, run.stdout, run.stderr)
        assert parsed.error is None, run.describe()
        assert parsed.answer is not None and parsed.answer.strip() == ANSWER.strip(), run.describe()
        answer, grades = grade_answer(parsed.answer, defects, spec)
        assert answer.fields["verdict"].text == "NOT_PROVEN"
        assert all(grade.caught for grade in grades), grades
        # Tokens: the sums of what the stand-in reported for this run's model requests.
        reported = [request["reported_usage"] for request in run.model_requests()]
        assert parsed.tokens_in == sum(usage["input"] for usage in reported), (arm, parsed, reported)
        assert parsed.tokens_out == sum(usage["output"] for usage in reported), (arm, parsed, reported)
        assert parsed.tokens_cached == CACHED * len(reported), (arm, parsed, reported)
        if preset in ("claude-code", "gemini-cli", "opencode"):
            assert parsed.turns is not None and parsed.turns >= len(reported) > 0, (arm, parsed)
        if preset == "claude-code":
            assert parsed.cost_usd is not None and parsed.cost_usd > 0
            assert parsed.duration_s is not None and parsed.duration_s > 0
        if preset == "opencode":
            uncached = sum(usage["input"] - usage["cached"] for usage in reported)
            expected = (uncached * OPENCODE_COST_PER_MILLION["input"] + CACHED * len(reported)
                        * OPENCODE_COST_PER_MILLION["cache_read"] + parsed.tokens_out
                        * OPENCODE_COST_PER_MILLION["output"]) / 1e6
            assert parsed.cost_usd == pytest.approx(expected), (parsed, reported)
    assert len(treatment.model_requests()) > len(control.model_requests())

    # No host name was looked up: no telemetry, update check or download (the
    # namespace's only DNS server logs every name asked for).
    assert control.names == [] and treatment.names == [], (control.names, treatment.names)
    # The harness left the project as it was given: the arms still differ by the skill alone.
    def files(folder: Path) -> set[str]:
        return {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}

    skill_files = {f"{treatment.launch.skill_dir.relative_to(treatment.launch.cwd).as_posix()}/{name}"
                   for name in files(treatment.launch.skill_dir)}
    assert files(control.launch.cwd) == {"question.md"}
    assert files(treatment.launch.cwd) == {"question.md"} | skill_files


@pytest.mark.parametrize("preset", PRESET_NAMES)
def test_a_prompt_that_looks_like_a_flag_reaches_the_model_verbatim(preset: str, tmp_path: Path) -> None:
    prompt = "--help -p --version\n- a list item first\nverdict?"
    run = run_harness(preset, tmp_path, prompt=prompt, script={"answer": ANSWER})
    assert run.status == "ok", run.describe()
    assert run.texts() and json.dumps(prompt)[1:-1] in run.texts()[-1], run.describe()
    assert parse_output(preset, run.stdout, run.stderr).answer.strip() == ANSWER.strip()
