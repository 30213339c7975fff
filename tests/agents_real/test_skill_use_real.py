"""``skill_loaded`` on the records of real harness starts, run by ``skill-eval run``.

Per harness, one loopback-only network namespace (netns_driver.py's phases)
holds two stand-in endpoints and runs ``skill-eval run`` twice: the ``loads``
agent (control and treatment) against a stand-in that calls the harness's
skill tool for the skill whenever a request offers it and names the skill,
then the ``ignores`` agent (treatment only) against a stand-in that answers
at once. Ground truth is each stand-in's own log: whether a request it
received held the SKILL.md body (the skill reached the model) and whether it
replied with a skill-tool call. The records' ``skill_loaded`` must agree; the
report must flag the treatment start that never loaded the skill.

Skipped when a CLI is not installed; failed instead under
``SKILL_EVAL_REQUIRE_AGENT_CLIS=1``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents_real_helpers import (
    API_KEYS, MODELS, SKILL, SKILL_BODY_LINE, base_env, endpoint_settings, read_log, require_cli, run_phases,
)
from test_agents_real_runner import ANSWER, PROBE_ID, parse_time, toml_value
from skill_eval.evals.presets import PRESET_NAMES
from skill_eval.linter.run_records import parse_runs

AGENTS = ("loads", "ignores")


def workspace(root: Path, preset: str, executable: Path) -> Path:
    """The example skill with one probe (no transcripts), and two agents of the preset."""
    import shutil

    skill = root / "closeout-review"
    skill.mkdir(parents=True)
    for name in ("SKILL.md", "output-spec.md"):
        shutil.copyfile(SKILL / name, skill / name)
    shutil.copytree(SKILL / "evals" / "probes" / PROBE_ID, skill / "evals" / "probes" / PROBE_ID,
                    ignore=shutil.ignore_patterns("transcripts"))
    lines = []
    for agent in AGENTS:
        env, args = endpoint_settings(preset, "{" + agent + "}", with_key=False)
        lines += [f"[agents.{agent}]", f"preset = {json.dumps(preset)}", f"executable = {json.dumps(str(executable))}",
                  f"model = {json.dumps(MODELS[preset])}", "timeout = 120", f"args = {json.dumps(args)}",
                  f"env = {toml_value(env)}", ""]
    (root / "skill-eval.toml").write_text("\n".join(lines), "utf-8")
    return skill


@pytest.fixture(scope="module", params=PRESET_NAMES)
def skill_runs(request, tmp_path_factory) -> dict:
    preset = request.param
    executable = require_cli(preset)
    work = tmp_path_factory.mktemp(f"skill-use-{preset}")
    root = work / "ws"
    skill = workspace(root, preset, executable)
    scratch = work / "scratch"
    scratch.mkdir()
    variable, key = API_KEYS[preset]
    env = dict(base_env(), SKILL_EVAL_SCRATCH=str(scratch), **{variable: key})
    runner = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
              "--no-progress", "--reps", "1", "-j", "1"]

    def command(name: str, *extra: str) -> dict:
        return {"name": name, "argv": runner + ["--agent", name, *extra, str(root)], "env": env, "cwd": str(root),
                "timeout": 240}

    spec = {
        "endpoints": {
            "loads": {"log": str(work / "loads.jsonl"), "script": {"answer": ANSWER, "skill_name": "closeout-review"}},
            "ignores": {"log": str(work / "ignores.jsonl"), "script": {"answer": ANSWER}},
        },
        "fill_files": [str(root / "skill-eval.toml")],
        "phases": [[command("loads")], [command("ignores", "--arms", "treatment")]],
    }
    result = run_phases(work, spec, outer_timeout=2 * 240 + 60)
    runs = skill / "evals" / "runs"
    records = [record for path in sorted(runs.glob("*.jsonl"))
               for _line, record in parse_runs(path, path.read_bytes()).records]
    return {"preset": preset, "root": root, "work": work, "result": result, "records": records}


def _sent(requests: list[dict], record: dict) -> list[dict]:
    """The requests a start sent: those logged within its recorded time window."""
    return [r for r in requests if parse_time(record["started"]) <= r["time"] <= parse_time(record["ended"])]


def test_skill_loaded_agrees_with_what_the_model_was_sent(skill_runs):
    preset = skill_runs["preset"]
    commands = skill_runs["result"]["commands"]
    assert all(command["exit_code"] == 0 for command in commands.values()), json.dumps(commands)[-3000:]
    by_agent_arm = {(r["agent"], r["arm"]): r for r in skill_runs["records"]}
    assert set(by_agent_arm) == {("loads", "control"), ("loads", "treatment"), ("ignores", "treatment")}
    for (agent, arm), record in by_agent_arm.items():
        assert record["status"] == "ok", record
        requests = _sent(read_log(skill_runs["work"] / f"{agent}.jsonl"), record)
        assert requests, (agent, arm)
        # Ground truth, from the stand-in's log: did the SKILL.md body reach the model?
        body_sent = any(SKILL_BODY_LINE in json.dumps(r["body"], ensure_ascii=False) for r in requests)
        called = any(r.get("reply", "").startswith("tool:") for r in requests)
        assert body_sent == called == ((agent, arm) == ("loads", "treatment")), (agent, arm, requests)
        assert record["skill_loaded"] is body_sent, record
        assert record["skill_evidence"]
        if record["skill_loaded"]:
            assert "closeout-review" in record["skill_evidence"], record
        # The stand-in's catching answer is graded as usual: no contamination in a clean project.
        assert "contaminated" not in record and record["passed"] is True, record


def test_the_report_flags_the_treatment_that_never_loaded_the_skill(skill_runs):
    completed = subprocess.run([sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())",
                                "report", "--format", "json", str(skill_runs["root"])],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    groups = {group["agent"]: group for group in json.loads(completed.stdout)["groups"]}
    ignored = groups["ignores"]
    (start,) = ignored["starts"]
    assert start["skill_loaded"] is False and start["skill_flag"] == "skill-not-loaded", start
    assert ignored["arms"]["treatment"]["skill_not_loaded"] == 1
    loads = groups["loads"]
    assert loads["arms"]["control"]["skill_not_loaded"] == 1 and loads["arms"]["control"]["skill_loaded"] == 0
    assert loads["arms"]["treatment"]["skill_loaded"] == 1
    assert all(s["skill_flag"] is None for s in loads["starts"])
    text = subprocess.run([sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())",
                           "report", str(skill_runs["root"])], capture_output=True, text=True, timeout=120).stdout
    assert "TREATMENT DID NOT LOAD THE SKILL in 1 start(s)" in text, text
