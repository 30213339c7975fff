"""The four real agent CLIs run by ``skill-eval run`` itself, with their presets.

For each harness, one loopback-only network namespace (netns_driver.py's
phases) holds four stand-in endpoints and runs ``skill-eval run`` (a real
process, which starts the real CLI): first the ``main`` agent, control and
treatment one after the other (``-j 1``, so each request the stand-in logged
falls inside one start's recorded time window); then, at once, three agents
on the control arm: one whose endpoint refuses every request, one whose
endpoint is unreachable, one whose endpoint reads the request and never
answers. Ground truth is what the stand-ins logged (the requests the real
harness sent, the usage they reported) and the skill folder on disk, never
what the runner says about itself.

Skipped when a CLI is not installed; failed instead under
``SKILL_EVAL_REQUIRE_AGENT_CLIS=1``.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from datetime import datetime
from pathlib import Path

import pytest

from agents_real_helpers import (
    API_KEYS, MODELS, SKILL, SKILL_BODY_LINE, SKILL_DESCRIPTION, base_env, endpoint_settings, read_log, require_cli,
    run_phases,
)
from skill_eval.evals.presets import PRESET_NAMES, get_preset
from skill_eval.linter.run_records import parse_runs

PROBE_ID = "skipped-retry-test"
ANSWER = "Criterion 3 rests on a skipped test.\n\nverdict: NOT_PROVEN\nunproven: 3\nconfidence: high\n"
CACHED = 100
MAIN_TIMEOUT = 120.0
HANG_TIMEOUT = {"claude-code": 15.0, "codex": 15.0, "gemini-cli": 15.0, "opencode": 30.0}
"""Long enough for the harness to start and send its request on a busy
2-core machine while two other runs start theirs (OpenCode takes 5-15 s to
start there)."""
UNREACHABLE_TIMEOUT = {"claude-code": 30.0, "codex": 30.0, "gemini-cli": 30.0, "opencode": 30.0}
"""Claude Code, Codex and Gemini CLI give up by themselves within seconds with
the presets' settings; OpenCode retries for ~75 s, so the timeout ends it."""
KILL_MARGIN = 10.0
"""Seconds a start may run past its timeout: killing its process group and
reaping it (REAP_TIMEOUT), on a loaded machine."""
FAILURE_AGENTS = ("refused", "unreachable", "hanging")


def reference_tree_hash(folder: Path) -> str:
    """sha256 over the skill's files as a treatment installs them (every file
    but evals/), each relative path and its bytes length-prefixed, sorted:
    written here again, independently of the runner."""
    entries = []
    for path in folder.rglob("*"):
        relative = path.relative_to(folder)
        if path.is_file() and relative.parts[0] != "evals":
            entries.append((relative.as_posix().encode(), path.read_bytes()))
    digest = hashlib.sha256()
    for name, data in sorted(entries):
        digest.update(len(name).to_bytes(8, "big") + name + len(data).to_bytes(8, "big") + data)
    return digest.hexdigest()


def toml_value(value) -> str:
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def workspace(root: Path, preset: str, executable: Path) -> Path:
    """A copy of the example skill with one clean probe, and four agents of the preset."""
    skill = root / "closeout-review"
    for name in ("SKILL.md", "output-spec.md"):
        (skill / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SKILL / name, skill / name)
    shutil.copytree(SKILL / "evals" / "probes" / PROBE_ID, skill / "evals" / "probes" / PROBE_ID,
                    ignore=shutil.ignore_patterns("transcripts"))
    lines = []
    endpoints = {"main": "{standin}", "refused": "{refusing}", "unreachable": "{unreachable}", "hanging": "{hanging}"}
    timeouts = {"main": MAIN_TIMEOUT, "refused": 60.0, "unreachable": UNREACHABLE_TIMEOUT[preset],
                "hanging": HANG_TIMEOUT[preset]}
    for agent, url in endpoints.items():
        env, args = endpoint_settings(preset, url, with_key=False)
        lines += [f"[agents.{agent}]", f"preset = {json.dumps(preset)}", f"executable = {json.dumps(str(executable))}",
                  f"model = {json.dumps(MODELS[preset])}", f"timeout = {timeouts[agent]}",
                  f"args = {json.dumps(args)}", f"env = {toml_value(env)}", ""]
    (root / "skill-eval.toml").write_text("\n".join(lines), "utf-8")
    return skill


def parse_time(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


class RunnerRuns:
    """What one namespace's ``skill-eval run`` commands left behind."""

    def __init__(self, preset: str, root: Path, work: Path, result: dict) -> None:
        self.preset = preset
        self.root = root
        self.work = work
        self.result = result
        self.runs = root / "closeout-review" / "evals" / "runs"
        self.lines = [json.loads(line) for path in sorted(self.runs.glob("*.jsonl"))
                      for line in path.read_text("utf-8").splitlines()]
        self.records = [record for path in sorted(self.runs.glob("*.jsonl"))
                        for _line, record in parse_runs(path, path.read_bytes()).records]

    def command(self, name: str) -> dict:
        return self.result["commands"][name]

    def records_of(self, agent: str) -> list[dict]:
        return [record for record in self.records if record["agent"] == agent]

    def requests(self, endpoint: str) -> list[dict]:
        return read_log(self.work / f"{endpoint}.jsonl")

    def start_line(self, start_id: str) -> dict:
        return next(line for line in self.lines if line["type"] == "start" and line["start_id"] == start_id)

    def describe(self, name: str) -> str:
        command = self.command(name)
        return (f"{self.preset} {name}: {command['status']} exit {command['exit_code']} in {command['duration']} s\n"
                f"stderr: {command['stderr'][-3000:]}\nrecords: {json.dumps(self.records_of(name))[-3000:]}")


@pytest.fixture(scope="module", params=PRESET_NAMES)
def runner_runs(request, tmp_path_factory) -> RunnerRuns:
    preset = request.param
    executable = require_cli(preset)
    work = tmp_path_factory.mktemp(f"runner-{preset}")
    root = work / "ws"
    workspace(root, preset, executable)
    scratch = work / "scratch"
    scratch.mkdir()
    variable, key = API_KEYS[preset]
    env = dict(base_env(), SKILL_EVAL_SCRATCH=str(scratch), **{variable: key})
    runner = [sys.executable, "-c", "import sys; from skill_eval.cli import main; sys.exit(main())", "run",
              "--no-progress", "--reps", "1"]

    def command(name: str, *extra: str) -> dict:
        return {"name": name, "argv": runner + ["--agent", name, *extra, str(root)], "env": env, "cwd": str(root),
                "timeout": 240}

    spec = {
        "endpoints": {
            "standin": {"log": str(work / "standin.jsonl"),
                        "script": {"answer": ANSWER, "skill_name": "closeout-review", "cached_tokens": CACHED}},
            "refusing": {"log": str(work / "refusing.jsonl"), "script": {"mode": "error", "error_status": 400}},
            "hanging": {"log": str(work / "hanging.jsonl"), "script": {"mode": "hang"}},
            "unreachable": None,
        },
        "fill_files": [str(root / "skill-eval.toml")],
        "phases": [[command("main", "-j", "1")],
                   [command(name, "--arms", "control") for name in FAILURE_AGENTS]],
    }
    result = run_phases(work, spec, outer_timeout=2 * 240 + 60)
    return RunnerRuns(preset, root, work, result)


def test_the_runner_installs_the_skill_for_the_treatment_only_and_records_what_the_harness_did(runner_runs):
    runs = runner_runs
    preset = runs.preset
    assert runs.command("main")["exit_code"] == 0, runs.describe("main")
    records = {record["arm"]: record for record in runs.records_of("main")}
    assert set(records) == {"control", "treatment"} and len(runs.records_of("main")) == 2, runs.describe("main")
    requests = runs.requests("standin")
    model_requests = [request for request in requests if request.get("reported_usage")]
    assert model_requests, runs.describe("main")

    # Which start sent which request: the starts ran one at a time, each within its recorded window.
    sent: dict[str, list[dict]] = {}
    for request in requests:
        owners = [arm for arm, record in records.items()
                  if parse_time(record["started"]) <= request["time"] <= parse_time(record["ended"])]
        assert len(owners) == 1, (request["time"], {arm: (r["started"], r["ended"]) for arm, r in records.items()})
        sent.setdefault(owners[0], []).append(request)
    texts = {arm: [json.dumps(request["body"], ensure_ascii=False) for request in sent.get(arm, [])]
             for arm in records}
    # The real harness showed the skill's own description (and, once the model asked, its body)
    # to the model in the treatment, and neither in the control.
    assert texts["control"] and not any(SKILL_DESCRIPTION in text for text in texts["control"]), runs.describe("main")
    assert not any(SKILL_BODY_LINE in text for text in texts["control"])
    assert SKILL_DESCRIPTION in texts["treatment"][-1] and SKILL_BODY_LINE in texts["treatment"][-1], runs.describe("main")

    # The treatment's start record names the installed copy: where, and its hash over the files on disk.
    treatment_start = runs.start_line(records["treatment"]["start_id"])
    assert treatment_start["preset"] == preset and treatment_start["treatment"] == "install"
    assert treatment_start["installed_skill"] == f"{get_preset(preset).skills_folder}/closeout-review"
    assert treatment_start["installed_skill_sha256"] == reference_tree_hash(runs.root / "closeout-review")
    assert "installed_skill_sha256" not in runs.start_line(records["control"]["start_id"])

    for arm, record in records.items():
        # The stand-in's answer came back through the harness and was graded on the record.
        assert record["status"] == "ok" and record["passed"] is True and record["caught"] == ["D1"], record
        assert (runs.runs / record["answer_file"]).read_text("utf-8").strip() == ANSWER.strip()
        assert (runs.runs / record["output_file"]).stat().st_size > 0
        # Tokens on the record: the sums of what the stand-in reported for this start's model requests.
        reported = [request["reported_usage"] for request in sent[arm] if request.get("reported_usage")]
        assert record["tokens_in"] == sum(usage["input"] for usage in reported), (arm, record, reported)
        assert record["tokens_out"] == sum(usage["output"] for usage in reported), (arm, record, reported)
        assert record["tokens_cached"] == CACHED * len(reported), (arm, record, reported)
        if preset != "codex":
            assert record["turns"] >= len(reported), (arm, record)
        if preset in ("claude-code", "opencode"):
            assert record["cost_usd"] > 0, record
    assert len([r for r in sent["treatment"] if r.get("reported_usage")]) > len(
        [r for r in sent["control"] if r.get("reported_usage")])

    # The API key came from the runner's environment, through the preset's isolation, to the endpoint.
    key = API_KEYS[preset][1]
    assert all(key in json.dumps(request["headers"]) for request in model_requests), model_requests[0]["headers"]
    # No host name was looked up (no telemetry, update check or download), and no scratch folder is left.
    assert runs.result["names"] == [], runs.result["names"]
    assert list((runs.work / "scratch").iterdir()) == []


def test_an_endpoint_that_refuses_the_request_is_an_error_start_with_the_harness_error(runner_runs):
    runs = runner_runs
    (record,) = runs.records_of("refused")
    assert runs.requests("refusing"), runs.describe("refused")
    assert record["status"] == "error", runs.describe("refused")
    # The harness's own message, parsed from its output, beside the exit status.
    assert record["error"].startswith(f"the agent exited with status {record['exit_code']}: "), record["error"]
    assert "stand-in told to fail with 400" in record["error"], record["error"]
    assert runs.command("refused")["exit_code"] == 1


def test_an_unreachable_endpoint_ends_the_start_within_its_timeout(runner_runs):
    runs = runner_runs
    (record,) = runs.records_of("unreachable")
    timeout = UNREACHABLE_TIMEOUT[runs.preset]
    if runs.preset == "opencode":
        assert record["status"] in ("error", "timeout"), runs.describe("unreachable")
    else:
        assert record["status"] == "error", runs.describe("unreachable")
    assert record["duration_s"] <= timeout + KILL_MARGIN, record


def test_a_hanging_endpoint_becomes_a_timeout_start_at_its_timeout(runner_runs):
    runs = runner_runs
    (record,) = runs.records_of("hanging")
    timeout = HANG_TIMEOUT[runs.preset]
    assert record["status"] == "timeout", runs.describe("hanging")
    assert record["error"] == f"no answer within {timeout:g} s; killed"
    assert timeout <= record["duration_s"] <= timeout + KILL_MARGIN, record
    assert any(request["api"] != "other" for request in runs.requests("hanging")), "the harness never reached the stand-in"
    assert "tokens_in" not in record and "cost_usd" not in record  # a killed harness reported no usage
